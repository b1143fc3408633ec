/**
 * Panels both dashboards show, and the dashboard skeleton they share (time, tags, annotations).
 */
import { AnnotationQueryBuilder, DashboardBuilder, DashboardCursorSync } from '@grafana/grafana-foundation-sdk/dashboard';
import { ALERTS, DASHBOARD_TAGS, LABELS, METRICS } from './config.js';
import { COLORS, DS, stat, table, thresholds, type StatOptions } from './panels.js';
import { count, detections, firingLoopAlerts, loopSpend, per100ToolCalls, toolCalls, total, WINDOW } from './promql.js';

/** What a loop's bill is, for the spend panels' descriptions. */
export const BILL =
  "A looping trace's bill: its model calls from the end of the loop's first call to the end of the trace, counted when the trace ends (the processor's Metrics API counters count each call as it ends), under the template of its first detection. The tool and kind filters do not apply to it.";

export function loopCostStat(scope: string): ReturnType<typeof stat> {
  return stat({
    title: 'Cost of loops',
    description: `USD the model calls inside detected loops cost ${scope} in the selected time range. ${BILL} Priced only for models in loopwatch's \`prices\` configuration; "no prices" when none is.`,
    unit: 'currencyUSD',
    decimals: 2,
    query: { expr: `sum(${total(loopSpend(METRICS.loopCost), [], WINDOW.range)})` },
    thresholds: thresholds(COLORS.ok, [0.01, COLORS.watch], [ALERTS.loopSpendUsdPerHour, COLORS.bad]),
    noValue: 'no prices',
  });
}

export function loopTokensStat(scope: string): ReturnType<typeof stat> {
  return stat({
    title: 'Tokens burned in loops',
    description: `Input and output tokens of the model calls inside detected loops ${scope} in the selected time range. ${BILL}`,
    unit: 'short',
    decimals: 0,
    query: { expr: `round(sum(${total(loopSpend(METRICS.loopTokens), [], WINDOW.range)}))` },
    thresholds: thresholds(COLORS.ok, [1, COLORS.watch]),
  });
}

export function skeleton(uid: string, title: string, description: string): DashboardBuilder {
  return new DashboardBuilder(title)
    .uid(uid)
    .description(description)
    .tags(DASHBOARD_TAGS)
    // Provisioned with allowUiUpdates: false and generated from dashboards/src: edits in the UI
    // could not be saved, so the dashboard says it is read-only (dashboard-linter's uneditable rule).
    .readonly()
    .tooltip(DashboardCursorSync.Crosshair)
    .time({ from: 'now-6h', to: 'now' })
    .refresh('1m')
    .timezone('browser')
    .annotation(
      // Shades the time when a loopwatch alert fired, on every graph.
      new AnnotationQueryBuilder()
        .name('Loop alerts firing')
        .datasource(DS)
        .enable(true)
        .iconColor('red')
        .expr(firingLoopAlerts())
        .step('60s')
        .titleFormat('{{alertname}}')
        .textFormat(`{{${LABELS.prompt}}} {{${LABELS.tool}}} {{${LABELS.kind}}}`)
        .tagKeys(['severity', LABELS.prompt].join(','))
        .useValueForTime(false),
    );
}

const RATIO_ALERT_PER_100 = ALERTS.loopsPerToolCall * 100;

/** Colours for "loops per 100 tool calls": orange at half the ratio alert's threshold, red at it. */
export const ratioThresholds = () => thresholds(COLORS.ok, [RATIO_ALERT_PER_100 / 2, COLORS.watch], [RATIO_ALERT_PER_100, COLORS.bad]);

type StatPanel = Pick<StatOptions, 'title' | 'description'>;

export function loopDetectionsStat(scope: string): ReturnType<typeof stat> {
  return stat({
    title: 'Loop detections',
    description: `Loop detections ${scope} in the selected time range. A loop is counted when it first warns and again if it turns critical. Counts a template's very first loops too (a new counter series counts whole).`,
    unit: 'none',
    decimals: 0,
    query: { expr: count(detections(), [], WINDOW.range) },
    thresholds: thresholds(COLORS.ok, [1, COLORS.watch]),
  });
}

export function criticalStopsStat(scope: string): ReturnType<typeof stat> {
  return stat({
    title: 'Critical stops',
    description: `Critical loop detections ${scope} in the selected time range: runs that loopwatch stopped (abortSignal) or that should have been stopped. Anything above 0 cost a whole agent run.`,
    unit: 'none',
    decimals: 0,
    query: { expr: count(detections({ critical: true }), [], WINDOW.range) },
    thresholds: thresholds(COLORS.ok, [1, COLORS.bad]),
  });
}

export function ratioStat(scope: string): ReturnType<typeof stat> {
  return stat({
    title: 'Loops per 100 tool calls',
    description: `Loop detections per 100 tool calls ${scope} in the selected time range. Red from ${RATIO_ALERT_PER_100}, where the ${ALERTS.names.ratio} alert fires (after 15 minutes).`,
    unit: 'none',
    decimals: 1,
    query: { expr: per100ToolCalls([], WINDOW.range) },
    thresholds: ratioThresholds(),
  });
}

export function toolCallsStat(scope: string): ReturnType<typeof stat> {
  const panel: StatPanel = {
    title: 'Tool calls',
    description: `Tool calls (gen_ai execute_tool spans) ${scope} in the selected time range: the traffic the loop numbers are measured against.`,
  };
  return stat({ ...panel, unit: 'short', decimals: 0, query: { expr: count(toolCalls(), [], WINDOW.range) }, thresholds: thresholds(COLORS.neutral) });
}

/** The loopwatch alerts Prometheus has firing now (its ALERTS series): where the page came from. */
export function firingAlertsTable(description: string): ReturnType<typeof table> {
  return table({
    title: 'Firing loop alerts',
    description,
    queries: [{ expr: firingLoopAlerts() }],
    columns: [
      { field: 'alertname', header: 'Alert' },
      { field: 'severity', header: 'Severity' },
      { field: LABELS.prompt, header: 'Prompt template' },
      { field: LABELS.tool, header: 'Tool' },
      { field: LABELS.kind, header: 'Loop kind' },
    ],
    hide: ['Time', 'Value', '__name__', 'alertstate'],
    // critical, info, warning: the worst first.
    sortBy: 'Severity',
    sortDescending: false,
    noValue: 'No loopwatch alert is firing',
    unit: 'string',
  });
}
