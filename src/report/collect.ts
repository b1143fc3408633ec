/**
 * Gathers what the HTML report shows while `scan` streams traces: every detection with its time
 * (a few fields each), totals per prompt template, and only the worst traces in full, so memory
 * grows with detections, not with spans.
 */
import { LoopSpendTotals } from '../cost/totals.js';
import type { LoopSpend } from '../cost/trace-cost.js';
import type { LoopDetection } from '../detector/types.js';
import type { ReplayedCall, ReplayedTrace } from '../replay/types.js';

/** The label the collector gives runs without a prompt template; the report uses the same. */
export const NO_TEMPLATE = 'unknown';

export interface TimedDetection {
  readonly time: number;
  readonly detection: LoopDetection;
}

export interface WorstTrace {
  readonly traceId: string;
  readonly prompt: string;
  readonly startTime: number;
  readonly calls: readonly ReplayedCall[];
  readonly detections: readonly TimedDetection[];
  readonly criticals: number;
  /** What its loop cost, when its model calls report usage. */
  readonly loopSpend: LoopSpend | undefined;
}

export interface TemplateTotals {
  traces: number;
  tracesWithLoops: number;
  toolCalls: number;
  detections: number;
  /** Critical stops: runs with a critical detection of this template (a run counts once, however many it had). */
  criticals: number;
}

export interface ReportData {
  readonly detections: readonly TimedDetection[];
  readonly templates: ReadonlyMap<string, Readonly<TemplateTotals>>;
  readonly worst: readonly WorstTrace[];
  /** Earliest and latest time seen (trace starts, detections); NaN when no trace had a tool call. */
  readonly from: number;
  readonly to: number;
  readonly traces: number;
  readonly toolCalls: number;
  readonly tracesWithLoops: number;
  /** Critical stops: runs with at least one critical detection (that were, or should have been, stopped). */
  readonly tracesStopped: number;
  /** What loops cost, per prompt template (that of each trace's first detection) and in total. */
  readonly costs: LoopSpendTotals;
}

/** Worst first: more critical stops, then more detections, then more tool calls. */
function worse(a: WorstTrace, b: WorstTrace): number {
  return b.criticals - a.criticals || b.detections.length - a.detections.length || b.calls.length - a.calls.length || a.traceId.localeCompare(b.traceId);
}

export class ReportCollector {
  private readonly detections: TimedDetection[] = [];
  private readonly templates = new Map<string, TemplateTotals>();
  private worst: WorstTrace[] = [];
  private from = Number.POSITIVE_INFINITY;
  private to = Number.NEGATIVE_INFINITY;
  private traces = 0;
  private toolCalls = 0;
  private tracesWithLoops = 0;
  private tracesStopped = 0;
  private readonly costs = new LoopSpendTotals();

  constructor(private readonly keepWorst = 10) {}

  add(trace: ReplayedTrace): void {
    this.traces++;
    this.toolCalls += trace.toolCalls;
    const prompt = trace.promptName ?? NO_TEMPLATE;
    const totals = this.templates.get(prompt) ?? { traces: 0, tracesWithLoops: 0, toolCalls: 0, detections: 0, criticals: 0 };
    this.templates.set(prompt, totals);
    totals.traces++;
    totals.toolCalls += trace.toolCalls;
    if (Number.isFinite(trace.startTime)) this.widen(trace.startTime);
    for (const c of trace.calls) this.widen(c.endTime);
    if (trace.detections.length === 0) return;

    this.tracesWithLoops++;
    totals.tracesWithLoops++;
    const timed = trace.detections.map((detection, i) => ({ time: trace.detectionTimes[i] ?? trace.startTime, detection }));
    const stoppedIn = new Set<TemplateTotals>();
    for (const t of timed) {
      this.detections.push(t);
      // A detection counts for its own template (a trace can switch templates mid-run).
      const own = t.detection.promptName ?? NO_TEMPLATE;
      const ownTotals = this.templates.get(own) ?? { traces: 0, tracesWithLoops: 0, toolCalls: 0, detections: 0, criticals: 0 };
      this.templates.set(own, ownTotals);
      ownTotals.detections++;
      if (t.detection.level === 'critical') stoppedIn.add(ownTotals);
    }
    for (const totals of stoppedIn) totals.criticals++;
    if (stoppedIn.size > 0) this.tracesStopped++;
    if (trace.loopSpend !== undefined) this.costs.add(trace.loopPrompt ?? NO_TEMPLATE, trace.loopSpend);
    const candidate: WorstTrace = {
      traceId: trace.traceId,
      prompt,
      startTime: trace.startTime,
      calls: trace.calls,
      detections: timed,
      criticals: timed.filter((t) => t.detection.level === 'critical').length,
      loopSpend: trace.loopSpend,
    };
    const last = this.worst.at(-1);
    if (this.worst.length < this.keepWorst || (last && worse(candidate, last) < 0)) {
      this.worst = [...this.worst, candidate].sort(worse).slice(0, this.keepWorst);
    }
  }

  private widen(t: number): void {
    if (t < this.from) this.from = t;
    if (t > this.to) this.to = t;
  }

  result(): ReportData {
    const known = Number.isFinite(this.from);
    return {
      detections: [...this.detections].sort((a, b) => a.time - b.time),
      templates: this.templates,
      worst: this.worst,
      from: known ? this.from : Number.NaN,
      to: known ? this.to : Number.NaN,
      traces: this.traces,
      toolCalls: this.toolCalls,
      tracesWithLoops: this.tracesWithLoops,
      tracesStopped: this.tracesStopped,
      costs: this.costs,
    };
  }
}
