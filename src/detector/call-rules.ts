import { combineAll, type Hash } from '../fingerprint/hash.js';
import { HAS_ARGS, HAS_RESULT, INFORMATIVE, OK, REPEATS_EARLIER, sameHash, UNKNOWN_TOOL, type CallHistory } from './history.js';
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
}

/** What the remembered calls hold of the current call's tool (`CallContext.seen`). */
export const SEEN_TOOL = 1;
/** ... with the current call's outcome (any arguments). */
export const SEEN_OUT = 2;
/** ... with its arguments (any outcome). */
export const SEEN_ARGS = 4;
/** ... with its arguments and outcome, success or failure alike, in an earlier batch. */
export const SEEN_CALL = 8;

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
  readonly out: Hash;
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

/** Thresholds raised for evidence short of arguments and result (the stricter of the two pairs). */
export function degrade(t: Thresholds, evidence: Evidence, settings: RuleSettings): Thresholds {
  if (evidence === 'arguments+result') return t;
  const d = evidence === 'name' ? settings.evidence.nameOnly : settings.evidence.argumentsOnly;
  return { warning: Math.max(t.warning, d.warning), critical: Math.max(t.critical, d.critical) };
}

/** Where a streak's evidence begins: the end of its first call, and how many calls back that is. */
function evidenceStart(h: CallHistory, s: Streak): { firstEnd: number; firstBack: number } {
  return { firstEnd: h.end(s.first), firstBack: h.size - 1 - s.first };
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

/** Same tool, same arguments, same outcome, called again and again. */
export function identicalCalls(ctx: CallContext, ruleThresholds: Thresholds): Measurement | undefined {
  const { history: h, tool, args, out, flags } = ctx;
  if (!has(flags, OK) || ctx.inCycle) return undefined;
  const hasArgs = has(flags, HAS_ARGS);
  const hasResult = has(flags, HAS_RESULT);
  const evidence: Evidence =
    hasArgs && hasResult ? 'arguments+result' : hasArgs ? 'arguments' : hasResult && has(flags, INFORMATIVE) ? 'result' : 'name';
  const thresholds = degrade(ruleThresholds, evidence, ctx.settings);
  if (!active(thresholds)) return undefined;
  const key = combineAll(R_IDENTICAL, ctx.toolHash, args, out);
  if ((ctx.seen & SEEN_CALL) === 0) return countsAlone(thresholds) ? { key, value: 1, count: 1, ...alone(h), thresholds, evidence } : undefined;
  const q: StreakQuery = {
    occurrence: (i) => h.tool(i) === tool && has(h.flags(i), OK) && sameHash(h.args(i), args) && sameHash(h.out(i), out),
    // The same call answering differently is progress (a poll that moved).
    breaks: (i) =>
      hasResult && h.tool(i) === tool && has(h.flags(i), OK) && sameHash(h.args(i), args) && !sameHash(h.out(i), out),
    // Without arguments novelty is unknowable: any other tool in between counts as other work.
    ...(hasArgs ? {} : { gap: (i: number) => h.tool(i) !== tool }),
    spacing: true,
    stopAt: stopAt(thresholds),
  };
  const s = walkStreak(h, q, options(ctx));
  if (s.weighted >= Math.min(thresholds.warning, thresholds.critical) || !has(flags, REPEATS_EARLIER)) {
    return { key, value: s.weighted, count: s.count, ...evidenceStart(h, s), thresholds, evidence };
  }
  // The same call with the same answer, with other work between its repetitions: a check whose
  // output stays the same after every fix (edit → test → the same output), or one call returning
  // to a rotation of re-reads. Re-checking after work is normal, and honest edit → test rounds
  // on the real-run corpus print the same output up to four times before it moves
  // (matplotlib-24570): two more repetitions than for calls in a row; the same call answering
  // differently ends it.
  const apart = degradeBy(thresholds, 2);
  const spread = walkStreak(h, { ...q, gap: () => false, stopAt: stopAt(apart) }, options(ctx));
  return { key, value: spread.weighted, count: spread.count, ...evidenceStart(h, spread), thresholds: apart, evidence };
}

function degradeBy(t: Thresholds, n: number): Thresholds {
  return { warning: t.warning + n, critical: t.critical + n };
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

/** Different arguments, the same informative answer: paraphrasing a query that cannot succeed. */
export function sameResult(ctx: CallContext, thresholds: Thresholds): Measurement | undefined {
  const { history: h, tool, out, flags } = ctx;
  if (!has(flags, OK) || !has(flags, HAS_RESULT) || !has(flags, INFORMATIVE) || !has(flags, HAS_ARGS)) return undefined;
  // alone, the answer has one set of arguments: never a paraphrase
  if (!active(thresholds) || (ctx.seen & SEEN_OUT) === 0) return undefined;
  const s = walkStreak(
    h,
    {
      occurrence: (i) => h.tool(i) === tool && has(h.flags(i), OK) && has(h.flags(i), INFORMATIVE) && sameHash(h.out(i), out),
      breaks: (i) => h.tool(i) === tool && has(h.flags(i), OK) && has(h.flags(i), HAS_RESULT) && !sameHash(h.out(i), out),
      spacing: true,
      stopAt: stopAt(thresholds),
    },
    options(ctx),
  );
  if (s.distinctArgs < 2) return undefined;
  return {
    key: combineAll(R_SAME_RESULT, ctx.toolHash, out),
    value: s.weighted,
    count: s.count,
    ...evidenceStart(h, s),
    thresholds,
    evidence: 'arguments+result',
    distinctArgs: s.distinctArgs,
  };
}

/**
 * The same call failing again and again, whatever the error text says; or failing the same way
 * with other work between its attempts (fix → verify whose verification keeps failing alike).
 */
export function repeatedFailure(ctx: CallContext, thresholds: Thresholds): Measurement | undefined {
  const { history: h, tool, args, out, flags } = ctx;
  if (has(flags, OK) || has(flags, UNKNOWN_TOOL) || !has(flags, HAS_ARGS)) return undefined;
  if (!active(thresholds)) return undefined;
  const key = combineAll(R_FAILURE, ctx.toolHash, args);
  const s = walkStreak(
    h,
    {
      occurrence: (i) => h.tool(i) === tool && !has(h.flags(i), OK) && sameHash(h.args(i), args),
      // A success of the same call: the failure was transient.
      breaks: (i) => h.tool(i) === tool && has(h.flags(i), OK) && sameHash(h.args(i), args),
      spacing: false,
      stopAt: stopAt(thresholds),
    },
    options(ctx),
  );
  if (s.count >= Math.min(thresholds.warning, thresholds.critical) || !has(flags, REPEATS_EARLIER)) {
    return { key, value: s.count, count: s.count, ...evidenceStart(h, s), thresholds, evidence: 'arguments+result' };
  }
  // Edits or other calls between the attempts: only the identical failure counts, one more of
  // them is needed, and a different failure of the same call (the fix changed something) ends it.
  const apart = degradeBy(thresholds, 1);
  const spread = walkStreak(
    h,
    {
      occurrence: (i) => h.tool(i) === tool && !has(h.flags(i), OK) && sameHash(h.args(i), args) && sameHash(h.out(i), out),
      breaks: (i) => h.tool(i) === tool && sameHash(h.args(i), args) && (has(h.flags(i), OK) || !sameHash(h.out(i), out)),
      gap: () => false,
      spacing: false,
      stopAt: stopAt(apart),
    },
    options(ctx),
  );
  return { key, value: spread.count, count: spread.count, ...evidenceStart(h, spread), thresholds: apart, evidence: 'arguments+result' };
}

/** One tool failing with the same error class while the arguments keep changing. */
export function errorClass(ctx: CallContext, thresholds: Thresholds): Measurement | undefined {
  const { history: h, tool, out, flags } = ctx;
  if (has(flags, OK) || has(flags, UNKNOWN_TOOL)) return undefined;
  if (!active(thresholds)) return undefined;
  const s = walkStreak(
    h,
    {
      occurrence: (i) => h.tool(i) === tool && !has(h.flags(i), OK) && sameHash(h.out(i), out),
      breaks: (i) => h.tool(i) === tool && has(h.flags(i), OK),
      spacing: false,
      stopAt: stopAt(thresholds),
    },
    options(ctx),
  );
  // Same arguments every time is the repeated-failure rule's loop, not this one's.
  if (has(flags, HAS_ARGS) && s.distinctArgs < 2) return undefined;
  return {
    key: combineAll(R_ERROR_CLASS, ctx.toolHash, out),
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
