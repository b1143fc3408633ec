import {
  backToBack,
  changingFailure,
  changingOutput,
  errorClass,
  failingRecheck,
  identicalCalls,
  nothingNew,
  recheck,
  repeatedFailure,
  sameResult,
  unknownTool,
  type Evidence,
  type MeasureCall,
} from './call-rules.js';
import type { ThresholdInput, Thresholds } from './thresholds.js';

/**
 * Every loop rule, in one list: adding a rule is adding an entry here (and its measurement, for a
 * per-call rule, in `call-rules.ts`). The rule names, the configuration keys and their defaults,
 * the rules a tool's role runs, the lowest level of a tool's policy and every sentence about a
 * rule are read from this list.
 */

/** Families of loops (the `loop.kind` contract: dashboards and alerts group by these strings). */
export type LoopKind = 'repeat' | 'no_progress' | 'cycle' | 'error_pattern' | 'unknown_tool';

/** Facts a detection message may use: names, counts and classes, never argument or result content. */
export interface DetectionFacts {
  readonly toolName: string;
  readonly count: number;
  readonly evidence: Evidence;
  readonly distinctArgs?: number;
  readonly errorLabel?: string;
  readonly cycleTools?: readonly string[];
}

/** Facts the dispatcher guard tells the model about a loop it refuses to continue. */
export interface HistoryFacts {
  readonly toolName: string;
  /** Repetitions that really happened before this attempt (calls, failures or laps). */
  readonly before: number;
  readonly cycleTools?: readonly string[];
  /** The result was captured, so "the same result" can be said. */
  readonly sameResultKnown: boolean;
}

/**
 * What a rule's detections show about the calls in their evidence (docs/how-it-decides.md, the
 * evidence principle). Not `Evidence`, which says how much of each call was captured.
 * - `nothing-new`: the same call (canonical arguments) with the same outcome, and nothing between
 *   the repetitions that told the agent anything new (only other repeats): proof that the agent
 *   got no new information. The only kind whose default levels may stop a run unmeasured.
 * - `work-between`: the same call with the same outcome, with new work between the repetitions
 *   (the work may be what the call verifies).
 * - `changing-outcome`: the same call again and again, its outcome changing.
 * - `other-calls`: the same answer or the same error class to different arguments.
 * The weaker kinds warn; their default critical is off unless the real-run corpus has shown it to
 * be as safe (`RuleSpec.stopShownSafe`).
 */
export type EvidenceKind = 'nothing-new' | 'work-between' | 'changing-outcome' | 'other-calls';

/** The kinds of evidence, strongest first (the reference lists them in this order). */
export const EVIDENCE_KINDS: readonly EvidenceKind[] = ['nothing-new', 'work-between', 'changing-outcome', 'other-calls'];

export interface RuleSpec<Name extends string = string, Key extends string = string> {
  /** `loop.rule` and `LoopDetection.rule`. */
  readonly name: Name;
  readonly kind: LoopKind;
  /** What its detections rest on (see `EvidenceKind`). */
  readonly evidenceKind: EvidenceKind;
  /**
   * For a rule whose evidence is weaker than `nothing-new` and whose default critical is on: the
   * measurement on the real-run corpus that shows stopping there to be as safe (printed in the
   * reference). A rule of a weaker kind without it has no default critical.
   */
  readonly stopShownSafe?: string;
  /** The key of its thresholds in the configuration (`thresholds.<key>`, per role and per tool). */
  readonly thresholdKey: Key;
  /** What its thresholds count (for the reference). */
  readonly counts: 'calls' | 'laps' | 'failures';
  readonly defaults: Thresholds;
  /** Defaults for tools in the `poller` role; absent: the rule's own defaults. */
  readonly poller?: ThresholdInput;
  /** Defaults for tools in the `wait` role. Wait tools run only the rules that have these. */
  readonly wait?: ThresholdInput;
  /** Defaults for tools in the `writer` role; absent: the rule's own defaults. */
  readonly writer?: ThresholdInput;
  /**
   * Per-call rules measure each call (`call-rules.ts`); the cycle and resent-batch rules, without
   * one, are measured on completed steps by the trace detector.
   */
  readonly measure?: MeasureCall;
  /**
   * A catch-all for what the specific rules miss: measured only when no other rule finds a loop
   * in the same call, so one loop is not reported twice under two names.
   */
  readonly fallback?: boolean;
  /** The detection's message. */
  message(f: DetectionFacts): string;
  /** What already happened, as one clause (the guard's hint and decision messages). */
  summary(f: HistoryFacts): string;
  /** What the model should do instead (the guard's hint). */
  readonly advice: string;
}

/** One entry, with its name and key kept as literal types (they make `RuleName` and `RuleKey`). */
function rule<const Name extends string, const Key extends string>(spec: RuleSpec<Name, Key>): RuleSpec<Name, Key> {
  return spec;
}

const EVIDENCE_NOTE: Record<Evidence, string> = {
  'arguments+result': '',
  arguments: ' (results are not captured, so this rests on arguments only)',
  result: ' (arguments are not captured, so this rests on results only)',
  name: ' (arguments and results are not captured, so this rests on the tool name only)',
};

const times = (n: number): string => (n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`);
const quoted = (name: string): string => `'${name}'`;
/**
 * The steps of a cycle by tool name, and what tells repeated names apart (their arguments, never
 * shown: they stay in the process unless the argument preview is on): `'open_page' → 'open_page'`
 * alone would read as one call repeated.
 */
const cyclePath = (tools: readonly string[] | undefined): string => {
  const list = tools ?? [];
  const path = list.map(quoted).join(' → ');
  return new Set(list).size < list.length ? `${path}, the same tool with different arguments` : path;
};

const NOTHING_NEW =
  'Running it again will not give you anything new: use the results you already have, try different arguments or another tool, or tell the user what is blocking you.';
const WILL_FAIL_AGAIN = 'Retrying it unchanged will fail again: change the arguments, use another tool, or report the failure to the user.';

export const RULES = [
  rule({
    name: 'back_to_back',
    kind: 'repeat',
    evidenceKind: 'nothing-new',
    thresholdKey: 'backToBack',
    counts: 'calls',
    // A write sent again the moment it succeeded, answered the same way, nothing else new between:
    // a second send can be a deliberate retry, a third resends what was just done twice (a transfer
    // to a human agent three times, each `Transfer successful`). On the real-run corpus's dev split
    // 23 honest runs repeat a call twice back to back and none three times, writes or reads
    // (how-it-decides.md, session 6). Only for writes by default: a read's warning at the 3rd and
    // stop at the 5th give the agent a hint first, and a re-read may be a poll. It shares
    // `identical_calls`' key and comes first, so its stop silences that rule's warning at the same call.
    defaults: { warning: Number.POSITIVE_INFINITY, critical: Number.POSITIVE_INFINITY },
    writer: { critical: 3 },
    measure: backToBack,
    message: (f) => `${quoted(f.toolName)} was called ${f.count} times back to back with identical arguments and returned the same result each time, nothing else between`,
    summary: (f) => `${quoted(f.toolName)} already ran ${times(f.before)} back to back with these exact arguments and returned the same result each time`,
    advice: NOTHING_NEW,
  }),
  rule({
    name: 'identical_calls',
    kind: 'repeat',
    evidenceKind: 'nothing-new',
    thresholdKey: 'repeat',
    counts: 'calls',
    // Two identical calls with identical results can be a deliberate re-check; a third is the
    // earliest point every surveyed agent runtime intervenes; two more after the hint show it did
    // not work. A poller's status that does not move for 8 polls is worth a hint; waits and sleeps
    // are judged by this rule alone, and only a long run of them is a loop.
    defaults: { warning: 3, critical: 5 },
    poller: { warning: 8, critical: 15 },
    wait: { warning: 20, critical: 40 },
    measure: identicalCalls,
    message: (f) => {
      const tool = quoted(f.toolName);
      if (f.evidence === 'arguments+result') return `${tool} was called ${f.count} times with identical arguments and returned the same result each time`;
      if (f.evidence === 'arguments') return `${tool} was called ${f.count} times with identical arguments${EVIDENCE_NOTE[f.evidence]}`;
      if (f.evidence === 'result') return `${tool} returned the same result ${f.count} times${EVIDENCE_NOTE[f.evidence]}`;
      return `${tool} was called ${f.count} times in a row${EVIDENCE_NOTE[f.evidence]}`;
    },
    summary: (f) =>
      f.sameResultKnown
        ? `${quoted(f.toolName)} already ran ${times(f.before)} with these exact arguments and returned the same result each time`
        : `${quoted(f.toolName)} already ran ${times(f.before)} with these exact arguments`,
    advice: NOTHING_NEW,
  }),
  rule({
    name: 'recheck',
    kind: 'repeat',
    evidenceKind: 'work-between',
    thresholdKey: 'recheck',
    counts: 'calls',
    // One unrelated call inside a loop keeps it a loop (`gapBudget`); with more work between,
    // re-checking is normal (honest edit → test rounds print the same output again and again
    // before it moves: matplotlib-24570, openhands-claude35) and the rule is quiet: the same
    // answer after each of the agent's own edits is its verification (how-it-decides.md, session 5).
    defaults: { warning: 3, critical: 5 },
    poller: { warning: 8, critical: 15 },
    stopShownSafe: 'the real-run corpus: no honest run repeats one call with the same answer 5 times with at most one unrelated call in the streak; with more work between the rule is quiet (how-it-decides.md, session 5)',
    measure: recheck,
    message: (f) =>
      `${quoted(f.toolName)} was called ${f.count} times with identical arguments${f.evidence === 'arguments+result' ? ' and returned the same result each time' : ''}, with other calls between${EVIDENCE_NOTE[f.evidence]}`,
    summary: (f) => `${quoted(f.toolName)} already ran ${times(f.before)} with these exact arguments${f.sameResultKnown ? ' and the same result' : ''}, other calls between`,
    advice: NOTHING_NEW,
  }),
  rule({
    name: 'changing_output',
    kind: 'repeat',
    evidenceKind: 'changing-outcome',
    thresholdKey: 'changingOutput',
    counts: 'calls',
    // Output that changes is normally progress (debugger stepping, growing logs): only a run far
    // longer than honest stepping is a loop (`date` 62 times).
    // Stopped by the 40th: a loop whose output never repeats (a clock, a counter) must still end.
    defaults: { warning: 25, critical: 40 },
    poller: { warning: 60, critical: 120 },
    stopShownSafe: 'the real-run corpus: no honest run calls one tool with the same arguments 25 times (FINDINGS.md)',
    measure: changingOutput,
    message: (f) => `${quoted(f.toolName)} was called ${f.count} times with identical arguments; its output changed every time, but the agent never moved on`,
    summary: (f) => `${quoted(f.toolName)} already ran ${times(f.before)} with these exact arguments; its output keeps changing but nothing moves forward`,
    advice: NOTHING_NEW,
  }),
  rule({
    name: 'same_result',
    kind: 'no_progress',
    evidenceKind: 'other-calls',
    thresholdKey: 'noProgress',
    counts: 'calls',
    // Different arguments with the same informative answer: rephrasing that gets nowhere, or a
    // batch of different writes acknowledged alike; only the arguments' wording tells them apart,
    // and that is not evidence enough to stop (docs/how-it-decides.md: honest writers and
    // searches on the real runs got the same answer to different requests several times).
    defaults: { warning: 5, critical: Number.POSITIVE_INFINITY },
    poller: { warning: 8 },
    measure: sameResult,
    message: (f) =>
      `${quoted(f.toolName)} returned the same result to ${f.count} calls with ${f.distinctArgs ?? 2} different arguments: rephrasing is not getting anywhere`,
    summary: (f) => `${quoted(f.toolName)} already returned the same result to ${f.before} calls with different arguments`,
    advice: NOTHING_NEW,
  }),
  rule({
    name: 'nothing_new',
    kind: 'no_progress',
    evidenceKind: 'nothing-new',
    thresholdKey: 'nothingNew',
    counts: 'calls',
    // Real coding agents that are stuck re-read the same views and re-run the same empty greps in
    // rotations of 7 to 17 calls, or in laps that never repeat exactly, which the cycle rule
    // (exact laps up to 6 steps) and the streak rules (one call in a row) miss. On the real-run
    // corpus (test/fixtures/real/FINDINGS.md) five calls in a row that all repeat earlier calls
    // exactly warned no honest run; ten stopped none.
    defaults: { warning: 5, critical: 10 },
    measure: nothingNew,
    fallback: true,
    message: (f) =>
      `the last ${f.count} calls (the latest to ${quoted(f.toolName)}) brought nothing new: each repeated an earlier call of this trace with the same arguments and got the same answer`,
    summary: (f) => `the last ${f.before} calls, the latest to ${quoted(f.toolName)}, only repeated earlier calls and got the same answers`,
    advice: NOTHING_NEW,
  }),
  rule({
    name: 'cycle',
    kind: 'cycle',
    evidenceKind: 'nothing-new',
    thresholdKey: 'cycle',
    counts: 'laps',
    // Two laps are a legitimate two-pass batch; a third lap with identical results is a loop;
    // stopping one lap later costs only one period.
    defaults: { warning: 3, critical: 4 },
    poller: { warning: 6, critical: 12 },
    message: (f) =>
      `a cycle of ${f.cycleTools?.length ?? 0} steps (${cyclePath(f.cycleTools)}) repeated ${f.count} times with the same results${EVIDENCE_NOTE[f.evidence]}`,
    summary: (f) => `the same ${f.cycleTools?.length ?? 0} steps (${cyclePath(f.cycleTools)}) already repeated ${times(f.before)} with the same results`,
    advice: 'Step back and try a different approach, or tell the user what is blocking you.',
  }),
  rule({
    name: 'resent_batch',
    kind: 'error_pattern',
    evidenceKind: 'nothing-new',
    thresholdKey: 'resentBatch',
    counts: 'laps',
    // A batch of several different calls sent again whole, every call failing exactly as before
    // (what each failure said included; an answer `{"error": ...}` is a refusal as much as a
    // failure is): one failure retried may have been transient, a whole
    // batch failing again the same way is the same information twice. A two-pass batch that
    // succeeded (reads, writes) stays under the cycle's levels. Stopped at the 4th lap, as a cycle is.
    defaults: { warning: 2, critical: 4 },
    poller: { warning: 6, critical: 12 },
    message: (f) => `the same batch of calls (the latest to ${quoted(f.toolName)}) was sent ${times(f.count)}, and every call in it failed with the same error each time${EVIDENCE_NOTE[f.evidence]}`,
    summary: (f) => `the same batch of calls, the latest to ${quoted(f.toolName)}, already failed ${times(f.before)} with the same errors`,
    advice: WILL_FAIL_AGAIN,
  }),
  rule({
    name: 'repeated_failure',
    kind: 'error_pattern',
    evidenceKind: 'nothing-new',
    thresholdKey: 'repeatedFailure',
    counts: 'failures',
    // A transient failure retried once or twice and then succeeding is normal.
    defaults: { warning: 3, critical: 5 },
    measure: repeatedFailure,
    message: (f) => `${quoted(f.toolName)} failed ${f.count} times with the same arguments and the same error`,
    summary: (f) => `${quoted(f.toolName)} already failed ${times(f.before)} with these exact arguments and the same error`,
    advice: WILL_FAIL_AGAIN,
  }),
  rule({
    name: 'failing_recheck',
    kind: 'error_pattern',
    evidenceKind: 'work-between',
    thresholdKey: 'failingRecheck',
    counts: 'failures',
    // One unrelated call inside keeps it a loop (`gapBudget`), and so do fixes that did not apply
    // (failed edits, an earlier edit sent again). With more new work between, the same failure
    // after each new fix verifies that fix and the rule is quiet: on every real run that reruns a
    // failing check after new work that succeeded, the run was honest (how-it-decides.md, session 6).
    defaults: { warning: 3, critical: 5 },
    stopShownSafe: 'the real-run corpus: no honest run fails one call with the same error 5 times with at most one unrelated call in the streak; with more new work between the rule is quiet (how-it-decides.md, sessions 5 and 6)',
    measure: failingRecheck,
    message: (f) => `${quoted(f.toolName)} failed ${f.count} times with the same arguments and the same error, with other calls between`,
    summary: (f) => `${quoted(f.toolName)} already failed ${times(f.before)} with these exact arguments and the same error, other calls between`,
    advice: WILL_FAIL_AGAIN,
  }),
  rule({
    name: 'changing_failure',
    kind: 'error_pattern',
    evidenceKind: 'changing-outcome',
    thresholdKey: 'changingFailure',
    counts: 'failures',
    // The same call failing again and again, nothing else done between, while its error text
    // changes (a flaky upstream): a retry or two is normal.
    defaults: { warning: 3, critical: 5 },
    stopShownSafe: 'the real-run corpus: no honest run retries one failing call 5 times in a row (FINDINGS.md)',
    measure: changingFailure,
    message: (f) => `${quoted(f.toolName)} failed ${f.count} times in a row with the same arguments (its error changed, the call did not)`,
    summary: (f) => `${quoted(f.toolName)} already failed ${times(f.before)} in a row with these exact arguments`,
    advice: WILL_FAIL_AGAIN,
  }),
  rule({
    name: 'error_class',
    kind: 'error_pattern',
    evidenceKind: 'other-calls',
    thresholdKey: 'errorClass',
    counts: 'failures',
    // Different arguments failing the same way is trial and error for a while.
    defaults: { warning: 4, critical: 8 },
    stopShownSafe: 'the real-run corpus: no honest run fails one tool with one error class 8 times (FINDINGS.md)',
    measure: errorClass,
    message: (f) =>
      `${quoted(f.toolName)} failed ${f.count} times with the same error${f.errorLabel ? ` (${f.errorLabel})` : ''}${
        f.distinctArgs && f.distinctArgs > 1 ? ` over ${f.distinctArgs} different arguments` : ''
      }`,
    summary: (f) => `${quoted(f.toolName)} already failed ${times(f.before)} with the same error`,
    advice: WILL_FAIL_AGAIN,
  }),
  rule({
    name: 'unknown_tool',
    kind: 'unknown_tool',
    // Whatever the arguments, a tool that does not exist gives the same refusal: nothing new.
    evidenceKind: 'nothing-new',
    thresholdKey: 'unknownTool',
    counts: 'calls',
    // A tool that does not exist never starts to exist.
    defaults: { warning: 2, critical: 3 },
    measure: unknownTool,
    message: (f) => `the agent called ${quoted(f.toolName)}, a tool that does not exist, ${f.count} times`,
    summary: (f) => `${quoted(f.toolName)} is not an available tool (tried ${times(f.before)} already)`,
    advice: 'Use only the tools you were given.',
  }),
] as const;

/** The rule that produced a detection: a finer split of `kind`, for messages and tuning. */
export type RuleName = (typeof RULES)[number]['name'];
/** A rule's key in the configuration's `thresholds` maps. */
export type RuleKey = (typeof RULES)[number]['thresholdKey'];
export type AnyRule = (typeof RULES)[number];

/** The configuration keys of the rules' thresholds, in rule order. */
export const RULE_KEYS: readonly RuleKey[] = RULES.map((r) => r.thresholdKey);

const BY_NAME = new Map<string, AnyRule>(RULES.map((r) => [r.name, r]));

export function ruleNamed(name: RuleName): AnyRule {
  const spec = BY_NAME.get(name);
  if (spec === undefined) throw new Error(`no loop rule named ${name}`);
  return spec;
}

export type CallRule = AnyRule & { readonly measure: MeasureCall };

/** The per-call rules, in rule order (findings are reported in this order). */
export const CALL_RULES: readonly CallRule[] = RULES.filter((r): r is CallRule => r.measure !== undefined);

/** The rules measured on completed steps. */
export const CYCLE_RULE = ruleNamed('cycle');
export const RESENT_BATCH_RULE = ruleNamed('resent_batch');
