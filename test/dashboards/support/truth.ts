/**
 * The in-process truth behind the dashboard query tests: every loop detection the processor
 * reported (onLoop) and every tool call the agent apps made, tagged with the traffic phase that
 * produced it. Expected panel values are computed from this, never from constants.
 */
import type { LoopDetection, TraceLoopSummary } from '../../../src/index.js';
import type { RunRecord } from '../../e2e/support/agent-traffic.js';
import { UNKNOWN } from '../../e2e/support/truth.js';
import { LABELS, LEVELS, SOURCE_LABELS, type LabelName } from '../../../dashboards/src/config.js';

export type Phase = string;

/** One counter increment, with the labels the collector gives it; by `value` (tokens, USD), or by 1. */
export interface Observation {
  readonly phase: Phase;
  readonly labels: Readonly<Partial<Record<LabelName, string>>>;
  readonly value?: number;
}

/** Which values of a variable are selected; undefined = All. */
export interface Selection {
  /** exported_job: the agents' service.name. */
  readonly service?: readonly string[];
  readonly prompt?: readonly string[];
  readonly tool?: readonly string[];
  readonly kind?: readonly string[];
}

/** A window of the test's timeline: which phases' increments fall inside it, and its length. */
export interface TimeWindow {
  readonly phases: ReadonlySet<Phase>;
  readonly seconds: number;
}

/** Group key: the values of `by` labels joined, '' for a single ungrouped value. */
export type Groups = ReadonlyMap<string, number>;

export const groupKey = (labels: Readonly<Record<string, string | undefined>>, by: readonly string[]): string =>
  by.map((l) => labels[l] ?? '').join(' | ');

export type Metric = 'detections' | 'criticals' | 'calls' | 'loopTokens' | 'loopCost';

export class Truth {
  readonly detections: Observation[] = [];
  readonly calls: Observation[] = [];
  /** What each looping trace's loops cost (onTraceEnd): tokens by type, and USD where priced. */
  readonly loopTokens: Observation[] = [];
  readonly loopCost: Observation[] = [];
  /** When each phase started emitting, and when Prometheus was seen holding all of it (epoch ms). */
  readonly phaseTimes = new Map<Phase, { emitted: number; visible: number }>();

  /** Detections reported by the agent app of `service` (its service.name: exported_job in Prometheus). */
  addDetections(phase: Phase, service: string, detections: readonly LoopDetection[]): void {
    for (const d of detections) {
      this.detections.push({
        phase,
        labels: { [SOURCE_LABELS.service]: service, [LABELS.prompt]: d.promptName ?? UNKNOWN, [LABELS.tool]: d.toolName, [LABELS.kind]: d.kind, [LABELS.level]: d.level },
      });
    }
  }

  addSummaries(phase: Phase, service: string, summaries: readonly TraceLoopSummary[]): void {
    for (const s of summaries) {
      const prompt = s.promptName ?? UNKNOWN;
      const source = { [SOURCE_LABELS.service]: service, [LABELS.prompt]: prompt };
      const tokens = s.loop?.tokens;
      if (tokens && tokens.input > 0) this.loopTokens.push({ phase, labels: { ...source, [LABELS.tokenType]: 'input' }, value: tokens.input });
      if (tokens && tokens.output > 0) this.loopTokens.push({ phase, labels: { ...source, [LABELS.tokenType]: 'output' }, value: tokens.output });
      const usd = s.loop?.costUsd;
      if (usd !== undefined && usd > 0) this.loopCost.push({ phase, labels: source, value: usd });
    }
  }

  addRuns(phase: Phase, service: string, runs: readonly RunRecord[]): void {
    for (const r of runs) {
      for (const tool of r.toolCalls) this.calls.push({ phase, labels: { [SOURCE_LABELS.service]: service, [LABELS.prompt]: r.template ?? UNKNOWN, [LABELS.tool]: tool } });
    }
  }

  private observations(metric: Metric, selection: Selection, withPrompt: boolean): Observation[] {
    const pass = (values: readonly string[] | undefined, v: string | undefined): boolean => values === undefined || (v !== undefined && values.includes(v));
    // a loop's bill has no tool or kind: only the service and the template select it
    if (metric === 'loopTokens' || metric === 'loopCost') {
      return (metric === 'loopTokens' ? this.loopTokens : this.loopCost).filter(
        (o) => pass(selection.service, o.labels[SOURCE_LABELS.service]) && (!withPrompt || pass(selection.prompt, o.labels[LABELS.prompt])),
      );
    }
    const source = metric === 'calls' ? this.calls : this.detections;
    return source.filter(
      (o) =>
        pass(selection.service, o.labels[SOURCE_LABELS.service]) &&
        (!withPrompt || pass(selection.prompt, o.labels[LABELS.prompt])) &&
        pass(selection.tool, o.labels[LABELS.tool]) &&
        (metric === 'calls' || pass(selection.kind, o.labels[LABELS.kind])) &&
        (metric !== 'criticals' || o.labels[LABELS.level] === LEVELS.critical),
    );
  }

  /**
   * Increments within `window`, summed by `by`, for every group that has a counter series at the
   * end of the test (a series that exists but did not grow counts 0, as `increase()` says).
   */
  count(metric: Metric, selection: Selection, by: readonly LabelName[], window: TimeWindow, options: { withPrompt?: boolean } = {}): Map<string, number> {
    const out = new Map<string, number>();
    for (const o of this.observations(metric, selection, options.withPrompt ?? true)) {
      const key = groupKey(o.labels, by);
      out.set(key, (out.get(key) ?? 0) + (window.phases.has(o.phase) ? (o.value ?? 1) : 0));
    }
    return out;
  }

  /** The phase of the last increment of each group (for "last seen"). */
  lastPhase(metric: Metric, selection: Selection, by: readonly LabelName[], order: readonly Phase[]): Map<string, Phase> {
    const out = new Map<string, Phase>();
    for (const o of this.observations(metric, selection, true)) {
      const key = groupKey(o.labels, by);
      const prev = out.get(key);
      if (prev === undefined || order.indexOf(o.phase) > order.indexOf(prev)) out.set(key, o.phase);
    }
    return out;
  }
}
