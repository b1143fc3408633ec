/**
 * A terminal recording (asciicast v2: a JSON header line, then `[seconds, "o", text]` output
 * events) read as plain text with the time each character was printed: terminal control
 * sequences and other non-printing characters removed, `\r\n` as `\n`. Text can be cut further (`without`) and every remaining
 * character keeps its time, so a transcript parsed from the text is timed as it was recorded.
 */

export interface TimedText {
  readonly text: string;
  /** Epoch milliseconds at which each character of `text` was printed. */
  readonly times: readonly number[];
}

/** CSI and OSC sequences, charset and keypad selections: what a terminal interprets, not prints. */
// eslint-disable-next-line no-control-regex -- control characters are what this removes
const CONTROL = /\x1b\[[0-9;?<>=!]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78MDEc]/g;

/** Control characters other than tab, line feed and carriage return (shift-in/out, bell, ...). */
// eslint-disable-next-line no-control-regex -- control characters are what this removes
const NON_PRINTING = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

export function readAsciicast(cast: string): TimedText {
  const lines = cast.split('\n');
  const header = JSON.parse(lines[0] ?? '{}') as { timestamp?: unknown };
  const epoch = typeof header.timestamp === 'number' ? header.timestamp * 1000 : 0;
  let text = '';
  const times: number[] = [];
  for (const line of lines.slice(1)) {
    if (line.trim() === '') continue;
    const event = JSON.parse(line) as unknown;
    if (!Array.isArray(event) || event[1] !== 'o' || typeof event[2] !== 'string' || typeof event[0] !== 'number') continue;
    const at = Math.round(epoch + event[0] * 1000);
    text += event[2];
    for (let i = 0; i < event[2].length; i++) times.push(at);
  }
  return without(without(without({ text, times }, CONTROL), NON_PRINTING), /\r(?=\n)/g);
}

/** The text with every match of `pattern` (a global regex) removed, times kept for the rest. */
export function without(doc: TimedText, pattern: RegExp): TimedText {
  let text = '';
  const times: number[] = [];
  let from = 0;
  const keep = (to: number): void => {
    text += doc.text.slice(from, to);
    for (let i = from; i < to; i++) times.push(doc.times[i] ?? 0);
  };
  for (const m of doc.text.matchAll(pattern)) {
    keep(m.index ?? 0);
    from = (m.index ?? 0) + m[0].length;
  }
  keep(doc.text.length);
  return { text, times };
}
