/**
 * "Agent loops — overview": which prompt templates loop, on which tools, what kind of loop, how
 * often runs had to be stopped, and whether it is getting worse.
 */
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { ALERTS, DASHBOARDS, LABELS, LOOP_KINDS, METRICS, RECORDED, SPIKE_FLOOR_PER_MINUTE } from './config.js';
import { BILL, criticalStopsStat, firingAlertsTable, loopCostStat, loopDetectionsStat, loopTokensStat, ratioStat, ratioThresholds, skeleton, toolCallsStat } from './common-panels.js';
import { Layout } from './layout.js';
import { dashboardLink, drillDownFromCell, drillDownFromSeries } from './links.js';
import { bargauge, COLORS, PER_MINUTE, stat, table, thresholds, timeseries } from './panels.js';
import { count, detections, firingLoopAlerts, lastSeenMs, loopSpend, orZero, per100ToolCalls, perMinute, recorded, sumBy, total, toolCalls, WINDOW } from './promql.js';
import { datasourceVariable, kindVariable, promptVariable, sourceVariables, toolVariable } from './variables.js';

const SCOPE = 'for the selected prompt templates, tools and loop kinds';
const CALLS_SCOPE = 'of the selected prompt templates and tools';
const P = LABELS.prompt;

export function overviewDashboard(): Dashboard {
  const d = skeleton(
    DASHBOARDS.overview.uid,
    DASHBOARDS.overview.title,
    'Tool-call loops that loopwatch detected in LLM agent runs, per prompt template. Start here when a Loopwatch alert fires; click a template to drill down.',
  )
    .withVariable(datasourceVariable());
  for (const v of sourceVariables()) d.withVariable(v);
  d.withVariable(promptVariable(true))
    .withVariable(toolVariable())
    .withVariable(kindVariable())
    .link(dashboardLink('Prompt template drill-down', DASHBOARDS.promptTemplate.uid));
  const layout = new Layout(d);

  layout
    .row('Right now')
    .add(loopDetectionsStat(SCOPE), 4, 4)
    .add(criticalStopsStat(SCOPE), 4, 4)
    .add(ratioStat(SCOPE), 4, 4)
    .add(toolCallsStat(CALLS_SCOPE), 4, 4)
    .add(
      stat({
        title: 'Templates looping',
        description: 'How many prompt templates had at least one loop detection in the selected time range. One template: look at its prompt or tools; many at once: look at a shared model, tool or deployment change.',
        unit: 'none',
        decimals: 0,
        query: { expr: `count(${total(detections(), [P], WINDOW.range)} > 0)` },
        thresholds: thresholds(COLORS.ok, [1, COLORS.watch]),
      }),
      4,
      4,
    )
    .add(
      stat({
        title: 'Loop alerts firing',
        description: `Loopwatch alerts firing now in Prometheus (${Object.values(ALERTS.names).join(', ')}), for the selected templates. Needs Prometheus to load ${ALERTS.rulesFile}.`,
        unit: 'none',
        decimals: 0,
        query: { expr: `count(${firingLoopAlerts()})` },
        thresholds: thresholds(COLORS.ok, [1, COLORS.bad]),
      }),
      4,
      4,
    )
    .add(
      firingAlertsTable(
        `What paged: every firing Loopwatch alert with its prompt template (and tool and loop kind for critical stops). Empty means no alert is firing, or Prometheus does not load ${ALERTS.rulesFile}.`,
      ),
      24,
      6,
    );

  layout
    .row('Which prompt template is looping?')
    .add(
      timeseries({
        title: 'Loop detections per minute by prompt template',
        description: `Loop detections per minute over the last 5 minutes, per prompt template, all tools and loop kinds: the recording rule ${ALERTS.names.spike} evaluates, so the line and the dashed floor (${SPIKE_FLOOR_PER_MINUTE}/min) show exactly what it sees; it fires above the floor when the last 5 minutes are ${ALERTS.spikeFactor}× the hour before. A line that jumps is the template to look at; click it to drill down.`,
        unit: PER_MINUTE,
        decimals: 2,
        queries: [{ expr: `60 * ${sumBy([P], recorded(RECORDED.loopRate5m))}`, legend: `{{${P}}}` }],
        thresholdLines: thresholds(COLORS.ok, [SPIKE_FLOOR_PER_MINUTE, COLORS.bad]),
        links: [drillDownFromSeries()],
      }),
      12,
      8,
    )
    .add(
      timeseries({
        title: 'Loops per 100 tool calls by prompt template',
        description: `Loop detections per 100 tool calls over the last 5 minutes, per prompt template, all tools and loop kinds, from the recording rules ${ALERTS.names.ratio} evaluates: loopiness independent of traffic. A busy template can loop often and still be healthy here. Dashed red: the alert's threshold (${ALERTS.loopsPerToolCall * 100} per 100 calls for 15 minutes).`,
        unit: 'none',
        decimals: 1,
        queries: [{ expr: `100 * ${sumBy([P], recorded(RECORDED.loopRate5m))} / (${sumBy([P], recorded(RECORDED.toolCallRate5m))} > 0)`, legend: `{{${P}}}` }],
        thresholdLines: ratioThresholds(),
        links: [drillDownFromSeries()],
      }),
      12,
      8,
    )
    .add(
      table({
        title: 'Prompt templates',
        description: 'Every prompt template with tool calls in the selected time range: its calls, loop detections, loops per 100 calls, critical stops and when it last looped. Click a template to drill down.',
        queries: [
          { expr: count(toolCalls(), [P], WINDOW.range) },
          { expr: `round(${orZero(total(detections(), [P], WINDOW.range), total(toolCalls(), [P], WINDOW.range))})` },
          { expr: per100ToolCalls([P], WINDOW.range) },
          { expr: `round(${orZero(total(detections({ critical: true }), [P], WINDOW.range), total(toolCalls(), [P], WINDOW.range))})` },
          { expr: lastSeenMs(detections(), [P], WINDOW.range, WINDOW.step) },
        ],
        columns: [
          { field: P, header: 'Prompt template', links: [drillDownFromCell()] },
          { field: 'Value #A', header: 'Tool calls', unit: 'short', decimals: 0 },
          { field: 'Value #B', header: 'Loop detections', unit: 'none', decimals: 0 },
          { field: 'Value #C', header: 'Loops per 100 tool calls', unit: 'none', decimals: 1, thresholds: ratioThresholds(), colored: true },
          { field: 'Value #D', header: 'Critical stops', unit: 'none', decimals: 0, thresholds: thresholds(COLORS.ok, [1, COLORS.bad]), colored: true },
          { field: 'Value #E', header: 'Last loop', unit: 'dateTimeFromNow' },
        ],
        hide: ['Time'],
        sortBy: 'Loop detections',
        sortDescending: true,
        noValue: 'No tool calls in this range',
      }),
      24,
      8,
    );

  layout
    .row('What do the loops cost?')
    .add(loopTokensStat('of the selected prompt templates'), 4, 8)
    .add(loopCostStat('of the selected prompt templates'), 4, 8)
    .add(
      timeseries({
        title: 'Tokens burned in loops per minute by prompt template',
        description: `Tokens (input and output) of the model calls inside detected loops, per minute, per prompt template. ${BILL}`,
        unit: 'short',
        decimals: 0,
        stacked: true,
        queries: [{ expr: perMinute(loopSpend(METRICS.loopTokens), [P]), legend: `{{${P}}}` }],
        links: [drillDownFromSeries()],
      }),
      8,
      8,
    )
    .add(
      bargauge({
        title: 'Cost of loops by prompt template',
        description: `USD of the model calls inside detected loops in the selected time range, the 10 costliest prompt templates. ${BILL} Only models in loopwatch's \`prices\` configuration have a cost; red from ${ALERTS.loopSpendUsdPerHour} USD, where ${ALERTS.names.loopSpend} fires within an hour.`,
        unit: 'currencyUSD',
        decimals: 2,
        query: { expr: `topk(10, ${total(loopSpend(METRICS.loopCost), [P], WINDOW.range)})`, legend: `{{${P}}}` },
        thresholds: thresholds(COLORS.watch, [ALERTS.loopSpendUsdPerHour, COLORS.bad]),
      }),
      8,
      8,
    );

  layout
    .row('Which tools, which kinds?')
    .add(
      bargauge({
        title: 'Top looping tools',
        description: 'The 10 tool / prompt template pairs with the most loop detections in the selected time range. A tool that loops under every template points at the tool (its errors or its output); one template only points at the prompt.',
        unit: 'none',
        decimals: 0,
        query: { expr: `topk(10, ${count(detections(), [LABELS.tool, P], WINDOW.range)})`, legend: `{{${LABELS.tool}}} · {{${P}}}` },
        thresholds: thresholds(COLORS.watch),
      }),
      8,
      9,
    )
    .add(
      bargauge({
        title: 'Loop kinds',
        description: `Loop detections by kind in the selected time range. ${Object.entries(LOOP_KINDS)
          .map(([k, v]) => `${k}: ${v}`)
          .join('; ')}.`,
        unit: 'none',
        decimals: 0,
        query: { expr: count(detections(), [LABELS.kind], WINDOW.range), legend: `{{${LABELS.kind}}}` },
        thresholds: thresholds(COLORS.watch),
      }),
      8,
      9,
    )
    .add(
      timeseries({
        title: 'Critical stops per minute by prompt template',
        description: 'Critical loop detections per minute, per prompt template: runs stopped (or that should have been). Bars, since each one is an agent run lost.',
        unit: PER_MINUTE,
        decimals: 2,
        bars: true,
        queries: [{ expr: perMinute(detections({ critical: true }), [P]), legend: `{{${P}}}` }],
        links: [drillDownFromSeries()],
      }),
      8,
      9,
    )
    .add(
      timeseries({
        title: 'Loop detections per minute by tool',
        description: 'Loop detections per minute, per tool, over all selected templates. When a tool starts failing or returning nothing useful, agents loop on it: this is where that shows.',
        unit: PER_MINUTE,
        decimals: 2,
        queries: [{ expr: perMinute(detections(), [LABELS.tool]), legend: `{{${LABELS.tool}}}` }],
      }),
      12,
      8,
    )
    .add(
      timeseries({
        title: 'Loop detections per minute by kind',
        description: 'Loop detections per minute, per loop kind, stacked. error_pattern growing: a tool or upstream is failing. repeat / no_progress: the agent does not use what the tool returned. cycle: two steps undo each other.',
        unit: PER_MINUTE,
        decimals: 2,
        stacked: true,
        bars: true,
        queries: [{ expr: perMinute(detections(), [LABELS.kind]), legend: `{{${LABELS.kind}}}` }],
      }),
      12,
      8,
    );

  return d.build();
}
