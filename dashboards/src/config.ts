/**
 * The one place that names loopwatch's metrics, labels, alerts, datasource and dashboards.
 * Dashboards, provisioning files and docs/dashboards.md are generated from it; tests hold the
 * collector config (gateway.yaml), the Prometheus rules and the engine's loop kinds to it, so
 * none of them can drift apart silently.
 */
import type { LoopKind, LoopLevel } from '../../src/detector/types.js';

/** Prometheus names of the contract metrics (docs/alerts.md) and of what loops cost. */
export const METRICS = {
  /** One count per `loop.detected` span event: a loop is counted at its warning and again if it turns critical. */
  loopDetections: 'gen_ai_tool_loop_detections_total',
  /** One count per gen_ai `execute_tool` span: the denominator of "loops per tool call". */
  toolCalls: 'gen_ai_tool_calls_total',
  /**
   * Tokens of the model calls inside detected loops (a looping trace's bill, from the end of its
   * loop's first call to the end of the trace), by prompt template and token type.
   */
  loopTokens: 'gen_ai_tool_loop_tokens_total',
  /** Their USD, where the configuration's `prices` cover the model. */
  loopCost: 'gen_ai_tool_loop_cost_usd_total',
} as const;

/** Prometheus label names of the contract metrics. */
export const LABELS = {
  prompt: 'gen_ai_prompt_name',
  tool: 'gen_ai_tool_name',
  kind: 'loop_kind',
  level: 'loop_level',
  /** `input` / `output`, on the loop tokens (as the gen_ai conventions' token usage metrics have it). */
  tokenType: 'gen_ai_token_type',
} as const;

/**
 * Labels of where a series came from, which the rules keep and the dashboards filter on:
 * the Prometheus scrape (`job`: the gateways' scrape job; `instance`: one gateway) and the agent's
 * service (`exported_job`: the collector's prometheus exporter puts service.name in `job`, and
 * Prometheus renames it on scrape with honor_labels off, the default).
 */
export const SOURCE_LABELS = {
  job: 'job',
  instance: 'instance',
  service: 'exported_job',
} as const;

export type LabelName = (typeof LABELS)[keyof typeof LABELS] | (typeof SOURCE_LABELS)[keyof typeof SOURCE_LABELS];

/**
 * Recording rules of collector-config/prometheus/loopwatch.rules.yml that panels read, so a graph
 * shows exactly what the alert beside it evaluates. Level: the labels they keep.
 */
export const RECORDED = {
  loopRate5m: 'job_exported_job_gen_ai_prompt_name:gen_ai_tool_loop_detections:rate5m',
  loopRate1h: 'job_exported_job_gen_ai_prompt_name:gen_ai_tool_loop_detections:rate1h',
  toolCallRate5m: 'job_exported_job_gen_ai_prompt_name:gen_ai_tool_calls:rate5m',
  loopsPerToolCall5m: 'job_exported_job_gen_ai_prompt_name:gen_ai_tool_loop_detections_per_tool_call:ratio_rate5m',
} as const;

/** Labels of each metric, in the contract's order. */
export const METRIC_LABELS = {
  [METRICS.loopDetections]: [LABELS.kind, LABELS.level, LABELS.tool, LABELS.prompt],
  [METRICS.toolCalls]: [LABELS.tool, LABELS.prompt],
  [METRICS.loopTokens]: [LABELS.prompt, LABELS.tokenType],
  [METRICS.loopCost]: [LABELS.prompt],
} as const;

/** What the collector's count connector writes when a span has no prompt template (or tool, kind...). */
export const UNKNOWN_LABEL_VALUE = 'unknown';

export const LEVELS = { warning: 'warning', critical: 'critical' } as const satisfies Record<LoopLevel, LoopLevel>;

/** Every loop kind the engine emits, with the sentence dashboards show for it. */
export const LOOP_KINDS = {
  repeat: 'the same call (same arguments, same outcome) again and again',
  no_progress: 'different arguments, same result: rephrasing that gets nowhere',
  cycle: 'a sequence of calls (A → B → A → B) repeating with the same results',
  error_pattern: 'the same failure again and again (same call, or same error class over changing arguments)',
  unknown_tool: 'calls to a tool that does not exist',
} as const satisfies Record<LoopKind, string>;

/**
 * How the gateway (collector-config/gateway.yaml) keeps sparse counters: its Prometheus exporter
 * drops a series `metricExpiration` after its last increment, and delta_to_cumulative forgets
 * the running total `deltaMaxStale` after it. So a series that comes back within
 * (deltaMaxStale - metricExpiration) of vanishing continues its old total, and one that comes
 * back later starts again from its new increments. The dashboards count increments accordingly.
 */
export const COLLECTOR_SERIES = {
  metricExpirationMinutes: 60,
  deltaMaxStaleMinutes: 75,
} as const;

/** How far before a window to look for a series' previous value (see COLLECTOR_SERIES). */
export const SERIES_GAP = `${COLLECTOR_SERIES.deltaMaxStaleMinutes - COLLECTOR_SERIES.metricExpirationMinutes}m`;

/** The Prometheus datasource the provisioning file creates and the dashboards default to. */
export const DATASOURCE = {
  uid: 'loopwatch-prometheus',
  name: 'Prometheus (loopwatch)',
  type: 'prometheus',
  /** Where Grafana reaches Prometheus unless LOOPWATCH_PROMETHEUS_URL says otherwise. */
  defaultUrl: 'http://127.0.0.1:9090',
  /**
   * Prometheus' scrape interval for the gateways. Grafana's $__rate_interval is at least four of
   * these, so a rate window always holds several samples.
   */
  scrapeInterval: '15s',
} as const;

/**
 * The alert rules shipped in collector-config/prometheus/loopwatch.rules.yml (owned by the
 * collector config). Dashboards draw their thresholds from here; a test checks that the rules
 * file still uses these names and numbers.
 */
export const ALERTS = {
  rulesFile: 'collector-config/prometheus/loopwatch.rules.yml',
  namePrefix: 'Loopwatch',
  names: {
    spike: 'LoopwatchLoopRateSpike',
    ratio: 'LoopwatchHighLoopsPerToolCall',
    firstLoops: 'LoopwatchFirstLoopsForTemplate',
    criticalStops: 'LoopwatchCriticalLoopStops',
    loopSpend: 'LoopwatchLoopSpendHigh',
    loopTokens: 'LoopwatchLoopTokensHigh',
  },
  /** Spike alert: the 5-minute loop rate must be above this many detections per second... */
  spikeFloorPerSecond: 0.03,
  /** ...and this many times the template's rate in the hour before. */
  spikeFactor: 3,
  /** Ratio alert: loop detections per tool call above this (0.1 = 10 per 100 calls). */
  loopsPerToolCall: 0.1,
  /** Spend alert: a template's loops cost more than this many USD within an hour. */
  loopSpendUsdPerHour: 5,
  /** Token alert, for templates whose models have no price: more tokens than this within an hour. */
  loopTokensPerHour: 2_000_000,
} as const;

/** The spike alert's floor in detections per minute, as the graphs plot it (1.8, not 1.7999999999999998). */
export const SPIKE_FLOOR_PER_MINUTE = Math.round(ALERTS.spikeFloorPerSecond * 60 * 1e6) / 1e6;

export const DASHBOARDS = {
  overview: {
    uid: 'loopwatch-overview',
    title: 'Agent loops — overview',
    file: 'loopwatch-overview.json',
  },
  promptTemplate: {
    uid: 'loopwatch-prompt-template',
    title: 'Agent loops — prompt template drill-down',
    file: 'loopwatch-prompt-template.json',
  },
} as const;

/** Tags on every loopwatch dashboard (dashboard links find each other by them). */
export const DASHBOARD_TAGS = ['loopwatch', 'agent-loops', 'gen_ai'];

/** Grafana folder the provisioned dashboards land in. */
export const GRAFANA_FOLDER = { title: 'Agent loops', uid: 'loopwatch' } as const;

/** Dashboard variable names (the `var-...` URL parameters). */
export const VARIABLES = {
  datasource: 'datasource',
  job: 'job',
  instance: 'instance',
  service: 'service',
  prompt: 'prompt_template',
  tool: 'tool',
  kind: 'loop_kind',
  baseline: 'baseline',
} as const;
