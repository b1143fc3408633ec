import { combine, toHex, UnorderedHash, type Hash } from '../fingerprint/hash.js';
import { degrade, EVIDENCE_BY_RANK, SEEN_ARGS, SEEN_ARGS_OK, SEEN_CALL, SEEN_OUT, SEEN_TOOL, type CallContext, type Measurement, type RuleSettings } from './call-rules.js';
import { CycleTracker, type CycleFinding, type StepInfo } from './cycle.js';
import type { ResolvedConfig } from './config/index.js';
import {
  ARGS_NOVEL, CallHistory, EXEMPT, HAS_ARGS, HAS_RESULT, INFORMATIVE, NEWS, OK, POLLER, REPEATS_EARLIER, UNKNOWN_TOOL, USER_TURN, WAIT, WRITE,
} from './history.js';
import type { ToolPolicies, ToolPolicy } from './policy.js';
import { CYCLE_RULE, RESENT_BATCH_RULE, type AnyRule } from './rules.js';
import type { Thresholds } from './thresholds.js';
import type { LoopDetection, LoopLevel, RecordedCall, ToolCall, ToolOutcome } from './types.js';

const MAX_EMITTED = 512;
const R_RESENT_BATCH = 0x109;
const RECENT_BATCHES = 8;
/** User messages remembered per trace, to tell a message that says something new from one that repeats. */
const MAX_USER_MESSAGES = 32;

function evidenceRank(flags: number): number {
  const args = (flags & HAS_ARGS) !== 0;
  const result = (flags & HAS_RESULT) !== 0 || (flags & OK) === 0; // an error is a captured outcome
  return args && result ? 3 : args ? 2 : result && (flags & (INFORMATIVE | OK)) !== OK ? 1 : 0;
}

/**
 * Whether a call brought something new to its trace: undefined when it cannot tell (waits,
 * exempt tools and pollers repeat by their role; without arguments, or with a success whose
 * result was not captured, novelty is unknowable).
 */
function bringsNews(flags: number): boolean | undefined {
  if ((flags & (WAIT | EXEMPT | POLLER)) !== 0 || (flags & HAS_ARGS) === 0) return undefined;
  if ((flags & OK) !== 0 && (flags & HAS_RESULT) === 0) return undefined;
  return (flags & REPEATS_EARLIER) === 0;
}

/**
 * Whether a call may have told the agent something new (the `NEWS` flag): any call whose
 * arguments are unknown; with arguments, new arguments, or an outcome this call never had
 * (unknown when a success's result is not captured: then only new arguments are news). A wait
 * tells nothing.
 */
function isNews(flags: number): boolean {
  if ((flags & WAIT) !== 0) return false;
  if ((flags & HAS_ARGS) === 0 || (flags & ARGS_NOVEL) !== 0) return true;
  if ((flags & OK) !== 0 && (flags & HAS_RESULT) === 0) return false;
  return (flags & REPEATS_EARLIER) === 0;
}

/**
 * The level a measurement reaches. A critical needs the evidence to hold over the whole run: a
 * user message that said something new between the repetitions leaves it a warning, whatever the
 * count (the weaker rules count across such messages; the rules of "nothing new" end at them).
 */
function levelOf(f: Finding): LoopLevel | undefined {
  if (f.value >= f.thresholds.critical && f.userBetween !== true) return 'critical';
  return f.value >= f.thresholds.warning || f.value >= f.thresholds.critical ? 'warning' : undefined;
}

/** A rule's measurement at or above one of its levels, before de-duplication. */
interface Finding extends Measurement {
  readonly rule: AnyRule;
}

/** The per-call rules of the call's tool that reach a level. */
function measureCall(ctx: CallContext, policy: ToolPolicy, found: Finding[]): void {
  const before = found.length;
  let fallbacks = 0;
  for (const { rule, thresholds } of policy.callRules) {
    if (rule.fallback === true) {
      fallbacks++;
      continue;
    }
    const m = rule.measure(ctx, thresholds);
    if (m && m.value >= Math.min(m.thresholds.warning, m.thresholds.critical)) found.push({ ...m, rule });
  }
  if (fallbacks === 0 || found.length > before || ctx.inCycle) return;
  for (const { rule, thresholds } of policy.callRules) {
    if (rule.fallback !== true) continue;
    const m = rule.measure(ctx, thresholds);
    if (m && m.value >= Math.min(m.thresholds.warning, m.thresholds.critical)) found.push({ ...m, rule });
  }
}

/** A step in progress: reused once closed (see `openStep`), so every field but the two containers is set anew. */
interface PendingStep {
  batch: number;
  readonly sigs: Hash[];
  readonly acc: UnorderedHash;
  tool: Hash;
  rank: number;
  allPollers: boolean;
  /** Every call of the step failed, or answered that it failed (`saysError`). */
  allFailed: boolean;
  start: number;
  end: number;
  /** End of the step's first-recorded call, and its record number (`TraceDetector.calls`). */
  firstEnd: number;
  firstRecord: number;
}

/** A step in progress as a copy of its own (the accumulator, an order-independent sum of the distinct signatures, rebuilt from them). */
function copyStep(step: PendingStep): PendingStep {
  const acc = new UnorderedHash();
  for (const sig of step.sigs) acc.add(sig);
  return { ...step, sigs: [...step.sigs], acc };
}

/**
 * Closed steps kept for the next steps of any trace to reuse: a step is opened and closed by one
 * call in most traces (a batch of one call), and few are open at once.
 */
const spareSteps: PendingStep[] = [];
const MAX_SPARE_STEPS = 8;

function openStep(batch: number, tool: Hash, call: ToolCall, record: number): PendingStep {
  const step = spareSteps.pop() ?? { batch, sigs: [], acc: new UnorderedHash(), tool, rank: 3, allPollers: true, allFailed: true, start: 0, end: 0, firstEnd: 0, firstRecord: 0 };
  step.batch = batch;
  step.tool = tool;
  step.rank = 3;
  step.allPollers = true;
  step.allFailed = true;
  step.start = call.startTime;
  step.end = step.firstEnd = call.endTime;
  step.firstRecord = record;
  return step;
}

function releaseStep(step: PendingStep): void {
  step.sigs.length = 0;
  step.acc.clear();
  if (spareSteps.length < MAX_SPARE_STEPS) spareSteps.push(step);
}

/**
 * What the rules see of the call being recorded, the same object filled in for every call of every
 * trace: recording is synchronous and never nested, and no rule keeps its context.
 */
class CurrentCall implements CallContext {
  history!: CallHistory;
  settings!: RuleSettings;
  tool = Number.NaN;
  toolHash = Number.NaN;
  args = Number.NaN;
  out = Number.NaN;
  errorClass = Number.NaN;
  wording = Number.NaN;
  wordingLength = 0;
  flags = 0;
  seen = 0;
  inCycle = false;
  readonly drought = { length: 0, episode: 0, firstEnd: Number.NaN, firstBack: 0 };
}

const current = new CurrentCall();
/** The findings of the call being recorded (see `CurrentCall`), emptied after each. */
const findings: Finding[] = [];
/** What a closed step tells the cycle tracker, read at once (see `CurrentCall`). */
const closedStep: { -readonly [K in keyof StepInfo]: StepInfo[K] } = { tool: 0, evidenceRank: 0, allPollers: false, idleBefore: 0, firstEnd: 0, firstRecord: 0 };
const NO_DETECTIONS: LoopDetection[] = [];

/**
 * What the traces of one engine share (`LoopEngine` is one): the configuration, the tool
 * policies, and one numbering of tool names, so that every trace hashes a tool the same way.
 */
export interface SharedDetection {
  readonly config: ResolvedConfig;
  readonly policies: ToolPolicies;
  toolHash(name: string): Hash;
  agentToolHash(name: string, agent: string): Hash;
  actionToolHash(tool: Hash, action: Hash, name: string): Hash;
  toolName(hash: Hash): string;
}

/**
 * Where a trace stands, besides its history, its cycle tracker and its step in progress: the
 * numbers recording a call moves, in one struct, so that `preview` records on a copy of it.
 */
class TraceProgress {
  /** Batch id the next new batch key gets (see `TraceDetector.batchId`). */
  nextBatch = 0;
  lastStepEnd = Number.NaN;
  calls = 0;
  /** Calls in a row that brought nothing new (see `nothingNew`), and how many droughts ended before. */
  drought = 0;
  droughtsEnded = 0;
  /** The first call of the current drought: its end, and its record number (`calls`). */
  droughtFirstEnd = Number.NaN;
  droughtFirstRecord = 0;
  mainAgent: string | undefined = undefined;
  /** A user message said something new since the last call: the next call is marked `USER_TURN`. */
  heardNews = false;

  copy(): TraceProgress {
    return Object.assign(new TraceProgress(), this);
  }
}

/**
 * Loop detection for one trace: remembers its recent calls (bounded), groups parallel calls into
 * steps, runs the rules on every call and the cycle rule on every completed step, and reports
 * each (signature, level) once.
 */
export class TraceDetector {
  private readonly history: CallHistory;
  private readonly cycles: CycleTracker;
  private emitted: Set<number> | undefined;
  /** The keys of the last `RECENT_BATCHES` batches, a ring: key of batch id `i` at `i % RECENT_BATCHES`. */
  private batchKeys: Array<string | undefined> | undefined;
  private pending: PendingStep | undefined;
  private at = new TraceProgress();
  /** Fingerprints of the user messages of this trace (at most `MAX_USER_MESSAGES`, oldest dropped). */
  private userMessages: Hash[] | undefined;

  constructor(
    private readonly engine: SharedDetection,
    readonly traceId: string,
  ) {
    this.history = new CallHistory(engine.config.historySize);
    this.cycles = new CycleTracker(engine.config.maxPeriod);
  }

  /** Tool calls recorded so far. */
  get callCount(): number {
    return this.at.calls;
  }

  /** Approximate bytes held by this trace's state (benchmarks). */
  get byteLength(): number {
    return this.history.byteLength + (this.emitted?.size ?? 0) * 16 + 400;
  }

  /**
   * Records a finished call and returns the loops it completes. `batchComplete` says no other
   * call of its batch is still running, so the step can be compared with earlier steps.
   */
  record(call: ToolCall, batchComplete = true): LoopDetection[] {
    return this.recordCall(call, batchComplete, true);
  }

  /** `record`; `firstTimeOnly`: each (signature, level) reported once (see `firstTime`), else whenever reached. */
  private recordCall(call: ToolCall, batchComplete: boolean, firstTimeOnly: boolean): LoopDetection[] {
    const at = this.at;
    at.calls++;
    const engine = this.engine;
    const policy = engine.policies.get(call.toolName, call.declaredReadOnly);
    // The trace's first agent (and calls whose agent is not known, as an instrumentation may name
    // the agent span only after its first tool call) use the tool's plain identity; other agents
    // of the trace, sub-agents, are judged apart.
    const agent = call.agentName;
    if (agent !== undefined) at.mainAgent ??= agent;
    const named = agent === undefined || agent === at.mainAgent ? engine.toolHash(call.toolName) : engine.agentToolHash(call.toolName, agent);
    const tool = call.actionHash === undefined ? named : engine.actionToolHash(named, call.actionHash, call.toolName);
    const batch = this.batchId(call.batch);
    const args = call.argsHash ?? Number.NaN;
    let flags = 0;
    let out: Hash;
    let errorClass = Number.NaN;
    const wording = call.wording ?? Number.NaN;
    if (call.outcome.ok) {
      flags |= OK;
      out = call.outcome.resultHash ?? Number.NaN;
      if (call.outcome.resultHash !== undefined) flags |= HAS_RESULT;
      if (call.outcome.informative) flags |= INFORMATIVE;
    } else {
      out = call.outcome.failureHash;
      errorClass = call.outcome.errorClass;
      if (call.outcome.unknownTool) flags |= UNKNOWN_TOOL;
    }
    if (engine.config.knownTools && !engine.config.knownTools.has(call.toolName)) flags |= UNKNOWN_TOOL;
    const seen = this.seen(tool, args, out, (flags & OK) !== 0, batch);
    if (call.argsHash !== undefined) {
      flags |= HAS_ARGS;
      // the first success of arguments that only failed before is new work too: the work was not done until now
      if ((seen & SEEN_ARGS) === 0 || ((flags & OK) !== 0 && (seen & SEEN_ARGS_OK) === 0)) flags |= ARGS_NOVEL;
      else if ((seen & SEEN_CALL) !== 0) flags |= REPEATS_EARLIER;
    }
    if (policy.role === 'wait') flags |= WAIT;
    if (policy.role === 'exempt') flags |= EXEMPT;
    if (policy.role === 'poller') flags |= POLLER;
    if (policy.role === 'writer') flags |= WRITE;
    if (isNews(flags)) flags |= NEWS;
    if (at.heardNews) {
      flags |= USER_TURN;
      at.heardNews = false;
    }
    const wordingLength = call.outcome.ok ? (call.wordingLength ?? 0) : 0;
    this.history.add(tool, args, out, call.outcome.ok ? wording : errorClass, flags, batch, call.startTime, call.endTime, wordingLength);
    if (bringsNews(flags) !== undefined) {
      if (bringsNews(flags)) {
        if (at.drought > 0) at.droughtsEnded++;
        at.drought = 0;
      } else if (at.drought++ === 0) {
        at.droughtFirstEnd = call.endTime;
        at.droughtFirstRecord = at.calls;
      }
    }

    const found = findings;
    found.length = 0;
    if (this.pending && this.pending.batch !== batch) this.closeStep(found);
    if ((flags & (WAIT | EXEMPT)) === 0) {
      const sig = combine(combine(tool, args), out * 2 + (flags & OK));
      this.addToStep(batch, tool, sig, flags, policy.role === 'poller', call);
    }
    if (batchComplete) this.closeStep(found);
    // The first call of a tool in the trace counts 1 for every call rule: nothing to find below 2.
    if ((seen & SEEN_TOOL) !== 0 || policy.minCallThreshold <= 1) {
      const ctx = current;
      ctx.history = this.history;
      ctx.settings = engine.config;
      ctx.tool = ctx.toolHash = tool;
      ctx.args = args;
      ctx.out = out;
      ctx.errorClass = errorClass;
      ctx.wording = wording;
      ctx.wordingLength = wordingLength;
      ctx.flags = flags;
      ctx.seen = seen;
      ctx.inCycle = this.cycles.inCycle;
      const drought = ctx.drought;
      drought.length = at.drought;
      drought.episode = at.droughtsEnded;
      drought.firstEnd = at.droughtFirstEnd;
      drought.firstBack = at.calls - at.droughtFirstRecord;
      measureCall(ctx, policy, found);
    }
    if (found.length === 0) return NO_DETECTIONS;
    const detections = this.report(found, call, firstTimeOnly);
    found.length = 0;
    return detections;
  }

  /**
   * What `record(call, batchComplete)` would report now, without recording anything: the
   * dispatcher guard asks this before a call runs, with the outcome it expects. Unlike `record`,
   * nothing is de-duplicated: every finding at or above a threshold is reported at its level, as
   * often as it is asked (the guard keeps its own count of interventions).
   */
  preview(call: ToolCall, batchComplete = true): LoopDetection[] {
    // Recorded, then undone: the history and the cycle tracker roll back the one call and step
    // they took (see their `mark`), the trace's progress and a step in progress, which recording
    // changes in place, are worked on as copies; the rest of the trace is not copied.
    const { at, batchKeys, pending } = this;
    const batchSlot = at.nextBatch >= RECENT_BATCHES ? batchKeys?.[at.nextBatch % RECENT_BATCHES] : undefined;
    this.at = at.copy();
    if (pending) this.pending = copyStep(pending);
    this.history.mark();
    this.cycles.mark();
    try {
      return this.recordCall(call, batchComplete, false);
    } finally {
      this.history.rollback();
      this.cycles.rollback();
      this.at = at;
      // a new batch took the ring's oldest slot (once full) or a grown ring
      if (batchKeys !== undefined && at.nextBatch >= RECENT_BATCHES) batchKeys[at.nextBatch % RECENT_BATCHES] = batchSlot;
      this.batchKeys = batchKeys;
      this.pending = pending;
    }
  }

  /** The calls remembered (at most the `limit` newest), oldest first. */
  recentCalls(limit = Number.POSITIVE_INFINITY): RecordedCall[] {
    const h = this.history;
    const out: RecordedCall[] = [];
    for (let i = Math.max(0, h.size - Math.max(0, limit)); i < h.size; i++) {
      const flags = h.flags(i);
      const args = h.args(i);
      const outHash = h.out(i);
      const outcome: ToolOutcome =
        (flags & OK) !== 0
          ? { ok: true, ...((flags & HAS_RESULT) !== 0 ? { resultHash: outHash } : {}), informative: (flags & INFORMATIVE) !== 0 }
          : { ok: false, errorClass: h.errorClass(i), failureHash: outHash, unknownTool: (flags & UNKNOWN_TOOL) !== 0 };
      out.push({
        toolName: this.engine.toolName(h.tool(i)),
        ...(Number.isNaN(args) ? {} : { argsHash: args }),
        outcome,
        startTime: h.start(i),
        endTime: h.end(i),
      });
    }
    return out;
  }

  /**
   * Whether the remembered calls include this tool (`SEEN_TOOL`), with this outcome
   * (`SEEN_OUT`), with these arguments (`SEEN_ARGS`; succeeding: `SEEN_ARGS_OK`), with both
   * (`SEEN_CALL`, in an earlier batch: the same call twice in one parallel batch is one call).
   */
  private seen(tool: Hash, args: Hash, out: Hash, ok: boolean, batch: number): number {
    const h = this.history;
    // `sameHash` in this loop (the hottest of a call) makes V8 box every double it reads into a new
    // heap number: an absent hash is told apart once, before it, and each comparison is a plain one
    const outAbsent = Number.isNaN(out);
    const argsAbsent = Number.isNaN(args);
    let seen = 0;
    for (let i = h.size - 1; i >= 0; i--) {
      if (h.tool(i) !== tool) continue;
      seen |= SEEN_TOOL;
      const sameOut = outAbsent ? Number.isNaN(h.out(i)) : h.out(i) === out;
      if (sameOut) seen |= SEEN_OUT;
      if (argsAbsent ? !Number.isNaN(h.args(i)) : h.args(i) !== args) continue;
      seen |= SEEN_ARGS;
      if ((h.flags(i) & OK) !== 0) seen |= SEEN_ARGS_OK;
      if (sameOut && ((h.flags(i) & OK) !== 0) === ok && h.batch(i) !== batch) return seen | SEEN_CALL;
    }
    return seen;
  }

  /**
   * A user message arrived, before the calls recorded after it (`content`: `userMessageHash` of
   * its text). A message that says something this trace has not heard is new information: the
   * rules whose evidence is "nothing new between" (repeats, identical failures, cycles, droughts)
   * start over from the calls after it, as a re-check the user asked for is no proof of a loop;
   * the weaker rules count it as news between repetitions. A message the trace has had already
   * (the user repeating themselves, a conversation going round, or a model call's input that
   * carries the whole conversation again) adds nothing and changes nothing. Returns whether it
   * was new.
   */
  userMessage(content: Hash): boolean {
    const known = (this.userMessages ??= []);
    if (known.includes(content)) return false;
    if (known.length >= MAX_USER_MESSAGES) known.shift();
    known.push(content);
    this.at.heardNews = true;
    if (this.at.drought > 0) this.at.droughtsEnded++;
    this.at.drought = 0;
    this.cycles.reset();
    return true;
  }

  /**
   * Batch keys are strings from the caller; the history stores small numbers (consecutive ids).
   * The ring is made one key larger at each new batch until it holds `RECENT_BATCHES` (exact
   * size: most traces have fewer batches, and one ring lives in every active trace).
   */
  private batchId(key: string): number {
    const keys = this.batchKeys;
    const next = this.at.nextBatch;
    if (keys !== undefined) {
      const oldest = Math.max(0, next - RECENT_BATCHES);
      for (let id = next - 1; id >= oldest; id--) if (keys[id % RECENT_BATCHES] === key) return id;
    }
    this.at.nextBatch = next + 1;
    if (next >= RECENT_BATCHES && keys !== undefined) {
      keys[next % RECENT_BATCHES] = key;
      return next;
    }
    const grown = new Array<string | undefined>(next + 1).fill(undefined);
    for (let id = 0; id < next; id++) grown[id] = keys?.[id];
    grown[next] = key;
    this.batchKeys = grown;
    return next;
  }

  private addToStep(batch: number, tool: Hash, sig: Hash, flags: number, poller: boolean, call: ToolCall): void {
    const step = (this.pending ??= openStep(batch, tool, call, this.at.calls));
    step.rank = Math.min(step.rank, evidenceRank(flags));
    step.allPollers &&= poller;
    // A result that says error (`{"error": "Key name must be unique"}`) is a refusal as much as a failure is.
    step.allFailed &&= (flags & OK) === 0 || (call.outcome.ok && call.outcome.saysError === true);
    step.start = Math.min(step.start, call.startTime);
    step.end = Math.max(step.end, call.endTime);
    // A step is a set: the same call twice in one parallel batch is one call.
    if (step.sigs.includes(sig)) return;
    step.sigs.push(sig);
    step.acc.add(sig);
  }

  private closeStep(found: Finding[]): void {
    const step = this.pending;
    this.pending = undefined;
    if (!step) return;
    if (step.sigs.length > 0) this.closedStep(step, found);
    releaseStep(step);
  }

  private closedStep(step: PendingStep, found: Finding[]): void {
    const info = closedStep;
    info.tool = step.tool;
    info.evidenceRank = step.rank;
    info.allPollers = step.allPollers;
    info.idleBefore = Number.isNaN(this.at.lastStepEnd) ? 0 : step.start - this.at.lastStepEnd;
    info.firstEnd = step.firstEnd;
    info.firstRecord = step.firstRecord;
    this.at.lastStepEnd = step.end;
    const cycle = this.cycles.push(step.acc.digest(0x53), info);
    if (cycle) {
      const f = this.cycleFinding(cycle);
      if (f) found.push(f);
    }
    if (step.sigs.length >= 2 && step.allFailed) {
      const f = this.resentFinding(step);
      if (f) found.push(f);
    }
  }

  /** A step rule's thresholds before evidence raises them: a poller's when every call of the steps polls. */
  private stepThresholds(rule: AnyRule, allPollers: boolean): Thresholds {
    return (allPollers ? this.engine.policies.pollerThresholds : this.engine.config.thresholds)[rule.thresholdKey];
  }

  /** The step just closed, a batch of several calls that all failed (or said so), sent again whole and failing as before. */
  private resentFinding(step: PendingStep): Finding | undefined {
    const resent = this.cycles.resent();
    if (!resent) return undefined;
    const evidence = EVIDENCE_BY_RANK[step.rank] ?? 'name';
    const thresholds = degrade(this.stepThresholds(RESENT_BATCH_RULE, step.allPollers), evidence, this.engine.config);
    if (resent.laps < Math.min(thresholds.warning, thresholds.critical)) return undefined;
    return {
      rule: RESENT_BATCH_RULE,
      key: combine(R_RESENT_BATCH, step.acc.digest(0x53)),
      value: resent.laps,
      count: resent.laps,
      thresholds,
      evidence,
      firstEnd: resent.firstEnd,
      firstBack: this.at.calls - resent.firstRecord,
    };
  }

  private cycleFinding(c: CycleFinding): Finding | undefined {
    const evidence = EVIDENCE_BY_RANK[c.evidenceRank] ?? 'name';
    const config = this.engine.config;
    const thresholds = degrade(this.stepThresholds(CYCLE_RULE, c.allPollers), evidence, config, true);
    // Laps spaced far apart in time (round-robin polling) weigh less, as spaced repeats do.
    const value = c.minIdle >= config.spacing.idleMs ? 1 + (c.laps - 1) * config.spacing.weight : c.laps;
    if (value < Math.min(thresholds.warning, thresholds.critical)) return undefined;
    return {
      rule: CYCLE_RULE,
      key: c.key,
      value,
      count: c.laps,
      thresholds,
      evidence,
      cycleLength: c.period,
      cycleTools: c.tools,
      firstEnd: c.firstEnd,
      firstBack: this.at.calls - c.firstRecord,
    };
  }

  private report(found: Finding[], call: ToolCall, firstTimeOnly: boolean): LoopDetection[] {
    const out: LoopDetection[] = [];
    for (const f of found) {
      const level = levelOf(f);
      if (!level || (firstTimeOnly && !this.firstTime(f.key, level))) continue;
      const cycleTools = f.cycleTools?.map((t) => this.engine.toolName(t));
      out.push({
        kind: f.rule.kind,
        level,
        toolName: call.toolName,
        count: f.count,
        callIndex: call.callIndex,
        traceId: this.traceId,
        spanId: call.spanId ?? '',
        fingerprint: toHex(f.key),
        ...(call.promptName !== undefined ? { promptName: call.promptName } : {}),
        ...(call.agentName !== undefined ? { agentName: call.agentName } : {}),
        message: f.rule.message({
          toolName: call.toolName,
          count: f.count,
          evidence: f.evidence,
          ...(f.distinctArgs !== undefined ? { distinctArgs: f.distinctArgs } : {}),
          ...(call.outcome.ok === false && call.outcome.errorLabel ? { errorLabel: call.outcome.errorLabel } : {}),
          ...(cycleTools ? { cycleTools } : {}),
        }),
        rule: f.rule.name,
        threshold: level === 'critical' ? f.thresholds.critical : f.thresholds.warning,
        evidence: f.evidence,
        ...(f.cycleLength !== undefined ? { cycleLength: f.cycleLength } : {}),
        ...(cycleTools ? { cycleTools } : {}),
        mode: this.engine.config.mode,
        evidenceStartTime: f.firstEnd,
        evidenceCalls: f.firstBack + 1,
      });
    }
    return out;
  }

  /** De-duplication per (signature, level); a critical also silences a later warning. */
  private firstTime(key: Hash, level: LoopLevel): boolean {
    const warn = combine(key, 1);
    const crit = combine(key, 2);
    const emitted = (this.emitted ??= new Set());
    if (emitted.has(crit) || (level === 'warning' && emitted.has(warn))) return false;
    if (emitted.size >= MAX_EMITTED) {
      const oldest = emitted.values().next();
      if (!oldest.done) emitted.delete(oldest.value);
    }
    emitted.add(warn);
    if (level === 'critical') emitted.add(crit);
    return true;
  }
}

