import { combine, toHex, UnorderedHash, type Hash } from '../fingerprint/hash.js';
import { evaluateCallRules, degrade, type Finding } from './call-rules.js';
import { CycleTracker, type CycleFinding } from './cycle.js';
import type { LoopEngine } from './engine.js';
import {
  ARGS_NOVEL, CallHistory, EXEMPT, HAS_ARGS, HAS_RESULT, INFORMATIVE, OK, sameHash, UNKNOWN_TOOL, WAIT,
} from './history.js';
import { describeDetection } from './messages.js';
import type { Evidence, LoopDetection, LoopLevel, ToolCall, ToolOutcome } from './types.js';

const EVIDENCE_BY_RANK: readonly Evidence[] = ['name', 'result', 'arguments', 'arguments+result'];
const MAX_EMITTED = 512;
const SEEN_TOOL = 1;
const SEEN_ARGS = 2;
const RECENT_BATCHES = 8;

function evidenceRank(flags: number): number {
  const args = (flags & HAS_ARGS) !== 0;
  const result = (flags & HAS_RESULT) !== 0 || (flags & OK) === 0; // an error is a captured outcome
  return args && result ? 3 : args ? 2 : result && (flags & (INFORMATIVE | OK)) !== OK ? 1 : 0;
}

/** A call the detector remembers, as hashes (see `TraceDetector.recentCalls`). */
export interface RecordedCall {
  readonly toolName: string;
  /** Absent when the arguments were not captured. */
  readonly argsHash?: Hash;
  /** Rebuilt from the packed history: an error's printable label is not kept. */
  readonly outcome: ToolOutcome;
  readonly startTime: number;
  readonly endTime: number;
}

interface PendingStep {
  readonly batch: number;
  readonly sigs: Hash[];
  readonly acc: UnorderedHash;
  readonly tool: Hash;
  rank: number;
  allPollers: boolean;
  start: number;
  end: number;
  /** End of the step's first-recorded call, and its record number (`TraceDetector.calls`). */
  readonly firstEnd: number;
  readonly firstRecord: number;
}

/**
 * Loop detection for one trace: remembers its recent calls (bounded), groups parallel calls into
 * steps, runs the rules on every call and the cycle rule on every completed step, and reports
 * each (signature, level) once.
 */
export class TraceDetector {
  // Not readonly: `fork()` replaces them with copies.
  private history: CallHistory;
  private cycles: CycleTracker;
  private emitted: Set<number> | undefined;
  /** The keys of the last `RECENT_BATCHES` batches, a ring: key of batch id `i` at `i % RECENT_BATCHES`. */
  private batchKeys: Array<string | undefined> | undefined;
  private nextBatch = 0;
  private pending: PendingStep | undefined;
  private lastStepEnd = Number.NaN;
  private calls = 0;

  constructor(
    private readonly engine: LoopEngine,
    readonly traceId: string,
  ) {
    this.history = new CallHistory(engine.config.historySize);
    this.cycles = new CycleTracker(engine.config.maxPeriod);
  }

  /** Tool calls recorded so far. */
  get callCount(): number {
    return this.calls;
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
    this.calls++;
    const engine = this.engine;
    const policy = engine.policies.get(call.toolName);
    const tool = engine.toolHash(call.toolName);
    const batch = this.batchId(call.batch);
    const args = call.argsHash ?? Number.NaN;
    let flags = 0;
    let out: Hash;
    if (call.outcome.ok) {
      flags |= OK;
      out = call.outcome.resultHash ?? Number.NaN;
      if (call.outcome.resultHash !== undefined) flags |= HAS_RESULT;
      if (call.outcome.informative) flags |= INFORMATIVE;
    } else {
      out = call.outcome.errorClass;
      if (call.outcome.unknownTool) flags |= UNKNOWN_TOOL;
    }
    if (engine.config.knownTools && !engine.config.knownTools.has(call.toolName)) flags |= UNKNOWN_TOOL;
    const seen = this.seen(tool, args);
    if (call.argsHash !== undefined) {
      flags |= HAS_ARGS;
      if ((seen & SEEN_ARGS) === 0) flags |= ARGS_NOVEL;
    }
    if (policy.role === 'wait') flags |= WAIT;
    if (policy.role === 'exempt') flags |= EXEMPT;
    this.history.add(tool, args, out, flags, batch, call.startTime, call.endTime);

    const found: Finding[] = [];
    if (this.pending && this.pending.batch !== batch) this.closeStep(found);
    if ((flags & (WAIT | EXEMPT)) === 0) {
      const sig = combine(combine(tool, args), out * 2 + (flags & OK));
      this.addToStep(batch, tool, sig, flags, policy.role === 'poller', call);
    }
    if (batchComplete) this.closeStep(found);
    // The first call of a tool in the trace counts 1 for every call rule: nothing to find below 2.
    if ((seen & SEEN_TOOL) !== 0 || policy.minCallThreshold <= 1) {
      const findings = evaluateCallRules({
        history: this.history,
        policy,
        config: engine.config,
        tool,
        toolHash: tool,
        args,
        out,
        flags,
        inCycle: this.cycles.inCycle,
      });
      for (const f of findings) found.push(f);
    }
    return this.report(found, call);
  }

  /**
   * What `record(call, batchComplete)` would report now, without recording anything: the
   * dispatcher guard asks this before a call runs, with the outcome it expects. Unlike `record`,
   * nothing is de-duplicated: every finding at or above a threshold is reported at its level, as
   * often as it is asked (the guard keeps its own count of interventions).
   */
  preview(call: ToolCall, batchComplete = true): LoopDetection[] {
    return this.fork().record(call, batchComplete);
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
          : { ok: false, errorClass: outHash, unknownTool: (flags & UNKNOWN_TOOL) !== 0 };
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

  /** A copy with its own state; `emitted` starts empty so a preview reports every level reached. */
  private fork(): TraceDetector {
    const f = new TraceDetector(this.engine, this.traceId);
    f.history = this.history.clone();
    f.cycles = this.cycles.clone();
    f.batchKeys = this.batchKeys?.slice();
    f.nextBatch = this.nextBatch;
    const p = this.pending;
    if (p) {
      // The accumulator is an order-independent sum of the distinct signatures: re-adding rebuilds it.
      const acc = new UnorderedHash();
      for (const sig of p.sigs) acc.add(sig);
      f.pending = { ...p, sigs: [...p.sigs], acc };
    }
    f.lastStepEnd = this.lastStepEnd;
    f.calls = this.calls;
    return f;
  }

  /** Whether the remembered calls include this tool (`SEEN_TOOL`), with these arguments (`SEEN_ARGS`). */
  private seen(tool: Hash, args: Hash): number {
    const h = this.history;
    let seen = 0;
    for (let i = h.size - 1; i >= 0; i--) {
      if (h.tool(i) !== tool) continue;
      seen = SEEN_TOOL;
      if (sameHash(h.args(i), args)) return SEEN_TOOL | SEEN_ARGS;
    }
    return seen;
  }

  /** Batch keys are strings from the caller; the history stores small numbers (consecutive ids). */
  private batchId(key: string): number {
    const keys = (this.batchKeys ??= new Array<string | undefined>(RECENT_BATCHES).fill(undefined));
    const oldest = Math.max(0, this.nextBatch - RECENT_BATCHES);
    for (let id = this.nextBatch - 1; id >= oldest; id--) if (keys[id % RECENT_BATCHES] === key) return id;
    const id = this.nextBatch++;
    keys[id % RECENT_BATCHES] = key;
    return id;
  }

  private addToStep(batch: number, tool: Hash, sig: Hash, flags: number, poller: boolean, call: ToolCall): void {
    let step = this.pending;
    if (!step) {
      step = {
        batch,
        sigs: [],
        acc: new UnorderedHash(),
        tool,
        rank: 3,
        allPollers: true,
        start: call.startTime,
        end: call.endTime,
        firstEnd: call.endTime,
        firstRecord: this.calls,
      };
      this.pending = step;
    }
    step.rank = Math.min(step.rank, evidenceRank(flags));
    step.allPollers &&= poller;
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
    if (!step || step.sigs.length === 0) return;
    const idleBefore = Number.isNaN(this.lastStepEnd) ? 0 : step.start - this.lastStepEnd;
    this.lastStepEnd = step.end;
    const cycle = this.cycles.push(step.acc.digest(0x53), {
      tool: step.tool,
      evidenceRank: step.rank,
      allPollers: step.allPollers,
      idleBefore,
      firstEnd: step.firstEnd,
      firstRecord: step.firstRecord,
    });
    if (cycle) {
      const f = this.cycleFinding(cycle);
      if (f) found.push(f);
    }
  }

  private cycleFinding(c: CycleFinding): Finding | undefined {
    const evidence = EVIDENCE_BY_RANK[c.evidenceRank] ?? 'name';
    const config = this.engine.config;
    const base = c.allPollers
      ? (this.engine.policies.pollerThresholds.cycle)
      : config.thresholds.cycle;
    const thresholds =
      evidence === 'arguments+result'
        ? base
        : evidence === 'name'
          ? { warning: base.warning + 2, critical: Number.POSITIVE_INFINITY }
          : { warning: base.warning + 1, critical: base.critical + 2 };
    // Laps spaced far apart in time (round-robin polling) weigh less, as spaced repeats do.
    const value = c.minIdle >= config.spacing.idleMs ? 1 + (c.laps - 1) * config.spacing.weight : c.laps;
    if (value < Math.min(thresholds.warning, thresholds.critical)) return undefined;
    return {
      rule: 'cycle',
      kind: 'cycle',
      key: c.key,
      value,
      count: c.laps,
      thresholds,
      evidence,
      cycleLength: c.period,
      cycleTools: c.tools,
      firstEnd: c.firstEnd,
      firstBack: this.calls - c.firstRecord,
    };
  }

  private report(found: Finding[], call: ToolCall): LoopDetection[] {
    if (found.length === 0) return [];
    const out: LoopDetection[] = [];
    for (const f of found) {
      const level: LoopLevel | undefined =
        f.value >= f.thresholds.critical ? 'critical' : f.value >= f.thresholds.warning ? 'warning' : undefined;
      if (!level || !this.firstTime(f.key, level)) continue;
      const cycleTools = f.cycleTools?.map((t) => this.engine.toolName(t));
      out.push({
        kind: f.kind,
        level,
        toolName: call.toolName,
        count: f.count,
        callIndex: call.callIndex,
        traceId: this.traceId,
        spanId: call.spanId ?? '',
        fingerprint: toHex(f.key),
        ...(call.promptName !== undefined ? { promptName: call.promptName } : {}),
        ...(call.agentName !== undefined ? { agentName: call.agentName } : {}),
        message: describeDetection({
          rule: f.rule,
          toolName: call.toolName,
          count: f.count,
          evidence: f.evidence,
          ...(f.distinctArgs !== undefined ? { distinctArgs: f.distinctArgs } : {}),
          ...(call.outcome.ok === false && call.outcome.errorLabel ? { errorLabel: call.outcome.errorLabel } : {}),
          ...(cycleTools ? { cycleTools } : {}),
        }),
        rule: f.rule,
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

export { degrade };
