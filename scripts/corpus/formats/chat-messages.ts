import type { CorpusCall, CorpusRun, CorpusTurn } from '../run.js';

/**
 * A conversation in the OpenAI chat-completions shape (`user`, `assistant` with `tool_calls`,
 * `tool` answering a call by `tool_call_id`), as MCP benchmark harnesses save it. Each assistant
 * message is one model turn; the calls it asks for form one parallel batch; user messages are user
 * turns (their text kept). What a tool message means (a result, or a failure and of which class)
 * is the format's to say: each harness records failures its own way.
 *
 * These files hold no times: they are synthesized, monotone (a model call lasts `MODEL_CALL_MS`,
 * the calls of a batch start together when it ends and last about a second, a user message a
 * second), so rules that read idle time see none.
 */

export interface ChatMessage {
  readonly role?: unknown;
  readonly content?: unknown;
  readonly tool_calls?: unknown;
  readonly tool_call_id?: unknown;
}

interface ChatToolCall {
  readonly id?: unknown;
  readonly function?: { readonly name?: unknown; readonly arguments?: unknown };
}

/** What a tool message says about its call: a result, or a failure (its text and class). */
export type ToolOutcome =
  | { readonly result: string }
  | { readonly error: string; readonly errorType?: string | null };

export interface ChatRunMeta {
  readonly id: string;
  readonly source: string;
  readonly agent: string;
  readonly model: string;
  readonly outcome: string;
  /** Epoch ms of the run's first message. */
  readonly base: number;
  /** Reads the tool message that answered a call of `tool`. */
  readonly outcomeOf: (tool: string, content: string) => ToolOutcome;
}

export const MODEL_CALL_MS = 3_000;
const CALL_MS = 1_000;
const USER_MS = 1_000;

/** Message content as text: strings as they are, content parts joined, anything else as JSON. */
export function contentText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (Array.isArray(v) && v.every((p) => typeof p === 'object' && p !== null && typeof (p as { text?: unknown }).text === 'string')) {
    return v.map((p) => (p as { text: string }).text).join('');
  }
  return JSON.stringify(v);
}

/** Arguments as the model wrote them: parsed when they are JSON, else the raw text. */
function argumentsOf(v: unknown): unknown {
  if (typeof v !== 'string') return v ?? {};
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

export function chatRun(messages: readonly ChatMessage[], meta: ChatRunMeta): CorpusRun {
  const answers = new Map<string, ChatMessage>();
  for (const m of messages) if (m.role === 'tool' && typeof m.tool_call_id === 'string') answers.set(m.tool_call_id, m);
  const turns: CorpusTurn[] = [];
  let t = meta.base;
  for (const m of messages) {
    if (m.role === 'user') {
      turns.push({ kind: 'user', start: t, end: t + USER_MS, calls: [], text: contentText(m.content) });
      t += USER_MS;
      continue;
    }
    if (m.role !== 'assistant') continue;
    const start = t;
    t += MODEL_CALL_MS;
    const calls: CorpusCall[] = [];
    let end = t;
    const requested = (Array.isArray(m.tool_calls) ? m.tool_calls : []) as ChatToolCall[];
    requested.forEach((tc, k) => {
      const name = tc.function?.name;
      if (typeof name !== 'string') return;
      const id = typeof tc.id === 'string' ? tc.id : undefined;
      const answer = id !== undefined ? answers.get(id) : undefined;
      // the calls of one turn start together and overlap, as parallel calls do
      const callStart = t + 1;
      const callEnd = callStart + CALL_MS + k;
      end = Math.max(end, callEnd);
      const outcome = answer ? meta.outcomeOf(name, contentText(answer.content)) : undefined;
      calls.push({
        name,
        arguments: argumentsOf(tc.function?.arguments),
        ...(outcome && 'result' in outcome ? { result: outcome.result } : {}),
        ...(outcome && 'error' in outcome ? { error: outcome.error, ...(outcome.errorType !== undefined ? { errorType: outcome.errorType } : {}) } : {}),
        ...(id !== undefined ? { id } : {}),
        start: callStart,
        end: callEnd,
      });
    });
    turns.push({ kind: 'model', start, end: t, calls, text: contentText(m.content) });
    t = end + 1;
  }
  return { id: meta.id, source: meta.source, agent: meta.agent, model: meta.model, outcome: meta.outcome, recordedTimes: false, turns };
}
