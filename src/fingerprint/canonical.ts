import { Char } from './chars.js';
import { JsonTextHasher, OK, UNSUPPORTED } from './json-text.js';
import { chainA, chainB, digest, finish, member, number, text, textOf, HashSum, type LanePair } from './lanes.js';
import { pack, seedA, seedB, type Hash } from './hash.js';
import { Cap, Note, Tag, L_CYCLE, L_FALSE, L_NULL, L_TRUE, L_TRUNCATED, L_VOLATILE } from './tags.js';
import { hasWordUnit, isSpace, ResultText } from './result-text.js';
import { WordingSketch } from './wording.js';
import { forEachOperand } from './command-line.js';
import { UnitBuffers, type Units } from './units.js';
import {
  isNowTimestampNumber,
  isNowTimestampRange,
  isAcknowledgementRange,
  isStatusWordRange,
  normalizeKey,
  resultTextPattern,
  volatileKeyMatcher,
  type Side,
  type VolatileKeyMatcher,
} from './volatile.js';

export { MAX_DEPTH, MAX_JSON_TEXT, MAX_NODES, NOTE_CYCLE, NOTE_DEPTH, NOTE_HUGE_TEXT, NOTE_MALFORMED_JSON, NOTE_NODES } from './tags.js';

/**
 * Structural fingerprints of tool arguments and results. The hash is defined on the value, not on
 * a serialisation: object members combine order-independently, so key order and JSON whitespace
 * cannot matter, and no canonical string is ever built (a 1 MB argument costs one pass, not a
 * second 1 MB string). A string holding JSON hashes like the structure it holds, so SDK 3.x
 * structured attributes and 2.x JSON-string attributes of the same call are equal. JSON text is
 * hashed as it is read (`json-text.ts`), never parsed into objects; strings are read as code units
 * (`units.ts`); the lane arithmetic is in `lanes.ts`.
 */

export interface FingerprintOptions {
  readonly side: Side;
  /** Normalised (see `normalizeKey`) member names whose values are ignored. */
  readonly volatileKeys: ReadonlySet<string>;
  /** Start time of the call (epoch ms): in arguments, timestamps this close to it are "now". */
  readonly now?: number;
}

export interface Fingerprint {
  readonly hash: Hash;
  /**
   * Non-zero when some leaf carries information: a number, or text other than status words ("ok",
   * "done") and acknowledgements, after volatile values are removed (text leaves are counted until
   * the first informs; numbers always). Zero means a generic result such as `{"status":"ok"}`,
   * which is no evidence that two different calls achieved the same thing.
   */
  readonly informative: number;
  /** What was unusual about the value (cut at a cap, cyclic, not JSON): `NOTE_*` bits. */
  readonly notes: number;
  /**
   * Arguments only: the action a generic tool was asked to run, from the top-level members that
   * name one (`tool_name`, `server_name`, `action`, `method`, `command`, ... with a value without
   * whitespace: `execute_tool {server_name, tool_name, params}`, an editor's `command: view`);
   * undefined when there is none. Such a tool is as many tools as it runs actions: a call's
   * identity for the rules that compare different calls of one tool is its name and its action.
   */
  readonly action: Hash | undefined;
  /**
   * Arguments only: a sketch of the words of its text (`wording.ts`), to tell one request reworded
   * from different content; undefined when it has no words.
   */
  readonly wording: number | undefined;
  /**
   * Arguments only: how long their wording is (code units of their text with spaces; 0 without).
   * A request cut shorter after an answer is the agent acting on that answer (`sameResult`).
   */
  readonly wordingLength: number;
  /**
   * Arguments only: the hash of the call's targets, the values that name what it acts on (an id,
   * a path, a URL, a record key, a number: a string without whitespace, or a number), in any
   * order; undefined when it has none. Wording (text with spaces: a query, a message, a command)
   * is not a target, but the operands of a top-level command line are (its paths, URLs and
   * files: `command-line.ts`). A result's identity includes its call's targets (`buildToolCall`): a
   * successful write to another record is other work, whatever the confirmation says.
   */
  readonly targets: Hash | undefined;
  /**
   * Results only: the value is an object whose top-level `error` member holds text (`{"error":
   * "Key name must be unique"}`): an answer that says the call failed, though the span did not.
   */
  readonly saysError: boolean;
}

const PLACEHOLDER = 0x1;

/** Longest argument string that can be a target (an id, a path, a URL); longer text is content. */
const MAX_TARGET_LENGTH = 512;
/** Salts the digest of a call's targets, and of its action. */
const TARGETS_TAG = 0x7a;
const ACTION_TAG = 0x7b;

/**
 * Top-level argument names whose value names the action of a generic tool (normalised: see
 * `normalizeKey`). A command line (with spaces) is wording, not an action: only values without
 * whitespace count.
 */
const ACTION_KEYS = volatileKeyMatcher(
  new Set(['tool', 'toolname', 'action', 'actionname', 'server', 'servername', 'method', 'operation', 'op', 'function', 'functionname', 'command', 'endpoint'].map(normalizeKey)),
);

/** Top-level result names whose text says the call failed (`Fingerprint.saysError`). */
const ERROR_KEYS = volatileKeyMatcher(new Set(['error'].map(normalizeKey)));

/** Top-level argument names whose text is a command line: its operands are targets (`command-line.ts`). */
const COMMAND_KEYS = volatileKeyMatcher(new Set(['command', 'cmd', 'commandline'].map(normalizeKey)));

/**
 * Walks one value. Every method leaves the node's hash in `ha`/`hb` (see `lanes.ts`); the
 * JSON-text hasher calls back into the leaf methods, so both paths share one definition of
 * every leaf. Walkers are pooled (`fingerprint` below), their buffers reused (bench/NOTES.md,
 * agent mix).
 */
export class Walker implements LanePair {
  ha = 0;
  hb = 0;
  nodes = 0;
  informative = 0;
  notes = 0;
  private readonly path = new Set<object>();
  private keys!: VolatileKeyMatcher;
  private arguments = false;
  private now: number | undefined;
  /** Code-unit arrays and JSON-text hashers by nesting level (JSON in a string in JSON text). */
  readonly units = new UnitBuffers();
  /** For the rare result text that needs the volatile-value pattern: the value alone, as units. */
  private readonly patternUnits = new UnitBuffers();
  private readonly json: JsonTextHasher[] = [];
  /** The next free nesting level. */
  level = 0;
  /** Result text in progress (see `resultText`). */
  private readonly text = new ResultText();
  /** Arguments: the targets met so far (see `Fingerprint.targets`). */
  readonly targets = new HashSum();
  /** Arguments: the words met so far (see `Fingerprint.wording`). */
  readonly wording = new WordingSketch();
  /** Arguments: the action members met so far (see `Fingerprint.action`). */
  readonly action = new HashSum();
  /** The last string leaf of the arguments was a target (a value without whitespace). */
  private lastStringTarget = false;
  /** Results: a top-level `error` member held text (see `Fingerprint.saysError`). */
  saysError = false;
  /** Results: the member being read is a top-level `error` (`ERROR_KEYS`). */
  private errorMember = false;
  /** The last string leaf held text (after trimming). */
  private lastStringText = false;
  /** The next string leaf is the value of a top-level command line (`COMMAND_KEYS`). */
  private commandLine = false;
  /** The units of the command line being read, for `addOperand`. */
  private operandUnits: Units | undefined;
  /** Adds the operand in `operandUnits[from, to)` to the targets (`forEachOperand`'s visitor, made once). */
  private readonly addOperand = (from: number, to: number): void => {
    text(this, Tag.String, this.operandUnits as Units, from, to);
    this.targets.add(this.ha, this.hb);
  };

  /** Drops references to the caller's objects (after an exception the path may still hold some). */
  release(): void {
    if (this.path.size > 0) this.path.clear();
  }

  reset(options: FingerprintOptions): void {
    this.keys = volatileKeyMatcher(options.volatileKeys);
    this.arguments = options.side === 'arguments';
    this.now = options.now;
    this.nodes = 0;
    this.informative = 0;
    this.notes = 0;
    this.level = 0;
    this.control = false;
    this.commandLine = false;
    this.saysError = false;
    this.errorMember = false;
    this.targets.clear();
    this.action.clear();
    this.wording.clear();
    this.release();
  }

  private set(c: LanePair): void {
    this.ha = c.ha;
    this.hb = c.hb;
  }

  value(v: unknown, depth: number): void {
    if (++this.nodes > Cap.Nodes) {
      this.notes |= Note.Nodes;
      this.set(L_TRUNCATED);
      return;
    }
    switch (typeof v) {
      case 'string':
        this.string(v, depth);
        return;
      case 'number':
        this.numberLeaf(v);
        return;
      case 'boolean':
        this.set(v ? L_TRUE : L_FALSE);
        return;
      case 'bigint':
        this.informative++;
        textOf(this, Tag.BigInt, v.toString());
        return;
      case 'undefined':
        this.set(L_NULL);
        return;
      case 'object':
        if (v === null) this.set(L_NULL);
        else this.object(v, depth);
        return;
      default:
        // functions and symbols carry no comparable content
        textOf(this, Tag.Other, typeof v);
    }
  }

  /** A string value: read as code units at a free level, then hashed like a string in JSON text. */
  private string(s: string, depth: number): void {
    const level = this.level++;
    try {
      this.stringLeaf(this.units.encode(s, level), s, 0, s.length, depth);
    } finally {
      this.level = level;
    }
  }

  /**
   * Set when a string leaf held a control character (below U+0020). Inside JSON text that makes
   * the text invalid, as `JSON.parse` would say; the JSON-text hasher checks it after each leaf.
   */
  control = false;

  numberLeaf(n: number): void {
    if (this.arguments && isNowTimestampNumber(n, this.now)) {
      this.set(L_VOLATILE);
      return;
    }
    this.informative++;
    number(this, Tag.Number, n);
    if (this.arguments) this.targets.add(this.ha, this.hb);
  }

  /**
   * Is the top-level member name in `units[start, end)` one whose string value `actionMember`
   * must see after it is read: in arguments an action (`ACTION_KEYS`), in a result `error`?
   */
  isActionKey(units: Units, s: string, start: number, end: number, ka: number, kb: number, depth: number): boolean {
    if (depth !== 0) return false;
    if (!this.arguments) {
      this.errorMember = ERROR_KEYS.has(units.u16, s, start, end, ka, kb);
      return this.errorMember;
    }
    this.lastStringTarget = false;
    this.commandLine = COMMAND_KEYS.has(units.u16, s, start, end, ka, kb);
    return ACTION_KEYS.has(units.u16, s, start, end, ka, kb);
  }

  actionMember(): void {
    if (this.errorMember) {
      this.errorMember = false;
      if (this.lastStringText) this.saysError = true;
      return;
    }
    if (this.lastStringTarget) this.action.add(this.ha, this.hb);
  }

  /** Is the member name in `units[start, end)` (and `s[start, end)`) volatile, its member left out? */
  isVolatileKey(units: Units, s: string, start: number, end: number, ka: number, kb: number): boolean {
    return this.keys.has(units.u16, s, start, end, ka, kb);
  }

  /**
   * A string value held in `units[from, to)` (the same text as `raw[from, to)`): JSON text hashes
   * as its structure, other text by side.
   */
  stringLeaf(units: Units, raw: string, from: number, to: number, depth: number): void {
    const u = units.u16;
    const commandLine = this.commandLine;
    this.commandLine = false;
    let start = from;
    let end = to;
    let c = 0;
    while (start < end && isSpace((c = u[start] as number))) {
      if (c < Char.Space) this.control = true;
      start++;
    }
    while (end > start && isSpace((c = u[end - 1] as number))) {
      if (c < Char.Space) this.control = true;
      end--;
    }
    this.lastStringText = end > start;
    if (end > start) {
      const first = u[start] as number;
      const last = u[end - 1] as number;
      if ((first === Char.OpenBrace && last === Char.CloseBrace) || (first === Char.OpenBracket && last === Char.CloseBracket)) {
        if (end - start <= Cap.JsonText) {
          if (this.jsonText(units, raw, start, end, depth)) return;
          // Only the whole value is worth a warning: a string inside it that merely has braces
          // at both ends (a template "{name}", a pattern) is text, and was never meant as JSON.
          if (depth === 0) this.notes |= Note.MalformedJson;
        } else {
          this.notes |= Note.HugeText;
        }
      }
    }
    if (this.arguments) {
      // An ISO date-time cannot hold a control character: the early return skips no check.
      if (isNowTimestampRange(u, raw, start, end, this.now)) {
        this.set(L_VOLATILE);
        return;
      }
      if (this.informative === 0 && !isStatusWordRange(u, start, end)) this.informative++;
      if (text(this, Tag.String, units, start, end)) this.control = true;
      // a token (no space) is a target; text with spaces is wording
      const spaced = firstSpace(u, start, end) < end;
      this.lastStringTarget = !spaced && end > start && end - start <= MAX_TARGET_LENGTH;
      if (this.lastStringTarget) this.targets.add(this.ha, this.hb);
      else if (spaced) {
        this.wording.addText(u, start, end);
        if (commandLine) this.commandOperands(units, start, end);
      }
      return;
    }
    this.resultText(units, raw, start, end);
  }

  /** The operands of the command line in `units[start, end)` join the targets; the leaf's own hash is kept. */
  private commandOperands(units: Units, start: number, end: number): void {
    const ha = this.ha;
    const hb = this.hb;
    this.operandUnits = units;
    forEachOperand(units.u16, start, end, this.addOperand);
    this.operandUnits = undefined;
    this.ha = ha;
    this.hb = hb;
  }

  /**
   * JSON text in `u[start, end)`, hashed as the value it holds; false when it is not JSON. The
   * rare inputs the text hasher leaves aside are parsed and walked, which gives the same hash.
   */
  private jsonText(units: Units, s: string, start: number, end: number, depth: number): boolean {
    const nodes = this.nodes;
    const informative = this.informative;
    const notes = this.notes;
    const t = this.targets;
    const targetA = t.sa;
    const targetB = t.sb;
    const targetCount = t.n;
    const act = this.action;
    const actionA = act.sa;
    const actionB = act.sb;
    const actionCount = act.n;
    const level = this.level;
    const hasher = (this.json[level] ??= new JsonTextHasher(this));
    let status: number;
    this.level = level + 1;
    try {
      status = hasher.hash(units, s, start, end, depth);
    } finally {
      this.level = level;
    }
    if (status === OK) return true;
    // Nothing of a failed attempt counts: the value is hashed again another way.
    this.nodes = nodes;
    this.informative = informative;
    this.notes = notes;
    t.restore(targetA, targetB, targetCount);
    act.restore(actionA, actionB, actionCount);
    if (status === UNSUPPORTED) {
      const parsed = tryParseJson(start === 0 && end === s.length ? s : s.slice(start, end));
      if (parsed !== undefined) {
        this.value(parsed.value, depth);
        return true;
      }
    }
    return false;
  }

  /**
   * Result text: whitespace runs collapse to one space, volatile values (ids, times, durations;
   * see `volatile.ts`) become one placeholder. The collapsed text is hashed like any text, over
   * alternating lanes, without being built. One pass does it all for text that cannot hold a
   * volatile value (most text); text that may is read again around the pattern's matches.
   */
  private resultText(units: Units, s: string, start: number, end: number): void {
    const u = units.u16;
    const t = this.text;
    t.start();
    t.feed(u, start, end);
    if (t.control) this.control = true;
    /** Whether the text holds a word character outside its volatile values: asked only while no leaf informs. */
    let words: boolean | undefined;
    if (t.digit && t.mayHoldVolatile) {
      // The pattern runs on the value alone, never past it into the rest of a larger text.
      t.start();
      const sub = start === 0 && end === s.length ? s : s.slice(start, end);
      words = this.feedWithPattern(sub === s ? u : this.patternUnits.encode(sub, 0).u16, sub, 0, sub.length);
    }
    if (t.control) this.control = true;
    // Only whether some leaf informs matters (see `Fingerprint.informative`): once one does, the
    // word checks of the others are skipped (bench/NOTES.md, agent mix, with the in-place word
    // comparison of `isStatusWordRange`).
    if (this.informative === 0 && (words ?? hasWordUnit(u, start, end)) && !isStatusWordRange(u, start, end) && !isAcknowledgementRange(u, start, end)) this.informative++;
    t.finish();
    this.ha = t.ha;
    this.hb = t.hb;
  }

  /** Feeds `u[start, end)` with the pattern's matches as placeholders; whether the rest held a word character. */
  private feedWithPattern(u: Uint16Array, s: string, start: number, end: number): boolean {
    const t = this.text;
    const pattern = resultTextPattern();
    pattern.lastIndex = start;
    let at = start;
    let words = false;
    for (let m = pattern.exec(s); m !== null && m.index < end; m = pattern.exec(s)) {
      t.feed(u, at, m.index);
      words ||= hasWordUnit(u, at, m.index);
      t.unit(PLACEHOLDER);
      at = Math.min(m.index + m[0].length, end);
      // a \s in a duration or pid may be a tab or newline: a control character all the same
      for (let k = m.index; k < at; k++) if ((u[k] as number) < Char.Space) this.control = true;
      if (m[0].length === 0) pattern.lastIndex++;
    }
    t.feed(u, at, end);
    return words || hasWordUnit(u, at, end);
  }

  private object(o: object, depth: number): void {
    if (depth >= Cap.Depth) {
      this.notes |= Note.Depth;
      this.set(L_TRUNCATED);
      return;
    }
    if (this.path.has(o)) {
      this.notes |= Note.Cycle;
      this.set(L_CYCLE);
      return;
    }
    if (o instanceof Uint8Array) {
      if (o.length > 0) this.informative++;
      let a = seedA(Tag.Bytes);
      let b = seedB(Tag.Bytes);
      const step = Math.max(1, Math.floor(o.length / 65536));
      for (let i = 0; i < o.length; i += step) {
        a = chainA(a, o[i] ?? 0);
        b = chainB(b, o[i] ?? 0);
      }
      finish(this, a ^ o.length, b);
      return;
    }
    if (o instanceof Date) {
      if (this.arguments) this.numberLeaf(o.getTime());
      else this.set(L_VOLATILE);
      return;
    }
    this.path.add(o);
    try {
      if (Array.isArray(o)) this.array(o, depth);
      else if (o instanceof Map) this.mapMembers(o, depth);
      else if (o instanceof Set) this.setMembers(o, depth);
      else this.recordMembers(o as Record<string, unknown>, depth);
    } finally {
      this.path.delete(o);
    }
  }

  private array(items: readonly unknown[], depth: number): void {
    let a = seedA(Tag.Array);
    let b = seedB(Tag.Array);
    const n = items.length;
    for (let i = 0; i < n; i++) {
      this.value(items[i], depth + 1);
      a = chainA(a, this.ha);
      b = chainB(b, this.hb);
      if (this.nodes > Cap.Nodes) break;
    }
    finish(this, a ^ n, b);
  }

  // Members in any order: the sum of their hashes (`digest`). A volatile member is left out
  // entirely: `{q}` and `{q, request_id}` are the same request.
  private recordMembers(record: Record<string, unknown>, depth: number): void {
    let sa = 0;
    let sb = 0;
    let n = 0;
    for (const key of Object.keys(record)) {
      if (!this.member(key, record[key], depth)) continue;
      sa = (sa + this.ha) | 0;
      sb = (sb + this.hb) | 0;
      n++;
    }
    digest(this, sa, sb, n, Tag.Object);
  }

  private mapMembers(map: ReadonlyMap<unknown, unknown>, depth: number): void {
    let sa = 0;
    let sb = 0;
    let n = 0;
    for (const [k, v] of map) {
      if (!this.member(String(k), v, depth)) continue;
      sa = (sa + this.ha) | 0;
      sb = (sb + this.hb) | 0;
      n++;
    }
    digest(this, sa, sb, n, Tag.Object);
  }

  /** The member hash of (key, v) in `ha`/`hb`; false when the key is volatile. */
  private member(key: string, v: unknown, depth: number): boolean {
    const units = this.units.encode(key, this.level);
    text(this, Tag.Key, units, 0, key.length);
    const ka = this.ha;
    const kb = this.hb;
    if (this.keys.has(units.u16, key, 0, key.length, ka, kb)) return false;
    const action = typeof v === 'string' && this.isActionKey(units, key, 0, key.length, ka, kb, depth);
    this.value(v, depth + 1);
    member(this, ka, kb, this.ha, this.hb);
    if (action) this.actionMember();
    return true;
  }

  private setMembers(items: ReadonlySet<unknown>, depth: number): void {
    let sa = 0;
    let sb = 0;
    let n = 0;
    for (const v of items) {
      this.value(v, depth + 1);
      finish(this, this.ha, this.hb);
      sa = (sa + this.ha) | 0;
      sb = (sb + this.hb) | 0;
      n++;
    }
    digest(this, sa, sb, n, Tag.Set);
  }
}

/** Index of the first space, tab or line break in `u[start, end)` (`end` when there is none). */
function firstSpace(u: Uint16Array, start: number, end: number): number {
  let i = start;
  while (i < end && (u[i] as number) > Char.Space) i++;
  return i;
}

function tryParseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** Idle walkers: a fingerprint borrows one (nested calls borrow another) and gives it back. */
const idle: Walker[] = [];

/** Fingerprint of one tool argument or result value: a string (JSON or not) or a structured value. */
export function fingerprint(value: unknown, options: FingerprintOptions): Fingerprint {
  const walker = idle.pop() ?? new Walker();
  try {
    walker.reset(options);
    walker.value(value, 0);
    finish(walker, walker.ha, walker.hb);
    const hash = pack(walker.ha, walker.hb);
    return {
      hash,
      informative: walker.informative,
      notes: walker.notes,
      targets: walker.targets.digest(walker, TARGETS_TAG),
      action: walker.action.digest(walker, ACTION_TAG),
      // only argument text is read into it (`stringLeaf`): a result has none
      wording: walker.wording.digest(),
      wordingLength: walker.wording.length,
      saysError: walker.saysError,
    };
  } finally {
    walker.release();
    if (idle.length < 4) idle.push(walker);
  }
}

/** Normalised key set from user-facing names (`request_id`, `requestId`, ...). */
export function volatileKeySet(...lists: ReadonlyArray<readonly string[] | undefined>): ReadonlySet<string> {
  const set = new Set<string>();
  for (const list of lists) for (const key of list ?? []) set.add(normalizeKey(key));
  return set;
}
