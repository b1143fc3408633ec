import { Char } from './chars.js';
import { isSpace, isWordUnit } from './result-text.js';

/**
 * The operands of a command line: the paths, URLs and file names a shell command acts on
 * (`curl -s https://host/repositories/1001`, `mv "a.c" "b.c"`). A command line is text with
 * spaces, so it is wording to the fingerprint, yet what it acts on is a target as much as a
 * `path` argument is (`Fingerprint.targets`): thirty `mv` commands of thirty files are thirty
 * writes, not one request reworded.
 */

/** Ends a shell word outside quotes: whitespace, and the operators `|`, `;`, `&`, `<`, `>`, `(`, `)`, and a backtick. */
function isBreak(c: number): boolean {
  return (
    isSpace(c) ||
    c === Char.Pipe ||
    c === Char.Semicolon ||
    c === Char.Ampersand ||
    c === Char.LessThan ||
    c === Char.GreaterThan ||
    c === Char.OpenParen ||
    c === Char.CloseParen ||
    c === Char.Backtick
  );
}

/** Does `u[from, to)` name a path, a URL or a file: a `/` or `\`, or a `.` between two letters or digits (`a.c`, `host.org`)? */
function namesTarget(u: Uint16Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = u[i] as number;
    if (c === Char.Slash || c === Char.Backslash) return true;
    if (c === Char.Dot && i > from && i + 1 < to && isWordUnit(u[i - 1] as number) && isWordUnit(u[i + 1] as number)) return true;
  }
  return false;
}

/**
 * Calls `visit(from, to)` for each operand of the command line in `u[start, end)`, in order: each
 * shell word (quotes may hold spaces) that is not an option (`-x`, `--flag`) and names a path, a
 * URL or a file (`namesTarget`); a word that is one quoted string is passed without its quotes.
 */
export function forEachOperand(u: Uint16Array, start: number, end: number, visit: (from: number, to: number) => void): void {
  let i = start;
  while (i < end) {
    while (i < end && isBreak(u[i] as number)) i++;
    if (i >= end) return;
    const from = i;
    let quote = 0;
    for (; i < end; i++) {
      const c = u[i] as number;
      if (quote !== 0) {
        if (c === Char.Backslash && quote === Char.Quote) i++;
        else if (c === quote) quote = 0;
      } else if (c === Char.Quote || c === Char.Apostrophe) {
        quote = c;
      } else if (isBreak(c)) {
        break;
      }
    }
    const to = Math.min(i, end);
    const first = u[from] as number;
    const quoted = to - from >= 2 && (first === Char.Quote || first === Char.Apostrophe) && u[to - 1] === first;
    const a = quoted ? from + 1 : from;
    const b = quoted ? to - 1 : to;
    if (b > a && u[a] !== Char.Minus && namesTarget(u, a, b)) visit(a, b);
  }
}
