import type { CorpusRun } from '../run.js';
import { chatRun, type ChatMessage, type ToolOutcome } from './chat-messages.js';

/**
 * OpenHands' completion log of a run's last model call (`{messages, response, fncall_messages,
 * fncall_response, timestamp, cost}`), as its SWE-bench evaluations publish one per instance: the
 * last call's prompt holds the whole conversation in the OpenAI function-calling shape (system,
 * the task as a user message, assistant `tool_calls`, `tool` answers; OpenHands' own nudges as
 * user messages), and its response the agent's last action, which no tool answered. A run whose
 * last action is `finish` ended by the agent's choice (`finish`); any other last action means the
 * controller stopped the agent at its iteration limit (`max_iterations`).
 *
 * What a tool answer means:
 * - `execute_bash` appends `[The command completed with exit code N.]`: non-zero is a failed
 *   call without an error class, its output the message, as a shell tool's instrumentation
 *   records it. A command still running when the tool returned (`[The command has no new output
 *   after N seconds. You may wait longer …]`, `timed out … You may wait longer`) has no exit code
 *   yet: its output so far is a result (the agent may send an empty command to read more). A
 *   command refused because the previous one is still running (`[Your command … is NOT
 *   executed …]`) failed, without a class.
 * - `str_replace_editor` answers a refused edit or view with `ERROR:` and the reason: failed,
 *   without a class.
 */

export interface OpenHandsCompletionLog {
  readonly fncall_messages?: unknown;
  readonly fncall_response?: { readonly choices?: ReadonlyArray<{ readonly message?: unknown }> };
}

const EXIT_CODE = /exit code (-?\d+)/g;
const NOT_EXECUTED = /^\[Your command .* is NOT executed\./m;
const EDITOR_ERROR = /^ERROR:/;

export function openHandsOutcome(tool: string, content: string): ToolOutcome {
  if (tool === 'execute_bash') {
    const codes = [...content.matchAll(EXIT_CODE)];
    const last = codes.at(-1)?.[1];
    if (last !== undefined) return Number(last) === 0 ? { result: content } : { error: content, errorType: null };
    if (NOT_EXECUTED.test(content)) return { error: content, errorType: null };
    return { result: content };
  }
  if (EDITOR_ERROR.test(content)) return { error: content, errorType: null };
  return { result: content };
}

function lastAction(log: OpenHandsCompletionLog): ChatMessage | undefined {
  const message = log.fncall_response?.choices?.[0]?.message;
  return typeof message === 'object' && message !== null ? (message as ChatMessage) : undefined;
}

function toolNames(m: ChatMessage | undefined): string[] {
  const calls = Array.isArray(m?.tool_calls) ? (m.tool_calls as Array<{ function?: { name?: unknown } }>) : [];
  return calls.map((c) => c.function?.name).filter((n): n is string => typeof n === 'string');
}

export function openHandsRun(log: OpenHandsCompletionLog, meta: { id: string; source: string; agent: string; model: string; base: number }): CorpusRun {
  const history = (Array.isArray(log.fncall_messages) ? log.fncall_messages : []) as ChatMessage[];
  const last = lastAction(log);
  const messages = last ? [...history, { ...last, role: 'assistant' }] : history;
  const outcome = toolNames(last).includes('finish') ? 'finish' : 'max_iterations';
  return chatRun(messages, { ...meta, outcome, outcomeOf: openHandsOutcome });
}
