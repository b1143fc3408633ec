import type { CorpusCall, CorpusRun, CorpusTurn, TokenUsage } from '../run.js';

/**
 * τ²-bench results files (`{"info", "tasks", "simulations"}`): each simulation is a conversation
 * of assistant, user and tool messages. An assistant message with `tool_calls` is one model turn
 * whose calls form one batch (the tool messages that answer them follow, matched by id). User
 * messages become user turns (their content is not kept); tool calls made by the simulated user
 * (telecom's device tools) are the environment's, not the agent's, and are left out.
 *
 * Message timestamps are used where the file has them (ISO times without a zone, read as UTC);
 * otherwise times are synthesized from the simulation's start, one second per message.
 */

interface Tau2ToolCall {
  readonly id?: unknown;
  readonly name?: unknown;
  readonly arguments?: unknown;
  readonly requestor?: unknown;
}

interface Tau2Message {
  readonly role?: unknown;
  readonly id?: unknown;
  readonly content?: unknown;
  readonly tool_calls?: unknown;
  readonly timestamp?: unknown;
  readonly error?: unknown;
  readonly usage?: unknown;
  readonly requestor?: unknown;
}

export interface Tau2Simulation {
  readonly id?: unknown;
  readonly task_id?: unknown;
  readonly trial?: unknown;
  readonly start_time?: unknown;
  readonly termination_reason?: unknown;
  readonly messages?: unknown;
}

export interface Tau2File {
  readonly info?: { readonly agent_info?: { readonly llm?: unknown; readonly implementation?: unknown } };
  /** Files some leaderboard submitters wrote by hand name the model and agent at the top. */
  readonly model?: unknown;
  readonly agent?: unknown;
  readonly simulations?: readonly Tau2Simulation[];
}

/**
 * A results file as parsed: the harness's `{"info", "tasks", "simulations"}` object, or a bare
 * array of simulations (as some leaderboard submissions are written).
 */
export function asTau2File(parsed: unknown): Tau2File | undefined {
  if (Array.isArray(parsed)) return { simulations: parsed as Tau2Simulation[] };
  return typeof parsed === 'object' && parsed !== null ? (parsed as Tau2File) : undefined;
}

const SYNTHETIC_STEP_MS = 1_000;
const MIN_CALL_MS = 5;

function parseTime(v: unknown): number | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  const iso = /[zZ]|[+-]\d{2}:?\d{2}$/.test(v) ? v : `${v}Z`;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : undefined;
}

function usageOf(v: unknown): TokenUsage | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const u = v as { prompt_tokens?: unknown; completion_tokens?: unknown };
  if (typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return undefined;
  return { input: u.prompt_tokens, output: u.completion_tokens };
}

function contentText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  return JSON.stringify(v);
}

export function tau2Runs(file: Tau2File, meta: { source: string; prefix: string; agent?: string }): CorpusRun[] {
  const llm = file.info?.agent_info?.llm ?? file.model;
  const impl = file.info?.agent_info?.implementation ?? file.agent;
  const model = typeof llm === 'string' ? llm : 'unknown';
  const agent = meta.agent ?? (typeof impl === 'string' ? impl : 'tau2-agent');
  return (file.simulations ?? []).map((sim) => simulationRun(sim, { ...meta, model, agent }));
}

function simulationRun(sim: Tau2Simulation, meta: { source: string; prefix: string; model: string; agent: string }): CorpusRun {
  const messages = (Array.isArray(sim.messages) ? sim.messages : []) as Tau2Message[];
  const recordedTimes = messages.length > 0 && messages.every((m) => parseTime(m.timestamp) !== undefined);
  const base = parseTime(sim.start_time) ?? Date.parse('2025-01-01T00:00:00Z');

  const turns: CorpusTurn[] = [];
  let cursor = base;
  let synthetic = base;
  const timeOf = (m: Tau2Message): number => {
    synthetic += SYNTHETIC_STEP_MS;
    const t = recordedTimes ? (parseTime(m.timestamp) ?? synthetic) : synthetic;
    return Math.max(t, cursor);
  };
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Tau2Message;
    if (m.role === 'user') {
      const t = timeOf(m);
      turns.push({ kind: 'user', start: cursor, end: t, calls: [], text: contentText(m.content) });
      cursor = t;
      continue;
    }
    if (m.role !== 'assistant') continue;
    const t = timeOf(m);
    const requested = (Array.isArray(m.tool_calls) ? m.tool_calls : []) as Tau2ToolCall[];
    // the tool messages right after this one answer its calls: by id when ids are unique
    // (some agents reuse one id for every call of a tool), else in order
    const answers: Tau2Message[] = [];
    for (let j = i + 1; j < messages.length && (messages[j] as Tau2Message).role === 'tool'; j++) answers.push(messages[j] as Tau2Message);
    const ids = requested.map((tc) => tc.id);
    const uniqueIds = ids.every((x, k) => typeof x === 'string' && ids.indexOf(x) === k);
    const calls: CorpusCall[] = [];
    let end = t;
    requested.forEach((tc, k) => {
      if (typeof tc.name !== 'string') return;
      const answer = uniqueIds ? (answers.find((a) => a.id === tc.id) ?? answers[k]) : answers[k];
      const answered = answer ? (recordedTimes ? parseTime(answer.timestamp) : undefined) : undefined;
      // every call of a batch starts with the turn's end and lasts a little longer than the one
      // before it, so the calls of one turn overlap as parallel calls do
      const start = t + 1;
      const callEnd = Math.max(answered ?? 0, start + MIN_CALL_MS + k);
      end = Math.max(end, callEnd);
      const text = answer ? contentText(answer.content) : undefined;
      calls.push({
        name: tc.name,
        arguments: tc.arguments ?? {},
        ...(text !== undefined && answer?.error !== true ? { result: text } : {}),
        ...(answer?.error === true ? { error: text ?? 'error' } : {}),
        ...(typeof tc.id === 'string' ? { id: tc.id } : {}),
        start,
        end: callEnd,
      });
    });
    const usage = usageOf(m.usage);
    turns.push({ kind: 'model', start: cursor, end: t, ...(usage ? { usage } : {}), calls, text: contentText(m.content) });
    cursor = end + 1;
  }
  const task = typeof sim.task_id === 'string' || typeof sim.task_id === 'number' ? String(sim.task_id) : '?';
  const trial = typeof sim.trial === 'number' ? sim.trial : 0;
  return {
    id: `${meta.prefix}${task}/${trial}`,
    source: meta.source,
    agent: meta.agent,
    model: meta.model,
    outcome: typeof sim.termination_reason === 'string' ? sim.termination_reason : 'unknown',
    recordedTimes,
    turns,
  };
}
