import type { CorpusRun } from '../run.js';
import { chatRun, contentText, type ChatMessage, type ToolOutcome } from './chat-messages.js';

/**
 * τ-bench (the first version, `sierra-research/tau-bench`) result files: a JSON array of
 * `{task_id, reward, info, traj, trial}`, where `traj` is the whole conversation in the OpenAI
 * chat shape (the policy as system message, the simulated user's messages, the agent's messages
 * with `tool_calls`, `tool` messages answering them by `tool_call_id`), read by the chat-messages
 * converter. The environment answers a tool that raised with `Error: …` (the exception's message,
 * no class) and a tool it does not know with `Unknown action …`: both are failures without an
 * error class.
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

export function tauBenchOutcome(_tool: string, content: string): ToolOutcome {
  return FAILED.test(content) ? { error: content, errorType: null } : { result: content };
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
  const messages = (Array.isArray(entry.traj) ? entry.traj : []) as ChatMessage[];
  const outcome = endedBy(messages) === undefined ? 'max_steps' : entry.reward === 1 ? 'pass' : 'fail';
  return chatRun(messages, { ...meta, outcome, outcomeOf: tauBenchOutcome });
}
