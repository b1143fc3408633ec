import type { CorpusRun } from '../run.js';
import { chatRun, type ChatMessage, type ToolOutcome } from './chat-messages.js';

/**
 * LiveMCPBench's MCP Copilot Agent runs (`baseline/output/*.json`: one list of tasks, each with
 * its `messages`). The agent sees two tools of one MCP server: `route` (search some 500 tools of
 * 70 servers) and `execute-tool`, a generic wrapper whose arguments name the real server, tool and
 * parameters. A tool message is the Python text of the MCP `CallToolResult` (`meta=… content=[…]
 * isError=…`), cut at 10 000 characters by the harness; for `execute-tool` its text is the wrapped
 * tool's own result as JSON, with its own `"isError"`. Either flag set is an MCP `isError` result
 * (`tool_error`); the harness writes `Tool call timed out.` for a call it gave up on after 300 s
 * (`TimeoutError`, what it caught) and `Error: …` for a call that raised.
 *
 * A run that raised (the model's API refused or failed) ends with the error as the model's last
 * message: outcome `error`; every other run ends with the model's answer: `answered`.
 */

export interface LiveMcpTask {
  readonly task_id?: unknown;
  readonly category?: unknown;
  readonly response?: unknown;
  readonly messages?: unknown;
}

const OUTER_IS_ERROR = /\bisError=True\s*$/;
const INNER_IS_ERROR = /"isError": true\b/;
const TIMED_OUT = /^Tool call timed out\.$/;
const RAISED = /^Error: /;

const PY_ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"' };

/**
 * The text of the first `TextContent` in the Python text of a `CallToolResult`: the string literal
 * decoded (to the end of the text when the harness cut it before the closing quote).
 */
export function pythonTextContent(repr: string): string | undefined {
  const open = /TextContent\(type='text', text=(['"])/.exec(repr);
  if (!open) return undefined;
  const quote = open[1];
  let out = '';
  for (let i = open.index + open[0].length; i < repr.length; i++) {
    const c = repr[i] as string;
    if (c === quote) return out;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = repr[i + 1] ?? '';
    const hex = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    if (hex > 0 && /^[0-9a-fA-F]+$/.test(repr.slice(i + 2, i + 2 + hex)) && i + 2 + hex <= repr.length) {
      out += String.fromCodePoint(parseInt(repr.slice(i + 2, i + 2 + hex), 16));
      i += 1 + hex;
    } else {
      out += PY_ESCAPES[e] ?? `\\${e}`;
      i += 1;
    }
  }
  return out;
}

/** What a failure said: the wrapped tool's own text for `execute-tool`, else the result's text. */
function failureText(content: string): string {
  const text = pythonTextContent(content);
  if (text === undefined) return content;
  try {
    const inner = JSON.parse(text) as { content?: Array<{ text?: unknown }> };
    if (Array.isArray(inner.content)) return inner.content.map((c) => (typeof c.text === 'string' ? c.text : '')).join('');
  } catch {
    // not the wrapped tool's JSON (a `route` failure, or cut by the harness): the text as it is
  }
  return text;
}

/**
 * A result is recorded as the model read it (the Python text); a failure's message is what the
 * failing tool said, as an MCP client's instrumentation reports it.
 */
export function liveMcpOutcome(_tool: string, content: string): ToolOutcome {
  if (TIMED_OUT.test(content)) return { error: content, errorType: 'TimeoutError' };
  if (RAISED.test(content)) return { error: content };
  if (OUTER_IS_ERROR.test(content) || INNER_IS_ERROR.test(content)) return { error: failureText(content), errorType: 'tool_error' };
  return { result: content };
}

export function liveMcpRuns(tasks: readonly LiveMcpTask[], meta: { source: string; agent: string; model: string; base: number }): CorpusRun[] {
  return tasks.map((task, i) => {
    const id = typeof task.task_id === 'string' ? task.task_id : String(i);
    const category = typeof task.category === 'string' ? `${task.category}/` : '';
    const messages = (Array.isArray(task.messages) ? task.messages : []) as ChatMessage[];
    const outcome = typeof task.response === 'string' && RAISED.test(task.response) ? 'error' : 'answered';
    return chatRun(messages, { id: `${category}${id}`, source: meta.source, agent: meta.agent, model: meta.model, outcome, base: meta.base + i * 86_400_000, outcomeOf: liveMcpOutcome });
  });
}
