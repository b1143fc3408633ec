/**
 * PromQL building blocks for the dashboards. Every panel query is composed from these, so the
 * sparse-counter handling below is the same everywhere.
 */
import { ALERTS, LABELS, LEVELS, METRICS, SERIES_GAP, SOURCE_LABELS, VARIABLES, type LabelName } from './config.js';

/** Grafana's window variables (substituted by Grafana, and by the query tests). */
export const WINDOW = {
  /** The dashboard's whole time range, for single numbers, bars and tables. */
  range: '$__range',
  /** At least four scrapes and one scrape longer than a graph's step (Grafana), for per-minute graphs. */
  rate: '$__rate_interval',
  rateMs: '$__rate_interval_ms',
  /** A graph's step (for a table: Grafana's interval for the panel). */
  step: '$__interval',
  /** The drill-down's baseline window; the variable's value is in seconds. */
  baseline: `\${${VARIABLES.baseline}}s`,
  baselineSeconds: `\${${VARIABLES.baseline}}`,
} as const;

const re = (label: LabelName, variable: string): string => `${label}=~"$${variable}"`;

/** Where a series came from: the gateways' scrape job and instance, and the agents' service. */
const fromSources = (): string[] => [re(SOURCE_LABELS.job, VARIABLES.job), re(SOURCE_LABELS.instance, VARIABLES.instance), re(SOURCE_LABELS.service, VARIABLES.service)];
/** The same for recording rules and alerts, which sum over the gateways (no instance label). */
const fromServices = (): string[] => [re(SOURCE_LABELS.job, VARIABLES.job), re(SOURCE_LABELS.service, VARIABLES.service)];

export interface DetectionFilter {
  /** Filter by the prompt template variable (off for "all templates", the share's denominator). */
  readonly prompt?: boolean;
  /** Only critical detections: the runs that were (or should have been) stopped. */
  readonly critical?: boolean;
}

/** gen_ai_tool_loop_detections_total, filtered by the dashboard's template, tool and kind variables. */
export function detections(filter: DetectionFilter = {}): string {
  const matchers = [
    ...fromSources(),
    ...(filter.prompt === false ? [] : [re(LABELS.prompt, VARIABLES.prompt)]),
    re(LABELS.tool, VARIABLES.tool),
    re(LABELS.kind, VARIABLES.kind),
    ...(filter.critical ? [`${LABELS.level}="${LEVELS.critical}"`] : []),
  ];
  return `${METRICS.loopDetections}{${matchers.join(', ')}}`;
}

/** gen_ai_tool_calls_total, filtered by the template and tool variables (tool calls have no kind). */
export function toolCalls(): string {
  return `${METRICS.toolCalls}{${[...fromSources(), re(LABELS.prompt, VARIABLES.prompt), re(LABELS.tool, VARIABLES.tool)].join(', ')}}`;
}

/**
 * gen_ai_tool_loop_tokens_total or gen_ai_tool_loop_cost_usd_total for the selected templates. A
 * trace's loop bill is counted once, under the template of its first detection: it has no tool or
 * kind, so those variables do not filter it.
 */
export function loopSpend(metric: typeof METRICS.loopTokens | typeof METRICS.loopCost): string {
  return `${metric}{${[...fromSources(), re(LABELS.prompt, VARIABLES.prompt)].join(', ')}}`;
}

/**
 * Counter increments within `window`, per series, exact for sparse counters. The collector
 * creates a loop series at its first count (1, 2...) and drops it an hour after its last one, so
 * `increase()` alone misses a series' first increments and cannot bridge the gap when it comes
 * back. Instead, a series' last value in the window is compared with its last value before the
 * window (looking back SERIES_GAP, see config.ts):
 * - no value before: a new series (or a restarted total) counts whole;
 * - a value before: the difference (exact, no extrapolation at the window's edges);
 * - a smaller value than before (a collector restart reset it): `increase()`, which handles resets.
 */
export function increments(selector: string, window: string): string {
  const last = `last_over_time(${selector}[${window}])`;
  const before = `last_over_time(${selector}[${SERIES_GAP}] offset ${window})`;
  return `(${last} unless ${before}) or (${last} - ${before} >= 0) or increase(${selector}[${window}])`;
}

/** `sum by (labels) (expr)`, or `sum(expr)` without labels. */
export function sumBy(labels: readonly LabelName[], expr: string): string {
  return labels.length === 0 ? `sum(${expr})` : `sum by (${labels.join(', ')}) (${expr})`;
}

/** Increments summed by `labels` within `window`. */
export function total(selector: string, labels: readonly LabelName[], window: string): string {
  return sumBy(labels, increments(selector, window));
}

/** A whole count within `window` (round(): after a counter reset, increase() extrapolates). */
export function count(selector: string, labels: readonly LabelName[], window: string): string {
  return `round(${total(selector, labels, window)})`;
}

/** Per minute over Grafana's rate window: what a graph of loops per minute plots at each step. */
export function perMinute(selector: string, labels: readonly LabelName[]): string {
  return `${total(selector, labels, WINDOW.rate)} * 60000 / ${WINDOW.rateMs}`;
}

/** `expr`, or 0 for every series `zeros` has: a template with tool calls and no loops shows 0, not a gap. */
export function orZero(expr: string, zeros: string): string {
  return `(${expr}) or (0 * ${zeros})`;
}

/** Loop detections per 100 tool calls, by `labels` (templates without calls have no value). */
export function per100ToolCalls(labels: readonly LabelName[], window: string, detectionSelector = detections()): string {
  const calls = total(toolCalls(), labels, window);
  return `100 * (${orZero(total(detectionSelector, labels, window), calls)}) / (${calls} > 0)`;
}

/**
 * Epoch milliseconds of the last step (of `step` length) within `window` in which a group of
 * `labels` grew: "last seen" for a table, accurate to one step. Steps tile time without gaps
 * (each step's increments start where the previous step's end). Subquery steps are aligned to
 * multiples of `step`, so the time since the last whole step is checked on its own (it reads as
 * "now"); and only groups that grew within `window` are kept.
 */
export function lastSeenMs(selector: string, labels: readonly LabelName[], window: string, step: string): string {
  const grew = `${total(selector, labels, step)} > 0`;
  const by = labels.join(', ');
  return `1000 * max by (${by}) (timestamp(${grew}) or max_over_time(timestamp(${grew})[${window}:${step}])) and on (${by}) (${total(selector, labels, window)} > 0)`;
}

/** The firing alerts of loopwatch's rules (Prometheus' ALERTS series), for the selected templates. */
export function firingLoopAlerts(): string {
  return `ALERTS{${['alertstate="firing"', `alertname=~"${ALERTS.namePrefix}.+"`, ...fromServices(), re(LABELS.prompt, VARIABLES.prompt)].join(', ')}}`;
}

/**
 * A recording rule of the shipped rules (RECORDED), for the selected services and templates. The
 * rules keep job, exported_job and gen_ai_prompt_name and sum over tools, kinds and gateways: a
 * panel reading one shows what the alerts evaluate, for all tools and loop kinds.
 */
export function recorded(rule: string, offset?: string): string {
  return `${rule}{${[...fromServices(), re(LABELS.prompt, VARIABLES.prompt)].join(', ')}}${offset ? ` offset ${offset}` : ''}`;
}
