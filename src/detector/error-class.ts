import { hashString, type Hash } from '../fingerprint/hash.js';

/** A failure as instrumentations report it: `error.type` / exception type, and a message. */
export interface RawError {
  readonly type?: string;
  readonly message?: string;
}

export interface ErrorClass {
  readonly errorClass: Hash;
  /** Printable class name (`TimeoutError`); absent when only a message was available. */
  readonly errorLabel?: string;
  readonly unknownTool: boolean;
}

const TAG = 0x6e11;
/** Type names that say nothing about the failure: fall back to the message. */
const GENERIC_TYPES = new Set(['error', '_other', 'exception', 'unknown', 'err', 'failure', 'toolerror', 'tool_error']);
const LABEL = /^[A-Za-z_$][\w$.:-]{0,63}$/;

const UNKNOWN_TOOL_TYPE = /no.?such.?tool|unknown.?tool|tool.?not.?found|invalid.?tool.?name|unavailable.?tool|missing.?tool/i;
const UNKNOWN_TOOL_MESSAGE = new RegExp(
  [
    '\\b(?:unknown|unrecognized|unrecognised|unavailable|nonexistent|non-existent|no such)\\s+(?:tool|function)\\b',
    '\\b(?:tool|function)\\s+[\'"`]?[\\w.:/-]{1,128}[\'"`]?\\s+(?:is\\s+)?(?:not found|not available|does not exist|doesn\'t exist|not registered|is unknown)',
    '\\btried to call (?:an )?unavailable tool\\b',
  ].join('|'),
  'i',
);

/** Lower-case, quoted text, ids, paths and numbers removed: "retry after 3s" ≡ "retry after 5s". */
export function normalizeErrorMessage(message: string): string {
  return message
    .slice(0, 500)
    .toLowerCase()
    .replace(/(["'`])(?:(?!\1).){0,200}\1/g, '<q>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{12,}\b/g, '<id>')
    .replace(/(?:[a-z]:)?[\w.~-]*[/\\][\w.~/\\-]*/g, '<path>')
    .replace(/\d+(?:\.\d+)?/g, '#')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 160);
}

export function classifyError(error: RawError): ErrorClass {
  const type = error.type?.trim();
  const message = error.message ?? '';
  const unknownTool = (type !== undefined && UNKNOWN_TOOL_TYPE.test(type)) || UNKNOWN_TOOL_MESSAGE.test(message.slice(0, 500));
  if (type && !GENERIC_TYPES.has(type.toLowerCase())) {
    return {
      errorClass: hashString(type, TAG),
      ...(LABEL.test(type) ? { errorLabel: type } : {}),
      unknownTool,
    };
  }
  return { errorClass: hashString(message ? normalizeErrorMessage(message) : 'error', TAG + 1), unknownTool };
}
