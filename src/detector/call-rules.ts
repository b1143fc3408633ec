import { combineAll, type Hash } from '../fingerprint/hash.js';
import { HAS_ARGS, HAS_RESULT, INFORMATIVE, NEWS, OK, POLLER, sameHash, UNKNOWN_TOOL, USER_TURN, type CallHistory } from './history.js';
import { similarWording } from '../fingerprint/wording.js';
import { walkStreak, type Streak, type StreakQuery } from './streak.js';
import type { Thresholds } from './thresholds.js';

/**
 * How much of the call the instrumentation captured. Arguments and results are opt-in content in
 * the gen_ai conventions; without them loopwatch still works on tool names and outcomes, with
 * higher thresholds, and every detection says which evidence it rests on.
 */
export type Evidence = 'arguments+result' | 'arguments' | 'result' | 'name';

/** Evidence by rank, weakest first: a cycle's rank (`TraceDetector`, `CycleTracker`) is an index here. */
export const EVIDENCE_BY_RANK: readonly Evidence[] = ['name', 'result', 'arguments', 'arguments+result'];

/** What a rule measured for the current call, before levels and de-duplication. */
export interface Measurement {
  /** Identity of what repeats; de-duplication and the event fingerprint use it. */
  readonly key: Hash;
  /** Compared with the thresholds (spaced-out repetitions weigh less). */
  readonly value: number;
  /** Reported repetitions. */
  readonly count: number;
  /** The thresholds `value` is held to (the rule's, raised when evidence is missing). */
  readonly thresholds: Thresholds;
  readonly evidence: Evidence;
  readonly distinctArgs?: number;
  readonly cycleLength?: number;
  readonly cycleTools?: readonly number[];
  /** End (epoch ms) of the first call of the evidence. */
  readonly firstEnd: number;
  /** Calls recorded after the first call of the evidence (0: the current call is the first). */
  readonly firstBack: number;
  /**
   * A user message that said something new lies between the repetitions: the agent may have been
   * asked to do it again (a re-check the user asked for), so the evidence warns and never stops.
   */
  readonly userBetween?: boolean;
}

/** What the remembered calls hold of the current call's tool (`CallContext.seen`). */
export const SEEN_TOOL = 1;
/** ... with the current call's outcome (any arguments). */
export const SEEN_OUT = 2;
/** ... with its arguments (any outcome). */
export const SEEN_ARGS = 4;
/** ... with its arguments and outcome, success or failure alike, in an earlier batch. */
export const SEEN_CALL = 8;
/** ... with its arguments, succeeding (any outcome). */
export const SEEN_ARGS_OK = 16;

/** The settings the rules read (a `ResolvedConfig` has them). */
export interface RuleSettings {
  readonly evidence: { readonly argumentsOnly: Thresholds; readonly nameOnly: Thresholds };
  readonly gapBudget: number;
  readonly spacing: { readonly idleMs: number; readonly weight: number };
}

/** The current call (the newest entry of `history`) and what the rules need to know about it. */
export interface CallContext {
  readonly history: CallHistory;
  readonly settings: RuleSettings;
  readonly tool: number;
  readonly toolHash: Hash;
  readonly args: Hash;
  /** The outcome: the result's fingerprint (NaN when not captured), or what the failure said. */
  readonly out: Hash;
  /** A failure's error class (NaN for a success). */
  readonly errorClass: Hash;
  /** The wording sketch of a success's arguments (NaN when it has none). */
  readonly wording: number;
  /** How long a success's wording is (0 when it has none). */
  readonly wordingLength: number;
  readonly flags: number;
  /**
   * `SEEN_*` bits: which earlier calls the history holds. A rule whose repetition cannot be among
   * them counts the current call alone without walking the history (bench/NOTES.md, agent mix).
   */
  readonly seen: number;
  /** The current step continues a cycle of period ≥ 2: plain repeats are left to the cycle rule. */
  readonly inCycle: boolean;
  /** Calls in a row, the current one included, that brought nothing new to the trace; and which such run this is. */
  readonly drought: { readonly length: number; readonly episode: number; readonly firstEnd: number; readonly firstBack: number };
}

/**
 * A per-call rule: measures the current call against the earlier calls of its trace, held to
 * `thresholds` (the rule's, for this tool); undefined when the rule does not apply to the call.
 */
export type MeasureCall = (ctx: CallContext, thresholds: Thresholds) => Measurement | undefined;

const R_IDENTICAL = 0x101;
const R_CHANGING = 0x102;
const R_SAME_RESULT = 0x103;
const R_FAILURE = 0x104;
const R_ERROR_CLASS = 0x105;
const R_UNKNOWN = 0x106;
const R_NOTHING_NEW = 0x107;
const R_CHANGING_FAILURE = 0x108;

/**
 * Thresholds raised for evidence short of arguments and result. Counted in calls: the stricter of
 * the rule's pair and the configured one (`evidence.argumentsOnly`, `evidence.nameOnly`). Counted
 * in laps (`laps`: cycles, whose steps are several calls): one lap more to warn and two more to
 * stop; on tool names alone two more to warn and never a stop.
 */
export function degrade(t: Thresholds, evidence: Evidence, settings: RuleSettings, laps = false): Thresholds {
  if (evidence === 'arguments+result') return t;
  if (laps) return evidence === 'name' ? { warning: t.warning + 2, critical: Number.POSITIVE_INFINITY } : { warning: t.warning + 1, critical: t.critical + 2 };
  const d = evidence === 'name' ? settings.evidence.nameOnly : settings.evidence.argumentsOnly;
  return { warning: Math.max(t.warning, d.warning), critical: Math.max(t.critical, d.critical) };
}

/** Where a streak's evidence begins (the end of its first call, and how many calls back that is), and whether the user spoke within it. */
function evidenceStart(h: CallHistory, s: Streak): { firstEnd: number; firstBack: number; userBetween?: boolean } {
  const start = { firstEnd: h.end(s.first), firstBack: h.size - 1 - s.first };
  return s.userTurns > 0 ? { ...start, userBetween: true } : start;
}

/** Does the current call alone reach a level (a threshold of 1)? Below one, a rule has nothing to say. */
function countsAlone(t: Thresholds): boolean {
  return Math.min(t.warning, t.critical) <= 1;
}

/** Where the evidence of the current call alone begins: itself. */
function alone(h: CallHistory): { firstEnd: number; firstBack: number } {
  return { firstEnd: h.end(h.size - 1), firstBack: 0 };
}

function active(t: Thresholds): boolean {
  return Number.isFinite(t.warning) || Number.isFinite(t.critical);
}

function stopAt(t: Thresholds): number {
  return Number.isFinite(t.critical) ? t.critical : t.warning;
}

function options(ctx: CallContext): { gapBudget: number; idleMs: number; weight: number } {
  return { gapBudget: ctx.settings.gapBudget, idleMs: ctx.settings.spacing.idleMs, weight: ctx.settings.spacing.weight };
}

function has(flags: number, bit: number): boolean {
  return (flags & bit) !== 0;
}

/** What an identical success rests on: arguments and result, arguments only, an informative result only, or the name. */
function successEvidence(flags: number): Evidence {
  const hasArgs = has(flags, HAS_ARGS);
  const hasResult = has(flags, HAS_RESULT);
  return hasArgs && hasResult ? 'arguments+result' : hasArgs ? 'arguments' : hasResult && has(flags, INFORMATIVE) ? 'result' : 'name';
}

/**
 * The same call with the same success: its occurrences, and the same call answering differently,
 * which is progress (a poll that moved) and ends the run.
 */
function sameSuccess(ctx: CallContext, limit: number): StreakQuery {
  const { history: h, tool, args, out, flags } = ctx;
  const hasResult = has(flags, HAS_RESULT);
  return {
    occurrence: (i) => h.tool(i) === tool && has(h.flags(i), OK) && sameHash(h.args(i), args) && sameHash(h.out(i), out),
    breaks: (i) => hasResult && h.tool(i) === tool && has(h.flags(i), OK) && sameHash(h.args(i), args) && !sameHash(h.out(i), out),
    // Without arguments novelty is unknowable: any other tool in between counts as other work.
    ...(has(flags, HAS_ARGS) ? {} : { gap: (i: number) => h.tool(i) !== tool }),
    spacing: true,
    stopAt: limit,
  };
}

/**
 * The same call with the same answer, nothing new between: each repetition only repeats what the
 * agent already had (other calls between that repeat earlier calls add nothing either). The
 * evidence that the agent got no new information.
 */
export function identicalCalls(ctx: CallContext, ruleThresholds: Thresholds): Measurement | undefined {
  const { history: h, args, out, flags } = ctx;
  if (!has(flags, OK)) return undefined;
  const evidence = successEvidence(flags);
  const degraded = degrade(ruleThresholds, evidence, ctx.settings);
  // In a cycle the cycle rule names the loop; a call of it that repeats with nothing new between
  // still stops the run when it reaches the critical level first (a lap too long to repeat
  // exactly, or laps counted from later).
  const thresholds = ctx.inCycle ? { warning: degraded.critical, critical: degraded.critical } : degraded;
  if (!active(thresholds)) return undefined;
  const key = combineAll(R_IDENTICAL, ctx.toolHash, args, out);
  if ((ctx.seen & SEEN_CALL) === 0) return countsAlone(thresholds) ? { key, value: 1, count: 1, ...alone(h), thresholds, evidence } : undefined;
  const q = sameSuccess(ctx, stopAt(thresholds));
  const s = walkStreak(h, { ...q, ...(has(flags, HAS_ARGS) ? { gap: (i: number) => has(h.flags(i), NEWS) } : {}), budget: 0, userTurnEnds: true }, options(ctx));
  // Repetitions spaced out in time weigh less towards a warning (a few polls spaced out are no
  // loop), but time alone tells nothing new: the critical count of them stops the run however
  // long they took. Only a poller's answer is expected to move with time.
  const value = !has(flags, POLLER) && s.count >= thresholds.critical ? s.count : s.weighted;
  return { key, value, count: s.count, ...evidenceStart(h, s), thresholds, evidence };
}

/**
 * The same call with the same answer in consecutive steps, each step after the first holding
 * nothing else new and no user message before it: the agent sends the identical request again the
 * moment it got its answer, with nothing at all between (a transfer resent three times, each
 * `Transfer successful`). Stronger than `identicalCalls`, which lets other repeats and a step's
 * parallel new calls pass between. Counted on captured arguments and results only; spaced-out
 * repetitions weigh less, and a poller's unchanged status is its role's (how-it-decides.md,
 * "What changed in session 6").
 */
export function backToBack(ctx: CallContext, thresholds: Thresholds): Measurement | undefined {
  const { history: h, tool, args, out, flags } = ctx;
  if (!has(flags, OK) || !has(flags, HAS_ARGS) || !has(flags, HAS_RESULT) || has(flags, POLLER) || (ctx.seen & SEEN_CALL) === 0 || !active(thresholds)) return undefined;
  const limit = stopAt(thresholds);
  const same = (i: number): boolean => h.tool(i) === tool && has(h.flags(i), OK) && sameHash(h.args(i), args) && sameHash(h.out(i), out);
  const { idleMs, weight } = ctx.settings.spacing;
  let count = 0;
  let weighted = 0;
  let first = h.size - 1;
  let newerStart = h.start(first);
  for (let i = h.size - 1; i >= 0 && weighted < limit; ) {
    const batch = h.batch(i);
    let found = -1;
    // the step is the streak's first: something else new in it, or a user message before it
    let opens = false;
    for (; i >= 0 && h.batch(i) === batch; i--) {
      const f = h.flags(i);
      if (has(f, USER_TURN)) opens = true;
      if (same(i)) found = i;
      else if (has(f, NEWS)) opens = true;
    }
    if (found < 0) break;
    weighted += count === 0 || newerStart - h.end(found) < idleMs ? 1 : weight;
    count++;
    first = found;
    newerStart = h.start(found);
    if (opens) break;
  }
  if (count < 2) return undefined;
  return { key: combineAll(R_IDENTICAL, ctx.toolHash, args, out), value: weighted, count, firstEnd: h.end(first), firstBack: h.size - 1 - first, thresholds, evidence: 'arguments+result' };
}

/**
 * Thresholds for rewordings with other work between them (`sameResult`): `APART_REPEATS` more to
 * warn, and never a stop.
 */
function apartThresholds(t: Thresholds): Thresholds {
  return { warning: t.warning + APART_REPEATS, critical: Number.POSITIVE_INFINITY };
}

const APART_REPEATS = 2;

/**
 * The same call with the same answer, other work between its repetitions: one unrelated call
 * inside a loop, a check whose output stays the same after every fix (edit → test → the same
 * output), or one call returning to a rotation of re-reads. Weaker than `identicalCalls`: the work
 * between may be what the agent wanted to verify. So a streak survives `gapBudget` calls of new
 * work at the rule's levels; past them the rule is quiet (the same answer after each piece of the
 * agent's own work is its verification). It shares `identicalCalls`' key: one loop, one report.
 */
export function recheck(ctx: CallContext, ruleThresholds: Thresholds): Measurement | undefined {
  const { history: h, args, out, flags } = ctx;
  if (!has(flags, OK) || ctx.inCycle || (ctx.seen & SEEN_CALL) === 0) return undefined;
  const evidence = successEvidence(flags);
  const thresholds = degrade(ruleThresholds, evidence, ctx.settings);
  if (!active(thresholds)) return undefined;
  const key = combineAll(R_IDENTICAL, ctx.toolHash, args, out);
  const q = { ...sameSuccess(ctx, stopAt(thresholds)), userTurnEnds: true, writeVerifies: true };
  const near = walkStreak(h, q, options(ctx));
  // Nothing new between the repetitions: the evidence of `identicalCalls`, not of this rule.
  if (near.news === 0) return undefined;
  // Past `gapBudget`, the same successful answer after each piece of the agent's own work is its
  // verification (fix → verify with the output unchanged; a re-read after edits elsewhere): quiet.
  return { key, value: near.weighted, count: near.count, ...evidenceStart(h, near), thresholds, evidence };
}

/**
 * Call after call that brings nothing new: each one's tool, arguments and outcome already
 * happened in this trace (a rotation of re-reads, greps that find nothing again, a lap that never
 * quite repeats). Any call with new arguments or a new answer ends the drought.
 */
export function nothingNew(ctx: CallContext, thresholds: Thresholds): Measurement | undefined {
  if (ctx.drought.length < 2 || !active(thresholds)) return undefined;
  return {
    key: combineAll(R_NOTHING_NEW, ctx.drought.episode),
    value: ctx.drought.length,
    count: ctx.drought.length,
    firstEnd: ctx.drought.firstEnd,
    firstBack: ctx.drought.firstBack,
    thresholds,
    evidence: 'arguments+result',
  };
}

/** Identical arguments whose output changes every time, far longer than stepping or tailing would. */
export function changingOutput(ctx: CallContext, thresholds: Thresholds): Measurement | undefined {
  const { history: h, tool, args, flags } = ctx;
  if (!has(flags, OK) || !has(flags, HAS_ARGS) || !has(flags, HAS_RESULT)) return undefined;
  if (!active(thresholds)) return undefined;
  if ((ctx.seen & SEEN_ARGS) === 0) {
    return countsAlone(thresholds) ? { key: combineAll(R_CHANGING, ctx.toolHash, args), value: 1, count: 1, ...alone(h), thresholds, evidence: 'arguments+result' } : undefined;
  }
  const s = walkStreak(
    h,
    {
      occurrence: (i) => h.tool(i) === tool && has(h.flags(i), OK) && sameHash(h.args(i), args),
      breaks: () => false,
      spacing: true,
      stopAt: stopAt(thresholds),
    },
    options(ctx),
  );
  // Mostly-identical outputs are the repeat rule's; a slowly moving poll (R1 R1 R2 R2 ...) is progress.
  if (s.outputChanges * 2 < s.count - 1) return undefined;
  return {
    key: combineAll(R_CHANGING, ctx.toolHash, args),
    value: s.weighted,
    count: s.count,
    ...evidenceStart(h, s),
    thresholds,
    evidence: 'arguments+result',
  };
}

/**
 * Different arguments, the same informative answer: paraphrasing a query that cannot succeed. A
 * result's identity includes its call's targets (`ToolOutcome.resultHash`), so calls acting on
 * different records, files or pages never give "the same answer": only rewordings do.
 */
export function sameResult(ctx: CallContext, thresholds: Thresholds): Measurement | undefined {
  const { history: h, tool, out, flags, wording } = ctx;
  if (!has(flags, OK) || !has(flags, HAS_RESULT) || !has(flags, INFORMATIVE) || !has(flags, HAS_ARGS)) return undefined;
  // alone, the answer has one set of arguments: never a paraphrase
  if (!active(thresholds) || (ctx.seen & SEEN_OUT) === 0) return undefined;
  if (cutShorter(ctx)) return undefined;
  // A rewording of the call found last (this one, at first): a draft rewritten again and again
  // drifts, one step at a time; new content (another fact written, another paragraph) is other work.
  let last = wording;
  // Whether each call so far was longer than the one before it (the oldest found last).
  let longer = ctx.wordingLength;
  let grew = true;
  const rewordsLast = (i: number): boolean => {
    if (!reworded(h.wording(i), last)) return false;
    if (!Number.isNaN(h.wording(i))) last = h.wording(i);
    if (h.wordingLength(i) >= longer) grew = false;
    longer = h.wordingLength(i);
    return true;
  };
  const q: StreakQuery = {
    occurrence: (i) => h.tool(i) === tool && has(h.flags(i), OK) && has(h.flags(i), INFORMATIVE) && sameHash(h.out(i), out) && rewordsLast(i),
    breaks: (i) => h.tool(i) === tool && has(h.flags(i), OK) && has(h.flags(i), HAS_RESULT) && !sameHash(h.out(i), out),
    spacing: true,
    stopAt: stopAt(thresholds),
  };
  const near = walkStreak(h, q, options(ctx));
  // Every call made after a new user message and longer than the one before (an entry rewritten
  // with what the user just said, turn after turn): each is the agent writing down news, not
  // asking again; a loop across the user's messages rewords, or asks once unprompted.
  if (near.count > 1 && near.unprompted === 0 && grew) return undefined;
  if (near.weighted >= Math.min(thresholds.warning, thresholds.critical)) return sameResultFinding(ctx, near, thresholds);
  // Rewordings with other work between them (a rotation of lookups and rewrites that each get the
  // same refusal) need more of them, and the user's new messages end them.
  const apart = apartThresholds(thresholds);
  last = wording;
  return sameResultFinding(ctx, walkStreak(h, { ...q, gap: () => false, userTurnEnds: true, stopAt: stopAt(apart) }, options(ctx)), apart);
}

/**
 * The call's wording is shorter than the one that got the same answer last: the agent is acting
 * on that answer (trimming a text toward a length limit the answer states, narrowing a request),
 * which is information, not a paraphrase of a request that cannot succeed.
 */
function cutShorter(ctx: CallContext): boolean {
  const { history: h, tool, out, wordingLength } = ctx;
  if (wordingLength === 0) return false;
  // the newest entry is the call itself
  for (let i = h.size - 2; i >= 0; i--) {
    if (h.tool(i) === tool && has(h.flags(i), OK) && sameHash(h.out(i), out)) return h.wordingLength(i) > wordingLength;
  }
  return false;
}

function sameResultFinding(ctx: CallContext, s: Streak, thresholds: Thresholds): Measurement | undefined {
  if (s.distinctArgs < 2) return undefined;
  return {
    key: combineAll(R_SAME_RESULT, ctx.toolHash, ctx.out),
    value: s.weighted,
    count: s.count,
    ...evidenceStart(ctx.history, s),
    thresholds,
    evidence: 'arguments+result',
    distinctArgs: s.distinctArgs,
  };
}

/** Two calls' arguments are one request reworded (or either has no words to compare: targets alone tell them apart). */
function reworded(a: number, b: number): boolean {
  return Number.isNaN(a) || Number.isNaN(b) || similarWording(a, b);
}

/** A failure of the call to count for the failure rules: with arguments, of a tool that exists. */
function countableFailure(flags: number): boolean {
  return !has(flags, OK) && !has(flags, UNKNOWN_TOOL) && has(flags, HAS_ARGS);
}

/** The same call failing the same way (class, message and output alike), with `gap` deciding what ends it. */
function identicalFailure(
  ctx: CallContext,
  thresholds: Thresholds,
  gap: ((i: number) => boolean) | undefined,
  budget: number,
  userTurnEnds = false,
): { measurement: Measurement; news: number } {
  const { history: h, tool, args, out } = ctx;
  const s = walkStreak(
    h,
    {
      occurrence: (i) => h.tool(i) === tool && !has(h.flags(i), OK) && sameHash(h.args(i), args) && sameHash(h.out(i), out),
      // The same call succeeding (the failure was transient), or failing differently (the fix changed something).
      breaks: (i) => h.tool(i) === tool && sameHash(h.args(i), args) && (has(h.flags(i), OK) || !sameHash(h.out(i), out)),
      ...(gap ? { gap } : {}),
      budget,
      userTurnEnds,
      spacing: false,
      stopAt: stopAt(thresholds),
    },
    options(ctx),
  );
  const measurement: Measurement = { key: combineAll(R_FAILURE, ctx.toolHash, args, out), value: s.count, count: s.count, ...evidenceStart(h, s), thresholds, evidence: 'arguments+result' };
  return { measurement, news: s.news };
}

/**
 * The same call failing with the same error, message and output, nothing new between: retrying it
 * told the agent nothing it did not know.
 */
export function repeatedFailure(ctx: CallContext, thresholds: Thresholds): Measurement | undefined {
  if (!countableFailure(ctx.flags) || !active(thresholds)) return undefined;
  const h = ctx.history;
  return identicalFailure(ctx, thresholds, (i) => has(h.flags(i), NEWS), 0, true).measurement;
}

/**
 * The same call failing the same way with other calls between its attempts that brought news but
 * no new work: a fix → verify round whose fix did not apply (the edit failed, or an earlier one
 * was sent again) and whose verification keeps failing with the same failure. Weaker than
 * `repeatedFailure` (something new happened between). A streak survives `gapBudget` calls of new
 * work (a new call that succeeded) at the rule's levels; past them the rule is quiet, as `recheck`
 * is: the same failure after each of the agent's own new fixes verifies each fix (a coding agent
 * rewrites its fix and reruns one failing script, the output unchanged, and finishes:
 * openhands-claude35, how-it-decides.md "What changed in session 6"). It shares
 * `repeatedFailure`'s key: one loop, one report.
 */
export function failingRecheck(ctx: CallContext, thresholds: Thresholds): Measurement | undefined {
  if (!countableFailure(ctx.flags) || !active(thresholds) || (ctx.seen & SEEN_CALL) === 0) return undefined;
  const near = identicalFailure(ctx, thresholds, undefined, ctx.settings.gapBudget, true);
  // Nothing new between the attempts: the evidence of `repeatedFailure`, not of this rule.
  return near.news === 0 ? undefined : near.measurement;
}

/**
 * The same call failing again and again in a row while what the failure says changes (a flaky
 * upstream answering "connection reset", then "bad gateway"): nothing else happened between the
 * attempts, but each failure said something new.
 */
export function changingFailure(ctx: CallContext, thresholds: Thresholds): Measurement | undefined {
  const { history: h, tool, args, flags } = ctx;
  if (!countableFailure(flags) || !active(thresholds) || (ctx.seen & SEEN_ARGS) === 0) return undefined;
  const s = walkStreak(
    h,
    {
      occurrence: (i) => h.tool(i) === tool && !has(h.flags(i), OK) && sameHash(h.args(i), args),
      // A success of the same call: the failure was transient.
      breaks: (i) => h.tool(i) === tool && has(h.flags(i), OK) && sameHash(h.args(i), args),
      gap: (i) => has(h.flags(i), NEWS),
      budget: 0,
      userTurnEnds: true,
      spacing: false,
      stopAt: stopAt(thresholds),
    },
    options(ctx),
  );
  // The same failure every time is `repeatedFailure`'s.
  if (s.outputChanges === 0) return undefined;
  return { key: combineAll(R_CHANGING_FAILURE, ctx.toolHash, args), value: s.count, count: s.count, ...evidenceStart(h, s), thresholds, evidence: 'arguments+result' };
}

/** One tool failing with the same error class while the arguments keep changing. */
export function errorClass(ctx: CallContext, thresholds: Thresholds): Measurement | undefined {
  const { history: h, tool, flags } = ctx;
  const cls = ctx.errorClass;
  if (has(flags, OK) || has(flags, UNKNOWN_TOOL)) return undefined;
  if (!active(thresholds)) return undefined;
  const s = walkStreak(
    h,
    {
      occurrence: (i) => h.tool(i) === tool && !has(h.flags(i), OK) && sameHash(h.errorClass(i), cls),
      breaks: (i) => h.tool(i) === tool && has(h.flags(i), OK),
      spacing: false,
      stopAt: stopAt(thresholds),
    },
    options(ctx),
  );
  // Same arguments every time is the repeated-failure rules' loop, not this one's.
  if (has(flags, HAS_ARGS) && s.distinctArgs < 2) return undefined;
  return {
    key: combineAll(R_ERROR_CLASS, ctx.toolHash, cls),
    value: s.count,
    count: s.count,
    ...evidenceStart(h, s),
    thresholds,
    evidence: has(flags, HAS_ARGS) ? 'arguments+result' : 'result',
    distinctArgs: s.distinctArgs,
  };
}

/** Calls to a tool that does not exist: it will not start existing. */
export function unknownTool(ctx: CallContext, thresholds: Thresholds): Measurement | undefined {
  const { history: h, tool, flags } = ctx;
  if (!has(flags, UNKNOWN_TOOL)) return undefined;
  if (!active(thresholds)) return undefined;
  const s = walkStreak(
    h,
    {
      occurrence: (i) => h.tool(i) === tool && has(h.flags(i), UNKNOWN_TOOL),
      breaks: () => false,
      gap: () => false,
      spacing: false,
      stopAt: stopAt(thresholds),
    },
    options(ctx),
  );
  return {
    key: combineAll(R_UNKNOWN, ctx.toolHash),
    value: s.count,
    count: s.count,
    ...evidenceStart(h, s),
    thresholds,
    evidence: has(flags, HAS_ARGS) ? 'arguments+result' : 'result',
  };
}
