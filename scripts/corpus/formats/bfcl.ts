import type { CorpusCall, CorpusRun, CorpusTurn, TokenUsage } from '../run.js';
import { parsePythonCall } from './python-call.js';

/**
 * BFCL result files (`BFCL_v*_<category>_result.json`, one JSON object a line) of multi-turn
 * categories, read through their `inference_log`: one entry per user turn (`begin_of_turn_query`:
 * the user's message) holding `step_N` lists, one a model call: the model's raw answer, the
 * handler's decoding (`model_response_decoded`: the calls it executed, as Python call text in
 * prompt mode or `{name: args}` objects), then one `tool` message per executed call, in order.
 * A step whose answer could not be decoded, or that decoded to no call, executed nothing: a model
 * turn without tool calls. A tool answer `Error during execution: …` is the executor catching the
 * function's exception (a failed call without error class: BFCL keeps only the message). The
 * harness stops a run after 20 steps in one turn ("forced to quit"): outcome `force_quit`.
 *
 * Token counts and latency are recorded per step (`input_token_count[turn][step]`, `latency`);
 * wall-clock times are not, so times are synthesized from them, monotone: a user message takes
 * one second, a model call its recorded latency, a tool call a few milliseconds.
 */

interface LogMessage {
  readonly role?: unknown;
  readonly content?: unknown;
  readonly reasoning_content?: unknown;
  readonly model_response_decoded?: unknown;
}

export interface BfclEntry {
  readonly id?: unknown;
  readonly inference_log?: unknown;
  readonly input_token_count?: unknown;
  readonly output_token_count?: unknown;
  readonly latency?: unknown;
}

const USER_MESSAGE_MS = 1_000;
const TOOL_CALL_MS = 5;
const EXECUTION_ERROR = /^Error during execution:/;
const FORCED_QUIT = /forced to quit/i;

function text(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  return JSON.stringify(v);
}

/** `values[turn][step]` of one of BFCL's per-step arrays, when it is a number. */
function perStep(values: unknown, turn: number, step: number): number | undefined {
  const row = Array.isArray(values) ? (values[turn] as unknown) : undefined;
  const v = Array.isArray(row) ? (row[step] as unknown) : undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** One decoded call: Python call text (prompt mode) or a `{name: args}` object (function calling). */
function decodedCall(d: unknown): { name: string; args: unknown } | undefined {
  if (typeof d === 'string') {
    const parsed = parsePythonCall(d);
    if (parsed) return parsed;
    const name = /^\s*([\w.]+)\s*\(/.exec(d)?.[1];
    return name ? { name, args: d } : undefined;
  }
  if (typeof d === 'object' && d !== null && !Array.isArray(d)) {
    const [name, args] = Object.entries(d)[0] ?? [];
    if (typeof name !== 'string') return undefined;
    return { name, args: typeof args === 'string' ? (safeJson(args) ?? args) : (args ?? {}) };
  }
  return undefined;
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

export function bfclRun(entry: BfclEntry, meta: { id: string; source: string; agent: string; model: string; base: number }): CorpusRun {
  const log = Array.isArray(entry.inference_log) ? (entry.inference_log as unknown[]) : [];
  const turns: CorpusTurn[] = [];
  let t = meta.base;
  let turnNo = -1;
  let forcedQuit = false;
  for (const item of log) {
    // the log also holds state snapshots (lists); only the user turns are objects
    if (typeof item !== 'object' || item === null || Array.isArray(item) || !('begin_of_turn_query' in item)) continue;
    turnNo++;
    const record = item as Record<string, unknown>;
    const query = Array.isArray(record.begin_of_turn_query) ? (record.begin_of_turn_query as LogMessage[]) : [];
    const said = query.filter((m) => m.role === 'user').map((m) => text(m.content));
    if (said.length > 0) {
      turns.push({ kind: 'user', start: t, end: t + USER_MESSAGE_MS, calls: [], text: said.join('\n') });
      t += USER_MESSAGE_MS;
    }
    const steps = Object.keys(record)
      .filter((k) => /^step_\d+$/.test(k))
      .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
    for (const key of steps) {
      const stepNo = Number(key.slice(5));
      const messages = Array.isArray(record[key]) ? (record[key] as LogMessage[]) : [];
      const answer = messages.find((m) => m.role === 'assistant');
      const decoded = messages.find((m) => m.role === 'handler_log' && Array.isArray(m.model_response_decoded) && m.model_response_decoded.length > 0);
      const results = messages.filter((m) => m.role === 'tool');
      if (messages.some((m) => m.role === 'handler_log' && FORCED_QUIT.test(text(m.content)))) forcedQuit = true;
      const seconds = perStep(entry.latency, turnNo, stepNo) ?? 1;
      const start = t;
      const end = start + Math.max(1, Math.round(seconds * 1000));
      const input = perStep(entry.input_token_count, turnNo, stepNo);
      const output = perStep(entry.output_token_count, turnNo, stepNo);
      const usage: TokenUsage | undefined = input !== undefined && output !== undefined ? { input, output } : undefined;
      const calls: CorpusCall[] = [];
      let last = end;
      ((decoded?.model_response_decoded as unknown[] | undefined) ?? []).forEach((d, k) => {
        const call = decodedCall(d);
        if (!call) return;
        const out = results[k];
        const said = out ? text(out.content) : undefined;
        // the calls of one answer form a batch: they start together and overlap
        const callStart = end + 1;
        const callEnd = callStart + TOOL_CALL_MS + k;
        last = Math.max(last, callEnd);
        calls.push({
          name: call.name,
          arguments: call.args,
          ...(said === undefined ? {} : EXECUTION_ERROR.test(said) ? { error: said, errorType: null } : { result: said }),
          start: callStart,
          end: callEnd,
        });
      });
      const words = [text(answer?.reasoning_content), text(answer?.content)].filter((s) => s !== '').join('\n');
      turns.push({ kind: 'model', start, end, ...(usage ? { usage } : {}), calls, text: words });
      t = last + 1;
    }
  }
  return {
    id: meta.id,
    source: meta.source,
    agent: meta.agent,
    model: meta.model,
    outcome: forcedQuit ? 'force_quit' : 'completed',
    recordedTimes: false,
    turns,
  };
}
