import { MAX_USER_MESSAGES_READ } from '../detector/user-message.js';
import type { SpanView } from './types.js';

/**
 * What the user said, as a model call's input records it. A re-check the user asked for is no loop,
 * so the engine hears every user message (see `TraceDetector.userMessage`); the dialects record
 * them in a few shapes, read here:
 * - a list of chat messages, as JSON text or structured (`gen_ai.input.messages`, AI SDK
 *   `ai.prompt.messages`, Langfuse and LangSmith inputs): `{ role: 'user', content | parts }`,
 *   content as text, text parts (`{ type: 'text', text | content }`) or LangChain's
 *   `{ type: 'human', data: { content } }`; a list may also sit in a `messages` member;
 * - flattened, one attribute per field (OpenInference `llm.input_messages.0.message.role`,
 *   Traceloop `gen_ai.prompt.0.role`).
 * Only text is read (an image is not compared), and only the newest `MAX_USER_MESSAGES_READ`
 * user messages of one input: a model call's input may hold the whole conversation again.
 */

const USER_ROLES = new Set(['user', 'human']);
/** Longest input read as JSON text (a conversation with tool output in it can be large). */
const MAX_JSON_INPUT = 1 << 20;
/** Messages of one input looked at, from the newest. */
const MAX_MESSAGES_SCANNED = 256;

/** The user messages' text in a list of chat messages (JSON text or structured), oldest first. */
export function userTextsOf(value: unknown): string[] | undefined {
  const messages = messageList(value);
  if (messages === undefined) return undefined;
  const out: string[] = [];
  for (let i = messages.length - 1; i >= Math.max(0, messages.length - MAX_MESSAGES_SCANNED) && out.length < MAX_USER_MESSAGES_READ; i--) {
    const text = userText(messages[i]);
    if (text !== undefined) out.push(text);
  }
  return out.length > 0 ? out.reverse() : undefined;
}

/**
 * A reader of the user messages of a flattened list: `{prefix}.{i}{roleKey}` and
 * `{prefix}.{i}{contentKey}`, `i` from 0 while a role is there (`gen_ai.prompt.0.role`,
 * `gen_ai.prompt.0.content`). Most spans have none: the first key is made once, not per span.
 */
export function indexedUserMessages(prefix: string, roleKey: string, contentKey: string): (span: SpanView) => string[] | undefined {
  const firstRole = firstIndexedKey(prefix, roleKey);
  return (span) => (span.attributes[firstRole] === undefined ? undefined : indexedUserTexts(span, prefix, roleKey, contentKey));
}

/** The key of the first role of a flattened list (`gen_ai.prompt.0.role`): a span without it has none (see `indexedUserMessages`). */
export function firstIndexedKey(prefix: string, roleKey: string): string {
  return `${prefix}.0${roleKey}`;
}

function indexedUserTexts(span: SpanView, prefix: string, roleKey: string, contentKey: string): string[] | undefined {
  const attrs = span.attributes;
  const found: string[] = [];
  for (let i = 0; i < MAX_MESSAGES_SCANNED; i++) {
    const role = attrs[`${prefix}.${i}${roleKey}`];
    if (role === undefined) break;
    const content = attrs[`${prefix}.${i}${contentKey}`];
    if (typeof role === 'string' && USER_ROLES.has(role.toLowerCase()) && typeof content === 'string' && content.trim().length > 0) found.push(content);
  }
  return found.length > 0 ? found.slice(-MAX_USER_MESSAGES_READ) : undefined;
}

function messageList(value: unknown): readonly unknown[] | undefined {
  let v = value;
  if (typeof v === 'string') {
    if (v.length > MAX_JSON_INPUT) return undefined;
    const first = v.trimStart()[0];
    if (first !== '[' && first !== '{') return undefined;
    try {
      v = JSON.parse(v) as unknown;
    } catch {
      return undefined;
    }
  }
  if (Array.isArray(v)) return v;
  if (typeof v === 'object' && v !== null) {
    const messages = (v as { messages?: unknown }).messages;
    if (Array.isArray(messages)) return messages;
  }
  return undefined;
}

function userText(m: unknown): string | undefined {
  if (typeof m !== 'object' || m === null) return undefined;
  const message = m as { role?: unknown; type?: unknown; content?: unknown; parts?: unknown; data?: unknown };
  const role = typeof message.role === 'string' ? message.role : typeof message.type === 'string' ? message.type : undefined;
  if (role === undefined || !USER_ROLES.has(role.toLowerCase())) return undefined;
  const data = typeof message.data === 'object' && message.data !== null ? (message.data as { content?: unknown }) : undefined;
  const text = textOf(message.content ?? message.parts ?? data?.content);
  return text !== undefined && text.trim().length > 0 ? text : undefined;
}

/** Text content: a string, or the text of a list of parts (`{ type: 'text', text | content }`). */
function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') texts.push(part);
    else if (typeof part === 'object' && part !== null) {
      const p = part as { type?: unknown; text?: unknown; content?: unknown };
      if (p.type !== undefined && p.type !== 'text') continue;
      const t = typeof p.text === 'string' ? p.text : typeof p.content === 'string' ? p.content : undefined;
      if (t !== undefined) texts.push(t);
    }
  }
  return texts.length > 0 ? texts.join('\n') : undefined;
}
