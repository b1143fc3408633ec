import { combineAll, type Hash } from '../fingerprint/hash.js';
import type { ResolvedConfig, Thresholds } from './config.js';
import { HAS_ARGS, HAS_RESULT, INFORMATIVE, OK, sameHash, UNKNOWN_TOOL, type CallHistory } from './history.js';
import type { ToolPolicy } from './policy.js';
import { walkStreak, type Streak, type StreakQuery } from './streak.js';
import type { Evidence, LoopKind, RuleName } from './types.js';

/** A rule's measurement for the current call, before levels and de-duplication. */
export interface Finding {
  readonly rule: RuleName;
  readonly kind: LoopKind;
  /** Identity of what repeats; de-duplication and the event fingerprint use it. */
  readonly key: Hash;
  /** Compared with the thresholds (spaced-out repetitions weigh less). */
  readonly value: number;
  /** Reported repetitions. */
  readonly count: number;
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

/** The current call (the newest entry of `history`) and what the rules need to know about it. */
export interface CallContext {
  readonly history: CallHistory;
  readonly policy: ToolPolicy;
  readonly config: ResolvedConfig;
  readonly tool: number;
  readonly toolHash: Hash;
  readonly args: Hash;
  readonly out: Hash;
  readonly flags: number;
  /** The current step continues a cycle of period ≥ 2: plain repeats are left to the cycle rule. */
  readonly inCycle: boolean;
}

const R_IDENTICAL = 0x101;
const R_CHANGING = 0x102;
const R_SAME_RESULT = 0x103;
const R_FAILURE = 0x104;
const R_ERROR_CLASS = 0x105;
const R_UNKNOWN = 0x106;

export function degrade(t: Thresholds, evidence: Evidence, config: ResolvedConfig): Thresholds {
  if (evidence === 'arguments+result') return t;
  const d = evidence === 'name' ? config.evidence.nameOnly : config.evidence.argumentsOnly;
  return { warning: Math.max(t.warning, d.warning), critical: Math.max(t.critical, d.critical) };
}

/** Where the evidence of a streak begins (see `Finding`): what the cost of a loop is measured from. */
function evidenceStart(h: CallHistory, s: Streak): { firstEnd: number; firstBack: number } {
  return { firstEnd: h.end(s.first), firstBack: h.size - 1 - s.first };
}

function active(t: Thresholds): boolean {
  return Number.isFinite(t.warning) || Number.isFinite(t.critical);
}

function stopAt(t: Thresholds): number {
  return Number.isFinite(t.critical) ? t.critical : t.warning;
}

function options(ctx: CallContext): { gapBudget: number; idleMs: number; weight: number } {
  return { gapBudget: ctx.config.gapBudget, idleMs: ctx.config.spacing.idleMs, weight: ctx.config.spacing.weight };
}

function has(flags: number, bit: number): boolean {
  return (flags & bit) !== 0;
}

/** Same tool, same arguments, same outcome, called again and again. */
function identicalCalls(ctx: CallContext): Finding | undefined {
  const { history: h, tool, args, out, flags } = ctx;
  if (!has(flags, OK) || ctx.inCycle) return undefined;
  const hasArgs = has(flags, HAS_ARGS);
  const hasResult = has(flags, HAS_RESULT);
  const evidence: Evidence =
    hasArgs && hasResult ? 'arguments+result' : hasArgs ? 'arguments' : hasResult && has(flags, INFORMATIVE) ? 'result' : 'name';
  const thresholds = degrade(ctx.policy.thresholds.repeat, evidence, ctx.config);
  if (!active(thresholds)) return undefined;
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
  return {
    rule: 'identical_calls',
    kind: 'repeat',
    key: combineAll(R_IDENTICAL, ctx.toolHash, args, out),
    value: s.weighted,
    count: s.count,
    ...evidenceStart(ctx.history, s),
    thresholds,
    evidence,
  };
}

/** Identical arguments whose output changes every time, far longer than stepping or tailing would. */
function changingOutput(ctx: CallContext): Finding | undefined {
  const { history: h, tool, args, flags } = ctx;
  if (!has(flags, OK) || !has(flags, HAS_ARGS) || !has(flags, HAS_RESULT)) return undefined;
  const thresholds = ctx.policy.thresholds.changingOutput;
  if (!active(thresholds)) return undefined;
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
    rule: 'changing_output',
    kind: 'repeat',
    key: combineAll(R_CHANGING, ctx.toolHash, args),
    value: s.weighted,
    count: s.count,
    ...evidenceStart(ctx.history, s),
    thresholds,
    evidence: 'arguments+result',
  };
}

/** Different arguments, the same informative answer: paraphrasing a query that cannot succeed. */
function sameResult(ctx: CallContext): Finding | undefined {
  const { history: h, tool, out, flags } = ctx;
  if (!has(flags, OK) || !has(flags, HAS_RESULT) || !has(flags, INFORMATIVE) || !has(flags, HAS_ARGS)) return undefined;
  const thresholds = ctx.policy.thresholds.noProgress;
  if (!active(thresholds)) return undefined;
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
    rule: 'same_result',
    kind: 'no_progress',
    key: combineAll(R_SAME_RESULT, ctx.toolHash, out),
    value: s.weighted,
    count: s.count,
    ...evidenceStart(ctx.history, s),
    thresholds,
    evidence: 'arguments+result',
    distinctArgs: s.distinctArgs,
  };
}

/** The same call failing again and again, whatever the error text says. */
function repeatedFailure(ctx: CallContext): Finding | undefined {
  const { history: h, tool, args, flags } = ctx;
  if (has(flags, OK) || has(flags, UNKNOWN_TOOL) || !has(flags, HAS_ARGS)) return undefined;
  const thresholds = ctx.policy.thresholds.repeatedFailure;
  if (!active(thresholds)) return undefined;
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
  return {
    rule: 'repeated_failure',
    kind: 'error_pattern',
    key: combineAll(R_FAILURE, ctx.toolHash, args),
    value: s.count,
    count: s.count,
    ...evidenceStart(ctx.history, s),
    thresholds,
    evidence: 'arguments+result',
  };
}

/** One tool failing with the same error class while the arguments keep changing. */
function errorClass(ctx: CallContext): Finding | undefined {
  const { history: h, tool, out, flags } = ctx;
  if (has(flags, OK) || has(flags, UNKNOWN_TOOL)) return undefined;
  const thresholds = ctx.policy.thresholds.errorClass;
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
    rule: 'error_class',
    kind: 'error_pattern',
    key: combineAll(R_ERROR_CLASS, ctx.toolHash, out),
    value: s.count,
    count: s.count,
    ...evidenceStart(ctx.history, s),
    thresholds,
    evidence: has(flags, HAS_ARGS) ? 'arguments+result' : 'result',
    distinctArgs: s.distinctArgs,
  };
}

/** Calls to a tool that does not exist: it will not start existing. */
function unknownTool(ctx: CallContext): Finding | undefined {
  const { history: h, tool, flags } = ctx;
  if (!has(flags, UNKNOWN_TOOL)) return undefined;
  const thresholds = ctx.policy.thresholds.unknownTool;
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
    rule: 'unknown_tool',
    kind: 'unknown_tool',
    key: combineAll(R_UNKNOWN, ctx.toolHash),
    value: s.count,
    count: s.count,
    ...evidenceStart(ctx.history, s),
    thresholds,
    evidence: has(flags, HAS_ARGS) ? 'arguments+result' : 'result',
  };
}

const CALL_RULES = [identicalCalls, changingOutput, sameResult, repeatedFailure, errorClass, unknownTool];

export function evaluateCallRules(ctx: CallContext): Finding[] {
  const role = ctx.policy.role;
  if (role === 'exempt') return [];
  const rules = role === 'wait' ? [identicalCalls] : CALL_RULES;
  const out: Finding[] = [];
  for (const rule of rules) {
    const f = rule(ctx);
    if (f && f.value >= Math.min(f.thresholds.warning, f.thresholds.critical)) out.push(f);
  }
  return out;
}
