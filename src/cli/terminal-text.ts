/**
 * Names in trace files are untrusted text headed for a terminal: a tool name holding ESC [2J
 * clears the screen, a CR or LF forges lines, a C1 CSI (U+009B) starts a control sequence on
 * terminals that honour 8-bit controls, and bidirectional overrides reorder what is shown. These
 * are written as visible escapes instead; everything else (any language, emoji) is left alone.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- the same, but a line break stays a line break
const UNSAFE_KEEP_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escape = (c: string): string => {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/** One name or value for a terminal: every control and reordering character escaped. */
export function printable(s: string): string {
  return s.replace(UNSAFE, escape);
}

/** A message of several lines for a terminal: the same, but its own line breaks kept. */
export function printableLines(s: string): string {
  return s.replace(UNSAFE_KEEP_NEWLINE, escape);
}

/**
 * A JSON line for `--json`: JSON.stringify escapes C0 controls but leaves DEL, C1 and the
 * reordering characters raw; written as \u escapes they parse back to the very same string.
 */
export function jsonForTerminal(json: string): string {
  return json.replace(/[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
