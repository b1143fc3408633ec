import { createHmac } from 'node:crypto';
import { normalizeKey } from '../../src/fingerprint/volatile.js';
import { DEFAULT_VOLATILE_ARGUMENT_KEYS, DEFAULT_VOLATILE_RESULT_KEYS, FIGURE_LABEL_WORDS, isAcknowledgementRange, isStatusWord } from '../../src/fingerprint/volatile.js';

/**
 * Shape-preserving pseudonyms for the strings of one run, so that the committed corpus holds the
 * structure of real runs and none of their text, while detection sees what it saw on the
 * original:
 *
 * - one value, one pseudonym within a run (a map per run; different runs get unrelated maps);
 *   two different values never share one (collisions are re-drawn), so equality is exact;
 * - a token keeps its length, case and character classes: digits stay digits, hex letters stay
 *   hex letters (uuids, git shas and hex ids keep their shape), other letters stay non-hex
 *   letters; so every pattern the fingerprints look for (ids, epochs, ULIDs) matches the
 *   pseudonym exactly when it matched the original;
 * - whitespace, punctuation, paths' separators, quotes and JSON structure are kept; text holding
 *   JSON is rewritten as JSON of the same structure; member names that read as schema field
 *   names are kept (see `key`), other member names are pseudonymized like values;
 * - kept as they are, because detection reads them and they carry no private content: ISO dates,
 *   date-times, times of day and durations (detection compares timestamps with the call's own
 *   time), numbers of at most three digits (counts, exit and status codes), years and epoch
 *   numbers within a day of the run, single letters `a`-`z`, markup tag names (`<returncode>`, wherever
 *   the run's texts use them), status words (`ok`, `done`, `true`, `available`, ...; see
 *   `isStatusWord`), the words of acknowledgements and shell envelopes (`Exit code: 0`, `File
 *   written`; see `isAcknowledgementRange`) and the small vocabulary of error words the error
 *   classifier reads (`error`, `not found`, `unknown tool`, ...), and the words of the labels of
 *   a call's execution figures (`Bytes processed`, `slot ms`, `Execution time`; see
 *   `FIGURE_LABEL_WORDS`); words in other letters (Chinese,
 *   Cyrillic, ...) are never kept for reading as generic: detection reads only `a`-`z` and digits;
 * - in a shell command (`command` / `cmd` arguments) the program word of each pipeline segment
 *   (`grep`, `sed`, `python`) is kept.
 *
 * Pseudonyms are drawn from an HMAC of the token under a local secret key, never stored in the
 * repository: without it a pseudonym cannot be tested against guessed originals.
 */

/** Words kept as they are, lowercase: what the error classifier and status checks read. */
const KEEP_WORDS = new Set([
  // error vocabulary (error-class.ts reads unknown-tool phrases; messages are compared lowercased)
  'error', 'errors', 'exception', 'failed', 'fail', 'failure', 'not', 'found', 'unknown', 'unrecognized',
  'unrecognised', 'unavailable', 'nonexistent', 'non', 'existent', 'such', 'tool', 'function', 'does',
  'doesn', 'exist', 'exists', 'registered', 'is', 'tried', 'to', 'call', 'an', 'invalid', 'missing',
  'denied', 'permission', 'timeout', 'timed', 'out', 'traceback', 'warning', 'available',
  // volatile-value vocabulary (durations and process ids are found by these words)
  'pid', 'ms', 'us', 'ns', 'sec', 'secs', 'second', 'seconds', 'millisecond', 'milliseconds',
  // ... and a call's execution figures by their labels (`Bytes processed: 32480`; kept everywhere,
  // so that a word keeps one spelling and the words' classes stay those of the original)
  ...FIGURE_LABEL_WORDS,
  // JSON-ish literals
  'nan', 'inf', 'infinity',
]);

const HEX = 'abcdef';
const ILOU = 'ilou';
const OTHER = 'ghjkmnpqrstvwxyz';
/** Cased letters beyond ASCII become small Latin (with diacritics), Greek or Cyrillic letters... */
const ACCENTED = [
  [0xdf, 0x250],
  [0x3b1, 0x3ca],
  [0x430, 0x460],
  [0x1e00, 0x1f00],
]
  .flatMap(([from, to]) => [...Array((to as number) - (from as number)).keys()].map((i) => String.fromCharCode((from as number) + i)))
  .filter((c) => /\p{Ll}/u.test(c) && c.toUpperCase() !== c && [...c.toUpperCase()].length === 1)
  .join('');
/** ...uncased letters (Han, kana, Hangul, ...) Han characters: a word of one character is common there. */
const HAN = [...Array(0x9fa0 - 0x4e00).keys()].map((i) => String.fromCharCode(0x4e00 + i)).join('');
const DIGITS = '0123456789';

/**
 * A word of the acknowledgements the fingerprint reads as saying nothing (`Exit code: 0`, `File
 * written`): kept, so that an acknowledgement stays one and informative text stays informative.
 */
function isAcknowledgementWord(t: string): boolean {
  const u = Uint16Array.from(t, (c) => c.charCodeAt(0));
  return isAcknowledgementRange(u, 0, u.length);
}

/**
 * A letter other than `A`–`Z`, `a`–`z` (Chinese, accented, Cyrillic, ...). Status words and
 * acknowledgements are read through their ASCII letters and digits only, so a word of such letters
 * reads as one whatever it says: it is not kept for that, and a pseudonym of the same letters
 * reads the same.
 */
const OTHER_LETTER = /[^\P{L}A-Za-z]/u;

/** Does detection read the word as generic (a status word or an acknowledgement's word)? */
function readsGeneric(t: string): boolean {
  return isStatusWord(t) || isAcknowledgementWord(t);
}

const VOLATILE_KEYS = new Set([...DEFAULT_VOLATILE_ARGUMENT_KEYS, ...DEFAULT_VOLATILE_RESULT_KEYS].map(normalizeKey));

/**
 * Spans kept verbatim: ISO date-times (found anywhere, as the fingerprints find them, even glued
 * to a preceding id), dates, times of day and durations. Searched first over the whole text, so a
 * token never swallows the start of one.
 */
const PROTECTED =
  /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b|\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|s|secs?|seconds?|milliseconds?)\b/g;

/** Runs of letters and digits; everything else (space, punctuation) is copied. */
const TOKEN = /[\p{L}\p{N}]+/gu;

/** The token `s[start, end)` names a markup tag: `<name>`, `</name>`, `<name attr…>`, `<name/>`. */
function isTagName(s: string, start: number, end: number): boolean {
  const before = s.slice(Math.max(0, start - 2), start);
  const after = s.slice(end, end + 1) || '>';
  return (before.endsWith('<') || before === '</') && /^[>\s/]/.test(after);
}

/** The markup tag names (lowercase) of some texts: the words a run keeps wherever they stand. */
export function markupNames(texts: Iterable<string>): Set<string> {
  const names = new Set<string>();
  for (const s of texts) {
    if (!s.includes('<')) continue;
    TOKEN.lastIndex = 0;
    for (let m = TOKEN.exec(s); m !== null; m = TOKEN.exec(s)) {
      // a name in other letters is text in angle brackets (`<中华人民共和国民法典>`), not markup
      if (isTagName(s, m.index, m.index + m[0].length) && !OTHER_LETTER.test(m[0])) names.add(m[0].toLowerCase());
    }
  }
  return names;
}

const SCHEMA_NAME = /^(?:[a-z][a-z0-9]*(?:[_.-][a-z0-9]+)*|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+)$/;

/** Separators of the segments of a command line whose first words are programs. */
const SHELL_SEPARATOR = /(\|\||&&|[|;&])/;
/** A program word: a plain command name (`grep`, `python3`, `str_replace_editor`), nothing with dots or quotes. */
const PROGRAM = /^[A-Za-z][A-Za-z0-9_+-]{0,31}$/;

export interface PseudonymizerOptions {
  /** Secret key (see `pseudonymKey`). */
  readonly key: Buffer;
  /** Run id: salts every pseudonym, so runs do not share pseudonyms. */
  readonly runId: string;
  /** Epoch milliseconds of the run: epoch numbers this close are times and kept. */
  readonly from: number;
  readonly to: number;
  /**
   * The run's markup tag names, lowercase (`markupNames` of all its texts): kept as words too,
   * wherever they stand, so that `html` in `<html>` and in `fetch_html` stays one word.
   */
  readonly markupNames?: ReadonlySet<string>;
}

const DAY_MS = 86_400_000;

export class RunPseudonymizer {
  /** Lowercase token → lowercase pseudonym. */
  private readonly tokens = new Map<string, string>();
  private readonly used = new Set<string>();

  constructor(private readonly options: PseudonymizerOptions) {}

  /** A JSON value (parsed arguments, results): strings, keys and numbers pseudonymized, structure kept. */
  value(v: unknown, key?: string): unknown {
    if (typeof v === 'string') return key !== undefined && /^(command|cmd)$/i.test(key) ? this.shell(v) : this.text(v);
    if (typeof v === 'number') return this.number(v);
    if (Array.isArray(v)) return v.map((x) => this.value(x));
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[this.key(k)] = this.value(x, k);
      return out;
    }
    return v;
  }

  /**
   * A member name. Names that read as schema fields (`path`, `command`, `view_range`,
   * `reservationId`: lowercase snake_case or camelCase words without long digit runs) are kept:
   * rules and anchors read them (salient fields, pagination offsets, volatile names) and they
   * name an API, not its data. Other names (`credit_card_4421486`, `Action Camera`: ids and
   * data used as keys) are pseudonymized.
   */
  key(k: string): string {
    if (VOLATILE_KEYS.has(normalizeKey(k)) || (SCHEMA_NAME.test(k) && !/\d{3}/.test(k))) return k;
    const p = this.text(k);
    // a pseudonym that happened to spell a volatile name would be dropped by detection
    if (VOLATILE_KEYS.has(normalizeKey(p))) throw new Error('a pseudonymized member name spells a volatile key name');
    return p;
  }

  /** Text: JSON text keeps its structure; other text is rewritten token by token. */
  text(s: string): string {
    const trimmed = s.trim();
    const first = trimmed[0];
    const last = trimmed[trimmed.length - 1];
    if ((first === '{' && last === '}') || (first === '[' && last === ']')) {
      let parsed: unknown;
      let ok = true;
      try {
        parsed = JSON.parse(trimmed);
      } catch {
        ok = false;
      }
      if (ok) {
        const lead = s.slice(0, s.indexOf(trimmed));
        const tail = s.slice(s.indexOf(trimmed) + trimmed.length);
        const body = JSON.stringify(this.value(parsed), null, trimmed.includes('\n') ? 2 : undefined);
        return `${lead}${body}${tail}`;
      }
    }
    // a text made only of status words ("no-op", "in progress") stays: detection reads it as generic
    if (s.length <= 48 && !OTHER_LETTER.test(s) && isStatusWord(s.replace(/\s+/g, ' ').trim())) return s;
    return this.tokens_(s);
  }

  /**
   * A shell command: the program word of each segment of its first line is kept, the rest is
   * text. Later lines are a script's or a here-document's body (code, file contents), whose first
   * words are not programs and are pseudonymized like any text.
   */
  shell(s: string): string {
    const newline = s.indexOf('\n');
    const first = newline < 0 ? s : s.slice(0, newline);
    const body = newline < 0 ? '' : this.tokens_(s.slice(newline));
    const parts = first.split(SHELL_SEPARATOR);
    return parts
      .map((part, i) => {
        if (i % 2 === 1) return part; // a separator
        const m = /^(\s*)([^\s]+)([\s\S]*)$/.exec(part);
        if (!m) return part;
        const [, space = '', word = '', rest = ''] = m;
        return PROGRAM.test(word) ? `${space}${word}${this.tokens_(rest)}` : this.tokens_(part);
      })
      .join('') + body;
  }

  private tokens_(s: string): string {
    let out = '';
    let at = 0;
    PROTECTED.lastIndex = 0;
    for (let m = PROTECTED.exec(s); m !== null; m = PROTECTED.exec(s)) {
      out += this.segment(s, at, m.index) + m[0];
      at = m.index + m[0].length;
      if (m[0].length === 0) PROTECTED.lastIndex++;
    }
    return out + this.segment(s, at, s.length);
  }

  /** `s[from, to)`, free of protected spans: each token pseudonymized, markup tag names kept. */
  private segment(s: string, from: number, to: number): string {
    const part = s.slice(from, to);
    let out = '';
    let at = 0;
    TOKEN.lastIndex = 0;
    for (let m = TOKEN.exec(part); m !== null; m = TOKEN.exec(part)) {
      out += part.slice(at, m.index);
      at = m.index + m[0].length;
      out += isTagName(s, from + m.index, from + at) && !OTHER_LETTER.test(m[0]) ? m[0] : this.token(m[0]);
    }
    return out + part.slice(at);
  }

  /**
   * One run of letters and digits. Its letters (all of them, in order) are pseudonymized as one
   * word and each digit run as a number, then put back in place: `RF12345` and `RF12346` keep
   * the same letters, as error classes compare messages with their digits removed.
   */
  token(t: string): string {
    if (/^\d+$/.test(t)) return this.digits(t);
    const parts = t.split(/(\d+)/);
    const letters = [...this.word(parts.filter((_, i) => i % 2 === 0).join(''), parts.length > 1)];
    let k = 0;
    return parts
      .map((part, i) => {
        if (i % 2 === 1) return this.digits(part);
        const n = [...part].length;
        const out = letters.slice(k, k + n).join('');
        k += n;
        return out;
      })
      .join('');
  }

  /**
   * Letters only: kept when generic (status and error words, single letters), else a pseudonym
   * of the same length and case. `ofId`: the letters of a token that also has digits (an id);
   * their one or two letters, or three hex letters, are kept (fragments that say nothing, in
   * classes too small to draw from). A word of fewer than eight letters with a letter beyond
   * `a`–`f` may take any letters: no id pattern the fingerprints look for (uuid groups, hex ids,
   * ULIDs) can match it; other words keep their classes.
   */
  private word(t: string, ofId: boolean): string {
    // letter by letter: a letter whose small form is two characters (`İ`) stays as it is here
    const lower = [...t].map((c) => (c.toLowerCase().length === c.length ? c.toLowerCase() : c)).join('');
    const n = [...t].length;
    const generic = readsGeneric(t);
    const other = OTHER_LETTER.test(t);
    if ((n <= 1 && !other) || KEEP_WORDS.has(lower) || (generic && !other) || this.options.markupNames?.has(lower)) return t;
    if (ofId && !other && (n <= 2 || (n === 3 && /^[a-f]+$/.test(lower)))) return t;
    const broad = !ofId && n < 8 && /[^a-f]/.test(lower);
    const key = `${broad ? 'w' : 's'}\0${lower}`;
    let p = this.tokens.get(key);
    if (p === undefined) {
      // a broad word's pseudonym keeps a letter beyond `a`–`f`: an all-hex one could be the
      // pseudonym of an all-hex word of the other kind, and two different texts would read alike
      // a generic word with other letters keeps its a-z letters, which are all detection reads of it
      const classes = generic ? (c: string): string => (c >= 'a' && c <= 'z' ? c : classOf(c)) : broad ? broadClassOf : classOf;
      // never a word the run keeps as it is (a tag name: `md` drawn as `th` would read as `<th>`'s word)
      const kept = (c: string): boolean => KEEP_WORDS.has(c) || (this.options.markupNames?.has(c) ?? false);
      p = this.draw(key, lower, classes, (c) => !kept(c) && readsGeneric(c) === generic && (!broad || /[^a-f]/.test(c)));
      this.tokens.set(key, p);
    }
    return applyCase(t, p);
  }

  /**
   * Kept numbers: a ten- or thirteen-digit number within a day of the run (a time), and a
   * four-digit year from 1900 to 2099 (dates keep theirs: `2026` alone and in `2026-03-15` stay
   * one word).
   */
  private isKeptNumber(t: string): boolean {
    return this.isRunEpoch(t) || /^(?:19|20)\d\d$/.test(t);
  }

  private isRunEpoch(t: string): boolean {
    if (t.length !== 10 && t.length !== 13) return false;
    const ms = t.length === 10 ? Number(t) * 1000 : Number(t);
    return ms >= this.options.from - DAY_MS && ms <= this.options.to + DAY_MS;
  }

  private digits(t: string): string {
    if (t.length <= 3 || this.isKeptNumber(t)) return t;
    const key = `d\0${t}`;
    let p = this.tokens.get(key);
    if (p === undefined) {
      // never the spelling of a kept number
      p = this.draw(key, t, numberClassOf(t), (c) => !this.isKeptNumber(c));
      this.tokens.set(key, p);
    }
    return p;
  }

  /** A JSON number: its digit runs as in text, so an integer stays an integer of as many digits. */
  number(n: number): number {
    if (!Number.isFinite(n)) return n;
    const s = String(n);
    if (/e/i.test(s)) return n;
    const out = s.replace(/\d+/g, (d) => this.digits(d));
    const v = Number(out);
    return Number.isFinite(v) ? v : n;
  }

  /**
   * A pseudonym for `token` (the map key `key` names its kind): each character drawn from its
   * class (`classes(c)` for character `c`, or one alphabet per position), until an unused and
   * acceptable one comes up; a pseudonym is never shared within its kind. When a small class is
   * nearly full, the class is walked in order from a drawn start.
   */
  private draw(key: string, token: string, classes: ((c: string) => string) | readonly string[], ok: (candidate: string) => boolean): string {
    const kind = key.slice(0, 2);
    const alphabets = Array.isArray(classes) ? classes : [...token].map(classes as (c: string) => string);
    const fits = (c: string): boolean => c !== token && !this.used.has(kind + c) && ok(c);
    const take = (c: string): string => {
      this.used.add(kind + c);
      return c;
    };
    for (let attempt = 0; attempt < 32; attempt++) {
      const bytes = this.stream(token, attempt, alphabets.length);
      const c = alphabets.map((a, i) => a[(bytes[i] as number) % a.length]).join('');
      if (fits(c)) return take(c);
    }
    const size = alphabets.reduce((n, a) => n * a.length, 1);
    const start = this.stream(token, 99, 4).reduce((n, b) => n * 256 + b, 0) % size;
    for (let k = 0; k < Math.min(size, 1 << 20); k++) {
      let i = (start + k) % size;
      let c = '';
      for (const a of alphabets) {
        c += a[i % a.length];
        i = Math.floor(i / a.length);
      }
      // a class can be full but for the token itself (every two-letter hex word in one run)
      if (fits(c) || (c === token && !this.used.has(kind + c) && ok(c))) return take(c);
    }
    throw new Error(`no free pseudonym for a ${token.length}-character token (${JSON.stringify(token)}, U+${(token.codePointAt(0) ?? 0).toString(16)})`);
  }

  private stream(token: string, attempt: number, length: number): Uint8Array {
    const out = new Uint8Array(length);
    let filled = 0;
    for (let block = 0; filled < length; block++) {
      const h = createHmac('sha256', this.options.key).update(`${this.options.runId}\0${token}\0${attempt}\0${block}`).digest();
      for (let i = 0; i < h.length && filled < length; i++) out[filled++] = h[i] as number;
    }
    return out;
  }
}

/**
 * The characters a (lowercase) character may be replaced by: digits by digits, hex letters by
 * hex letters, `i l o u` among themselves (ULIDs exclude them), other ASCII letters by other
 * non-hex letters, uncased letters (Han, kana, Hangul, ...) by Han characters, other letters by
 * accented letters; anything else stays.
 */
function classOf(c: string): string {
  if (c >= '0' && c <= '9') return DIGITS;
  if (HEX.includes(c)) return HEX;
  if (ILOU.includes(c)) return ILOU;
  if (c >= 'a' && c <= 'z') return OTHER;
  if (!/\p{L}/u.test(c)) return c;
  // uncased letters (Han, kana, Hangul, Arabic, ...) often make a word of one: a large class
  return c.toUpperCase() === c ? HAN : ACCENTED;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** For a short word no id pattern can match: any letter for a letter. */
function broadClassOf(c: string): string {
  if (c >= 'a' && c <= 'z') return LETTERS;
  return classOf(c);
}

/**
 * Per position, the digits a number's digits may become: a leading zero stays a zero (a code, not
 * a quantity), a ten- or thirteen-digit number keeps whether it starts with 1 (an epoch's shape),
 * other leading digits stay non-zero.
 */
function numberClassOf(t: string): string[] {
  const epochShaped = t.length === 10 || t.length === 13;
  return [...t].map((d, i) => {
    if (i > 0) return DIGITS;
    if (d === '0') return '0';
    if (epochShaped) return d === '1' ? '1' : '23456789';
    return '123456789';
  });
}

/** The pseudonym (lowercase) with the original's case, character by character. */
function applyCase(original: string, lower: string): string {
  const o = [...original];
  const p = [...lower];
  return p.map((c, i) => {
    const x = o[i] ?? '';
    return x !== x.toLowerCase() ? c.toUpperCase() : c;
  }).join('');
}
