/**
 * What every dashboard query must return, computed from the traffic's in-process truth for a
 * scenario (selected variables and time windows). One entry per query of the committed JSON;
 * the test fails for a query without an entry, so no panel ships unproven.
 */
import { ALERTS, LABELS, METRICS, SOURCE_LABELS, type LabelName } from '../../../dashboards/src/config.js';
import type { Metric, Phase, Selection, TimeWindow, Truth } from './truth.js';

const P = LABELS.prompt;
const TT = LABELS.tokenType;
const T = LABELS.tool;
const K = LABELS.kind;
const S = SOURCE_LABELS.service;

/** The labels a firing loopwatch alert is told apart by (ALERTS series). */
export const ALERT_LABELS = ['alertname', 'severity', S, P, T, K] as const;

export interface Scenario {
  readonly name: string;
  readonly selection: Selection;
  /** $__range */
  readonly range: TimeWindow;
  /** $__rate_interval */
  readonly rate: TimeWindow;
  /** ${baseline} (drill-down only) */
  readonly baseline?: TimeWindow;
}

/** Exact series: these label groups (values of `by`) with these values; NaN means NaN. */
export interface GroupsExpectation {
  readonly kind: 'groups';
  readonly by: readonly string[];
  readonly values: ReadonlyMap<string, number>;
  /** For rate-per-minute queries: summing a range query's steps gives these increments back. */
  readonly increments?: ReadonlyMap<string, number>;
}

/** "Last seen" timestamps (epoch ms) within [min, max] per group. */
export interface BoundsExpectation {
  readonly kind: 'bounds';
  readonly by: readonly string[];
  readonly bounds: ReadonlyMap<string, readonly [number, number]>;
}

/**
 * A panel reading a recording rule of the shipped rules: these groups (from the truth), each with
 * the value of `reference`, the rule's own definition over the raw counters evaluated by Prometheus
 * at the rule's last evaluation time (rates over 5 minutes are Prometheus' extrapolation, not counts).
 */
export interface RecordedExpectation {
  readonly kind: 'recorded';
  readonly by: readonly string[];
  readonly groups: ReadonlySet<string>;
  readonly reference: string;
}

export type Expectation = GroupsExpectation | BoundsExpectation | RecordedExpectation;

export interface AlertRuleInfo {
  readonly severity: ReadonlyMap<string, string>;
}

type Values = Map<string, number>;

const mapValues = (m: ReadonlyMap<string, number>, f: (v: number, k: string) => number): Values => new Map([...m].map(([k, v]) => [k, f(v, k)]));

/** PromQL `a / b` (one-to-one on the group). */
function divide(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): Values {
  const out: Values = new Map();
  for (const [k, v] of a) {
    const d = b.get(k);
    if (d !== undefined) out.set(k, v / d);
  }
  return out;
}

/** PromQL `a or (0 * b)`. */
function orZero(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): Values {
  const out: Values = new Map(a);
  for (const k of b.keys()) if (!out.has(k)) out.set(k, 0);
  return out;
}

/** PromQL `b > 0` as a filter. */
const positive = (m: ReadonlyMap<string, number>): Values => new Map([...m].filter(([, v]) => v > 0));

const single = (value: number | undefined): Values => new Map(value === undefined ? [] : [['', value]]);

export class ExpectationContext {
  constructor(
    private readonly truth: Truth,
    readonly scenario: Scenario,
    private readonly alerts: AlertRuleInfo,
    private readonly phaseOrder: readonly Phase[],
    /** $__interval: a graph's step, and "last loop"'s resolution. */
    private readonly stepSeconds: number,
  ) {}

  count(metric: Metric, by: readonly LabelName[], window: TimeWindow = this.scenario.range, withPrompt = true): Values {
    return this.truth.count(metric, this.scenario.selection, by, window, { withPrompt });
  }

  groups(by: readonly LabelName[], values: ReadonlyMap<string, number>, increments?: ReadonlyMap<string, number>): GroupsExpectation {
    return { kind: 'groups', by, values, ...(increments ? { increments } : {}) };
  }

  /** Per minute over the rate window; its range query sums back to the increments. */
  perMinute(metric: Metric, by: readonly LabelName[]): GroupsExpectation {
    const window = this.scenario.rate;
    const counts = this.count(metric, by, window);
    return this.groups(
      by,
      mapValues(counts, (v) => (v * 60) / window.seconds),
      counts,
    );
  }

  /** 100 * (detections or 0 * calls) / (calls > 0) */
  per100(by: readonly LabelName[], window: TimeWindow): Values {
    const calls = this.count('calls', by, window);
    return mapValues(divide(orZero(this.count('detections', by, window), calls), positive(calls)), (v) => 100 * v);
  }

  /** 100 * this selection's detections / all templates' detections (same tools and kinds). */
  share(window: TimeWindow): Values {
    return mapValues(divide(this.count('detections', [], window), this.count('detections', [], window, false)), (v) => 100 * v);
  }

  /** ALERTS{alertstate="firing"} of loopwatch's rules for the selected services and templates, by every label. */
  firingAlerts(): GroupsExpectation {
    const all: TimeWindow = { phases: new Set(this.phaseOrder), seconds: 0 };
    const { service, prompt } = this.scenario.selection;
    const sel: Selection = { ...(service ? { service } : {}), ...(prompt ? { prompt } : {}) };
    const values: Values = new Map();
    const severity = (name: string): string => this.alerts.severity.get(name) ?? '?';
    // First loops of a template, per service: fires for every one with a detection (the test's Prometheus is new).
    for (const key of this.truth.count('detections', sel, [S, P], all).keys()) {
      values.set([ALERTS.names.firstLoops, severity(ALERTS.names.firstLoops), key, '', ''].join(' | '), 1);
    }
    // Critical stops: per service, template, tool and kind with a critical detection in the last 10 minutes (all of the test).
    for (const key of this.truth.count('criticals', sel, [S, P, T, K], all).keys()) {
      values.set([ALERTS.names.criticalStops, severity(ALERTS.names.criticalStops), key].join(' | '), 1);
    }
    return { kind: 'groups', by: ALERT_LABELS, values };
  }

  /** The scenario's service and template selection as PromQL matchers on the raw counters. */
  private rawMatchers(): string {
    const { service, prompt } = this.scenario.selection;
    const anyOf = (label: string, values: readonly string[] | undefined): string[] =>
      values ? [`${label}=~"${values.map((v) => v.replace(/[\\^$*+?.()|{}[\]]/g, '\\\\$&')).join('|')}"`] : [];
    return [...anyOf(S, service), ...anyOf(P, prompt)].join(', ');
  }

  /**
   * A panel on the loop-rate recording rule (per minute, or per 100 tool calls with `perCall`),
   * grouped by `by`: the groups with loop series for the selected services and templates, whatever
   * tools and kinds are selected (the rules sum over them).
   */
  recordedLoopRate(by: readonly LabelName[], options: { perCall?: boolean; offset?: string; window?: string } = {}): RecordedExpectation {
    const all: TimeWindow = { phases: new Set(this.phaseOrder), seconds: 0 };
    const { service, prompt } = this.scenario.selection;
    const sel: Selection = { ...(service ? { service } : {}), ...(prompt ? { prompt } : {}) };
    const sum = (metric: string): string =>
      `sum${by.length ? ` by (${by.join(', ')})` : ''} (rate(${metric}{${this.rawMatchers()}}[${options.window ?? '5m'}]${options.offset ? ` offset ${options.offset}` : ''}))`;
    const loops = new Set(this.truth.count('detections', sel, by, all).keys());
    const calls = new Set(this.truth.count('calls', sel, by, all).keys());
    const groups = options.offset ? new Set<string>() : options.perCall ? new Set([...loops].filter((k) => calls.has(k))) : loops;
    const reference = options.perCall
      ? `100 * ${sum(METRICS.loopDetections)} / (${sum(METRICS.toolCalls)} > 0)`
      : `60 * ${sum(METRICS.loopDetections)}`;
    return { kind: 'recorded', by, groups, reference };
  }

  /**
   * "Last loop": the end of the last step ($__interval) in the range in which the group grew, so
   * within one step after the scrape that showed its last increment. That scrape was taken
   * between the start of the phase that made it and the moment the test saw the phase complete.
   */
  lastSeen(by: readonly LabelName[]): BoundsExpectation {
    const inRange = positive(this.count('detections', by));
    const last = this.truth.lastPhase('detections', this.scenario.selection, by, this.phaseOrder);
    const step = this.stepSeconds * 1000;
    const bounds = new Map<string, readonly [number, number]>();
    for (const key of inRange.keys()) {
      const phase = last.get(key);
      const times = phase === undefined ? undefined : this.truth.phaseTimes.get(phase);
      if (!times) throw new Error(`no times for the last phase of ${key}`);
      bounds.set(key, [times.emitted, times.visible + step]);
    }
    return { kind: 'bounds', by, bounds };
  }
}

type ExpectationTable = Readonly<Record<string, (c: ExpectationContext) => Expectation>>;

/** Queries that both dashboards have, with the same meaning. */
const SHARED: ExpectationTable = {
  'Loop detections/A': (c) => c.groups([], c.count('detections', [])),
  'Critical stops/A': (c) => c.groups([], c.count('criticals', [])),
  'Loops per 100 tool calls/A': (c) => c.groups([], c.per100([], c.scenario.range)),
  'Tool calls/A': (c) => c.groups([], c.count('calls', [])),
  'Firing loop alerts/A': (c) => c.firingAlerts(),
  'annotation/Loop alerts firing': (c) => c.firingAlerts(),
  // a sum over no series is no value ("no prices" when no selected template is priced)
  'Tokens burned in loops/A': (c) => c.groups([], c.count('loopTokens', [])),
  'Cost of loops/A': (c) => c.groups([], c.count('loopCost', [])),
};

export const OVERVIEW_EXPECTATIONS: ExpectationTable = {
  ...SHARED,
  'Templates looping/A': (c) => {
    const looping = positive(c.count('detections', [P])).size;
    return c.groups([], single(looping > 0 ? looping : undefined));
  },
  'Loop alerts firing/A': (c) => {
    const n = c.firingAlerts().values.size;
    return c.groups([], single(n > 0 ? n : undefined));
  },
  'Loop detections per minute by prompt template/A': (c) => c.recordedLoopRate([P]),
  'Loops per 100 tool calls by prompt template/A': (c) => c.recordedLoopRate([P], { perCall: true }),
  'Prompt templates/A': (c) => c.groups([P], c.count('calls', [P])),
  'Prompt templates/B': (c) => c.groups([P], orZero(c.count('detections', [P]), c.count('calls', [P]))),
  'Prompt templates/C': (c) => c.groups([P], c.per100([P], c.scenario.range)),
  'Prompt templates/D': (c) => c.groups([P], orZero(c.count('criticals', [P]), c.count('calls', [P]))),
  'Prompt templates/E': (c) => c.lastSeen([P]),
  'Top looping tools/A': (c) => {
    const all = [...c.count('detections', [T, P])].sort(([, a], [, b]) => b - a);
    const cut = all[9]?.[1];
    // Ties at the 10th place would make topk's choice arbitrary; this traffic has fewer groups.
    if (all.length > 10 && all[10]?.[1] === cut) throw new Error('topk(10) tie in the test traffic: change the traffic');
    return c.groups([T, P], new Map(all.slice(0, 10)));
  },
  'Loop kinds/A': (c) => c.groups([K], c.count('detections', [K])),
  'Critical stops per minute by prompt template/A': (c) => c.perMinute('criticals', [P]),
  'Loop detections per minute by tool/A': (c) => c.perMinute('detections', [T]),
  'Loop detections per minute by kind/A': (c) => c.perMinute('detections', [K]),
  'Tokens burned in loops per minute by prompt template/A': (c) => c.perMinute('loopTokens', [P]),
  'Cost of loops by prompt template/A': (c) => {
    const all = [...c.count('loopCost', [P])].sort(([, a], [, b]) => b - a);
    if (all.length > 10 && all[10]?.[1] === all[9]?.[1]) throw new Error('topk(10) tie in the test traffic: change the traffic');
    return c.groups([P], new Map(all.slice(0, 10)));
  },
};

function baselineWindow(c: ExpectationContext): TimeWindow {
  const b = c.scenario.baseline;
  if (!b) throw new Error(`scenario ${c.scenario.name} has no baseline window`);
  return b;
}

export const PROMPT_TEMPLATE_EXPECTATIONS: ExpectationTable = {
  ...SHARED,
  'Now vs. baseline (×)/A': (c) => {
    const base = baselineWindow(c);
    const now = mapValues(c.count('detections', [], c.scenario.rate), (v) => v / c.scenario.rate.seconds);
    const normal = mapValues(c.count('detections', [], base), (v) => v / base.seconds);
    return c.groups([], divide(now, normal));
  },
  'Share of all loops/A': (c) => c.groups([], c.share(c.scenario.range)),
  'Loop rate vs. its baseline/A': (c) => c.recordedLoopRate([]),
  // The hour before the last 5 minutes: before this test's Prometheus existed, so no series.
  'Loop rate vs. its baseline/B': (c) => c.recordedLoopRate([], { window: '1h', offset: '5m' }),
  'Loops per 100 tool calls over time/A': (c) => c.recordedLoopRate([], { perCall: true }),
  'Share of all loops over time/A': (c) => c.groups([], c.share(c.scenario.rate)),
  'Loop detections per minute by tool/A': (c) => c.perMinute('detections', [T]),
  'Loop detections per minute by kind/A': (c) => c.perMinute('detections', [K]),
  'Tools and kinds behind the loops/A': (c) => c.groups([T, K], c.count('detections', [T, K])),
  'Tools and kinds behind the loops/B': (c) => c.groups([T, K], orZero(c.count('criticals', [T, K]), c.count('detections', [T, K]))),
  'Tools and kinds behind the loops/C': (c) => {
    const calls = c.count('calls', [T]);
    const out: Values = new Map();
    for (const key of c.count('detections', [T, K]).keys()) {
      const n = calls.get(key.split(' | ')[0] ?? '');
      if (n !== undefined) out.set(key, n);
    }
    return c.groups([T, K], out);
  },
  'Tools and kinds behind the loops/D': (c) => {
    const calls = positive(c.count('calls', [T]));
    const out: Values = new Map();
    for (const [key, loops] of c.count('detections', [T, K])) {
      const n = calls.get(key.split(' | ')[0] ?? '');
      if (n !== undefined) out.set(key, (100 * loops) / n);
    }
    return c.groups([T, K], out);
  },
  'Tools and kinds behind the loops/E': (c) => c.lastSeen([T, K]),
  'Tool calls per minute by tool/A': (c) => c.perMinute('calls', [T]),
  'Critical stops per minute by tool/A': (c) => c.perMinute('criticals', [T]),
  'Tokens burned in loops per minute by token type/A': (c) => c.perMinute('loopTokens', [TT]),
};
