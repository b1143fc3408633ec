/**
 * "Agent loops — prompt template drill-down": one template's loop rate against its own baseline,
 * the tools and kinds behind it, and its share of all loops.
 */
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { ALERTS, DASHBOARDS, LABELS, METRICS, RECORDED, SPIKE_FLOOR_PER_MINUTE } from './config.js';
import { BILL, criticalStopsStat, firingAlertsTable, loopCostStat, loopDetectionsStat, loopTokensStat, ratioStat, ratioThresholds, skeleton, toolCallsStat } from './common-panels.js';
import { Layout } from './layout.js';
import { dashboardLink } from './links.js';
import { COLORS, PER_MINUTE, stat, table, thresholds, timeseries } from './panels.js';
import { count, detections, lastSeenMs, loopSpend, orZero, perMinute, recorded, sumBy, total, toolCalls, WINDOW } from './promql.js';
import { baselineVariable, datasourceVariable, kindVariable, promptVariable, sourceVariables, toolVariable } from './variables.js';

const SCOPE = 'for this prompt template (and the selected tools and loop kinds)';
const CALLS_SCOPE = 'of this prompt template (and the selected tools)';
const TOOL = LABELS.tool;
const KIND = LABELS.kind;

/** Its share (percent) of the detections of all templates, same tools and kinds, within `window`. */
const sharePercent = (window: string): string => `100 * ${total(detections(), [], window)} / ${total(detections({ prompt: false }), [], window)}`;

export function promptTemplateDashboard(): Dashboard {
  const d = skeleton(
    DASHBOARDS.promptTemplate.uid,
    DASHBOARDS.promptTemplate.title,
    "One prompt template's tool-call loops: is it worse than its own normal, which tools and loop kinds are behind it, and how much of all looping it accounts for.",
  )
    .withVariable(datasourceVariable());
  for (const v of sourceVariables()) d.withVariable(v);
  d.withVariable(promptVariable(false))
    .withVariable(toolVariable())
    .withVariable(kindVariable())
    .withVariable(baselineVariable())
    .link(dashboardLink('Agent loops overview', DASHBOARDS.overview.uid));
  const layout = new Layout(d);

  layout
    .row('Is it getting worse?')
    .add(loopDetectionsStat(SCOPE), 4, 4)
    .add(criticalStopsStat(SCOPE), 4, 4)
    .add(ratioStat(SCOPE), 4, 4)
    .add(
      stat({
        title: 'Now vs. baseline (×)',
        description: `Loop rate over the last rate window (about a minute) divided by the template's average over the baseline window. 1× is normal; ${ALERTS.spikeFactor}× is where ${ALERTS.names.spike} starts to care (with at least ${SPIKE_FLOOR_PER_MINUTE} loops/min).`,
        unit: 'none',
        decimals: 1,
        query: { expr: `(${total(detections(), [], WINDOW.rate)} * 1000 / ${WINDOW.rateMs}) / (${total(detections(), [], WINDOW.baseline)} / ${WINDOW.baselineSeconds})` },
        thresholds: thresholds(COLORS.ok, [1.5, COLORS.watch], [ALERTS.spikeFactor, COLORS.bad]),
      }),
      4,
      4,
    )
    .add(
      stat({
        title: 'Share of all loops',
        description: 'This template’s part of the loop detections of all prompt templates (same tools and kinds) in the selected time range. Near 100%: the problem is this template; small: look at the overview for the others.',
        unit: 'percent',
        decimals: 0,
        query: { expr: sharePercent(WINDOW.range) },
        thresholds: thresholds(COLORS.neutral),
      }),
      4,
      4,
    )
    .add(toolCallsStat(CALLS_SCOPE), 4, 4)
    .add(
      timeseries({
        title: 'Loop rate vs. its baseline',
        description: `What ${ALERTS.names.spike} compares, from the recording rules it evaluates (all tools and loop kinds): loop detections per minute over the last 5 minutes (solid) against the template's rate over the hour before them (dashed). The alert fires when the solid line stays above ${ALERTS.spikeFactor}× the dashed one and above the red floor (${SPIKE_FLOOR_PER_MINUTE}/min) for 5 minutes.`,
        unit: PER_MINUTE,
        decimals: 2,
        queries: [
          { expr: `60 * ${sumBy([], recorded(RECORDED.loopRate5m))}`, legend: 'loop detections (5 min)' },
          { expr: `60 * ${sumBy([], recorded(RECORDED.loopRate1h, '5m'))}`, legend: 'baseline (the hour before)' },
        ],
        thresholdLines: thresholds(COLORS.ok, [SPIKE_FLOOR_PER_MINUTE, COLORS.bad]),
        overrides: [
          {
            name: 'baseline (the hour before)',
            properties: [
              { id: 'color', value: { mode: 'fixed', fixedColor: 'text' } },
              { id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } },
              { id: 'custom.fillOpacity', value: 0 },
            ],
          },
        ],
      }),
      16,
      9,
    )
    .add(firingAlertsTable("Loopwatch alerts firing now for this template: the spike, ratio and first-loops alerts by template, critical stops by tool and loop kind."), 8, 9)
    .add(
      timeseries({
        title: 'Loops per 100 tool calls over time',
        description: `Loop detections per 100 tool calls of this template over the last 5 minutes, all tools and loop kinds, from the recording rules ${ALERTS.names.ratio} evaluates: loopiness independent of traffic. Dashed red: the alert's threshold (${ALERTS.loopsPerToolCall * 100} per 100 calls for 15 minutes).`,
        unit: 'none',
        decimals: 1,
        queries: [{ expr: `100 * ${sumBy([], recorded(RECORDED.loopRate5m))} / (${sumBy([], recorded(RECORDED.toolCallRate5m))} > 0)`, legend: 'loops per 100 tool calls' }],
        thresholdLines: ratioThresholds(),
      }),
      12,
      8,
    )
    .add(
      timeseries({
        title: 'Share of all loops over time',
        description: "This template's share (percent) of all templates' loop detections over time, same tools and kinds. Rising share with a flat total: this template got worse; flat share with a rising total: everything did.",
        unit: 'percent',
        decimals: 0,
        queries: [{ expr: sharePercent(WINDOW.rate), legend: 'share of all loop detections' }],
      }),
      12,
      8,
    );

  layout
    .row('What do its loops cost?')
    .add(loopTokensStat('of this prompt template'), 4, 8)
    .add(loopCostStat('of this prompt template'), 4, 8)
    .add(
      timeseries({
        title: 'Tokens burned in loops per minute by token type',
        description: `Input and output tokens of this template's model calls inside detected loops, per minute, stacked. ${BILL} Input dominates when the agent re-sends a growing context on every repetition.`,
        unit: 'short',
        decimals: 0,
        stacked: true,
        queries: [{ expr: perMinute(loopSpend(METRICS.loopTokens), [LABELS.tokenType]), legend: `{{${LABELS.tokenType}}}` }],
      }),
      16,
      8,
    );

  layout
    .row('What is looping?')
    .add(
      timeseries({
        title: 'Loop detections per minute by tool',
        description: 'Which tools this template loops on, over time.',
        unit: PER_MINUTE,
        decimals: 2,
        queries: [{ expr: perMinute(detections(), [TOOL]), legend: `{{${TOOL}}}` }],
      }),
      12,
      8,
    )
    .add(
      timeseries({
        title: 'Loop detections per minute by kind',
        description: 'What kind of loop, over time, stacked. error_pattern: a tool keeps failing; repeat / no_progress: the agent ignores what it got back; cycle: steps undo each other.',
        unit: PER_MINUTE,
        decimals: 2,
        stacked: true,
        bars: true,
        queries: [{ expr: perMinute(detections(), [KIND]), legend: `{{${KIND}}}` }],
      }),
      12,
      8,
    )
    .add(
      table({
        title: 'Tools and kinds behind the loops',
        description: "Each tool and loop kind of this template in the selected time range: detections, critical stops, the tool's calls, detections per 100 of those calls, and when it last looped.",
        queries: [
          { expr: count(detections(), [TOOL, KIND], WINDOW.range) },
          { expr: `round(${orZero(total(detections({ critical: true }), [TOOL, KIND], WINDOW.range), total(detections(), [TOOL, KIND], WINDOW.range))})` },
          { expr: `0 * ${total(detections(), [TOOL, KIND], WINDOW.range)} + on (${TOOL}) group_left () ${count(toolCalls(), [TOOL], WINDOW.range)}` },
          { expr: `100 * ${total(detections(), [TOOL, KIND], WINDOW.range)} / on (${TOOL}) group_left () (${total(toolCalls(), [TOOL], WINDOW.range)} > 0)` },
          { expr: lastSeenMs(detections(), [TOOL, KIND], WINDOW.range, WINDOW.step) },
        ],
        columns: [
          { field: TOOL, header: 'Tool' },
          { field: KIND, header: 'Loop kind' },
          { field: 'Value #A', header: 'Loop detections', unit: 'none', decimals: 0 },
          { field: 'Value #B', header: 'Critical stops', unit: 'none', decimals: 0, thresholds: thresholds(COLORS.ok, [1, COLORS.bad]), colored: true },
          { field: 'Value #C', header: 'Calls of the tool', unit: 'short', decimals: 0 },
          { field: 'Value #D', header: 'Loops per 100 calls of the tool', unit: 'none', decimals: 1, thresholds: ratioThresholds(), colored: true },
          { field: 'Value #E', header: 'Last loop', unit: 'dateTimeFromNow' },
        ],
        hide: ['Time'],
        sortBy: 'Loop detections',
        sortDescending: true,
        noValue: 'No loops in this range',
      }),
      24,
      8,
    )
    .add(
      timeseries({
        title: 'Tool calls per minute by tool',
        description: 'The traffic behind the loops: if loops rise with calls, the template is busier, not worse (compare loops per 100 tool calls).',
        unit: PER_MINUTE,
        decimals: 1,
        queries: [{ expr: perMinute(toolCalls(), [TOOL]), legend: `{{${TOOL}}}` }],
      }),
      12,
      8,
    )
    .add(
      timeseries({
        title: 'Critical stops per minute by tool',
        description: 'Critical loop detections per minute, per tool: the runs of this template that were stopped (or should have been).',
        unit: PER_MINUTE,
        decimals: 2,
        bars: true,
        queries: [{ expr: perMinute(detections({ critical: true }), [TOOL]), legend: `{{${TOOL}}}` }],
      }),
      12,
      8,
    );

  return d.build();
}
