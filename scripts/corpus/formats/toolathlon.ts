import type { CorpusRun } from '../run.js';
import { chatRun, type ChatMessage, type ToolOutcome } from './chat-messages.js';

/**
 * Toolathlon trajectories as its authors publish them for replay (`trajs/<model>_<task>.json`:
 * `{pass, failure, messages}`): an agent on the OpenAI Agents SDK driving real MCP servers
 * (filesystem, GitHub, Notion, Canvas, Google Sheets, BigQuery, Snowflake, Playwright, a terminal,
 * ...) and a few local tools (`local-python-execute`, `local-claim_done`). A tool message holds the
 * MCP content items as JSON (one item, or a list); the `isError` flag itself is not kept, so a
 * failure is read from what the servers and the harness write when a call fails:
 *
 * - a command (`terminal-run_command`, `local-python-execute`) that exited non-zero or timed out:
 *   failed without an error class, its output the message;
 * - a result whose text starts as the MCP SDKs' and these servers' error results do (`Error
 *   executing tool …`, `Error: …`, `failed to …`, `MCP error …`) or whose only item carries
 *   `"error": true` (the terminal server's refusals): `tool_error`, the MCP conventions' class
 *   for an `isError` result;
 * - `Error running tool …`, the harness's own report of a call that raised, and `Tool … not found
 *   in agent …`, its answer to a tool the agent does not have: failed, class unknown.
 *
 * `failure` holds the checker's output, or `Task status: <status>` for a run the harness ended (a
 * turn limit: `max_turns_reached`): that status is the outcome, else `pass` / `fail`.
 */

export interface ToolathlonFile {
  readonly pass?: unknown;
  readonly failure?: unknown;
  readonly messages?: unknown;
}

interface ContentItem {
  readonly type?: unknown;
  readonly text?: unknown;
  readonly error?: unknown;
}

const MCP_ERROR_TEXT = /^\s*(?:Error\b|ERROR\b|error:|Failed to |failed to |MCP error\b)/;
const HARNESS_ERROR = /^(?:Error running tool |Tool \S+ not found in agent )/;
const TERMINAL_EXIT = /Command completed with return code: (-?\d+)/;
const PYTHON_EXIT = /=== EXECUTION INFO ===\s*Return code: (-?\d+)/;
const PYTHON_TIMEOUT = /^=== EXECUTION TIMEOUT ===/;
const TASK_STATUS = /^Task status: (\w+)/;

function itemsOf(content: string): ContentItem[] | undefined {
  if (!/^\s*[[{]/.test(content)) return undefined;
  try {
    const v = JSON.parse(content) as unknown;
    const items = Array.isArray(v) ? v : [v];
    return items.every((i) => typeof i === 'object' && i !== null && 'type' in i) ? (items as ContentItem[]) : undefined;
  } catch {
    return undefined;
  }
}

export function toolathlonOutcome(_tool: string, content: string): ToolOutcome {
  const items = itemsOf(content);
  const text = items ? items.map((i) => (typeof i.text === 'string' ? i.text : '')).join('') : content;
  const exit = TERMINAL_EXIT.exec(content) ?? PYTHON_EXIT.exec(content);
  if (exit) return Number(exit[1]) === 0 ? { result: content } : { error: text, errorType: null };
  if (PYTHON_TIMEOUT.test(content)) return { error: text, errorType: null };
  if (HARNESS_ERROR.test(text)) return { error: text };
  if (MCP_ERROR_TEXT.test(text) || (items?.length === 1 && items[0]?.error === true)) return { error: text, errorType: 'tool_error' };
  return { result: content };
}

function outcomeOf(file: ToolathlonFile): string {
  const status = typeof file.failure === 'string' ? TASK_STATUS.exec(file.failure)?.[1] : undefined;
  if (status) return status;
  return file.pass === true ? 'pass' : file.pass === false ? 'fail' : 'unknown';
}

/** One trajectory file; `name` is its file name, `<model>_<task>.json`. */
export function toolathlonRun(file: ToolathlonFile, meta: { name: string; source: string; agent: string; base: number }): CorpusRun {
  const stem = meta.name.replace(/\.json$/, '');
  const cut = stem.indexOf('_');
  const model = cut > 0 ? stem.slice(0, cut) : 'unknown';
  const task = cut > 0 ? stem.slice(cut + 1) : stem;
  const messages = (Array.isArray(file.messages) ? file.messages : []) as ChatMessage[];
  return chatRun(messages, { id: `${model}/${task}`, source: meta.source, agent: meta.agent, model, outcome: outcomeOf(file), base: meta.base, outcomeOf: toolathlonOutcome });
}

/**
 * A run log of the Toolathlon harness itself (`log.json`, as its authors recorded runs while
 * building the benchmark): the same conversation under `messages`, and the harness's `status`
 * (`success`: the agent finished; `failed`: the harness ended the run) as the outcome; the
 * checker's verdict is not in it.
 */
export interface ToolathlonLog {
  readonly status?: unknown;
  readonly messages?: unknown;
}

export function toolathlonLogRun(log: ToolathlonLog, meta: { id: string; model: string; source: string; agent: string; base: number }): CorpusRun {
  const messages = (Array.isArray(log.messages) ? log.messages : []) as ChatMessage[];
  const outcome = typeof log.status === 'string' ? log.status : 'unknown';
  return chatRun(messages, { ...meta, outcome, outcomeOf: toolathlonOutcome });
}
