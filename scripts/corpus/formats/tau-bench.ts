import type { CorpusCall, CorpusRun } from '../run.js';
import { chatRun, contentText, type ChatMessage, type ToolOutcome } from './chat-messages.js';
import { parsePythonLiteral } from './python-call.js';

/**
 * τ-bench (the first version, `sierra-research/tau-bench`) result files: a JSON array of
 * `{task_id, reward, info, traj, trial}`, where `traj` is the whole conversation in the OpenAI
 * chat shape (the policy as system message, the simulated user's messages, the agent's messages
 * with `tool_calls`, `tool` messages answering them by `tool_call_id`), read by the chat-messages
 * converter. The environment answers a tool that raised with `Error: …` (the exception's message,
 * no class) and a tool it does not know with `Unknown action …`: both are failures without an
 * error class.
 *
 * Agents built on it do not all write the OpenAI shape exactly: some leave out the call ids (a
 * `tool` message then answers the calls of the assistant message before it, in order) and some
 * write the arguments as a Python dict's `repr` (`{'order_id': '#W1'}`), read here as the JSON
 * object it is.
 *
 * The harness ends a run when the user simulator says `###STOP###` or the agent transfers the
 * user to a human (`transfer_to_human_agents`); the reward is then the outcome (`pass` for 1,
 * else `fail`). A run that ended otherwise stopped at the harness's step limit (`max_steps`).
 */

export interface TauBenchResult {
  readonly task_id?: unknown;
  readonly reward?: unknown;
  readonly trial?: unknown;
  readonly traj?: unknown;
}

const FAILED = /^(?:Error:|Unknown action\b)/;
const USER_STOP = /###STOP###/;
const TRANSFER = 'transfer_to_human_agents';
/** Pairs a call without an id with its answer; not written (the source recorded no id). */
const UNRECORDED_ID = '\0unrecorded-';

export function tauBenchOutcome(_tool: string, content: string): ToolOutcome {
  return FAILED.test(content) ? { error: content, errorType: null } : { result: content };
}

interface ToolCall {
  readonly id?: unknown;
  readonly function?: { readonly name?: unknown; readonly arguments?: unknown };
}

function jsonArguments(args: unknown): unknown {
  if (typeof args !== 'string' || !/^\s*\{\s*'/.test(args)) return args;
  const parsed = parsePythonLiteral(args);
  return parsed ? JSON.stringify(parsed.value) : args;
}

/** The conversation in the OpenAI shape: every call with an id its answer names, arguments as JSON text. */
function normalized(messages: readonly ChatMessage[]): ChatMessage[] {
  const pending: string[] = [];
  let n = 0;
  return messages.map((m) => {
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
      pending.length = 0;
      const calls = (m.tool_calls as ToolCall[]).map((c) => {
        const id = typeof c.id === 'string' ? c.id : `${UNRECORDED_ID}${++n}`;
        pending.push(id);
        return { ...c, id, function: { ...c.function, arguments: jsonArguments(c.function?.arguments) } };
      });
      return { ...m, tool_calls: calls };
    }
    if (m.role === 'tool' && typeof m.tool_call_id !== 'string') {
      const id = pending.shift();
      return id === undefined ? m : { ...m, tool_call_id: id };
    }
    return m;
  });
}

function endedBy(messages: readonly ChatMessage[]): 'user' | 'transfer' | undefined {
  const last = [...messages].reverse().find((m) => m.role === 'user' || m.role === 'assistant');
  if (last?.role === 'user' && USER_STOP.test(contentText(last.content))) return 'user';
  const transferred = messages.some(
    (m) => m.role === 'assistant' && Array.isArray(m.tool_calls) && (m.tool_calls as Array<{ function?: { name?: unknown } }>).some((c) => c.function?.name === TRANSFER),
  );
  return transferred ? 'transfer' : undefined;
}

export function tauBenchRun(entry: TauBenchResult, meta: { id: string; source: string; agent: string; model: string; base: number }): CorpusRun {
  const messages = normalized((Array.isArray(entry.traj) ? entry.traj : []) as ChatMessage[]);
  const outcome = endedBy(messages) === undefined ? 'max_steps' : entry.reward === 1 ? 'pass' : 'fail';
  const run = chatRun(messages, { ...meta, outcome, outcomeOf: tauBenchOutcome });
  const recorded = (c: CorpusCall): CorpusCall => {
    if (c.id === undefined || !c.id.startsWith(UNRECORDED_ID)) return c;
    const { id: _unrecorded, ...rest } = c;
    return rest;
  };
  return { ...run, turns: run.turns.map((t) => ({ ...t, calls: t.calls.map(recorded) })) };
}
