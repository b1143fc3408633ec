/**
 * Panel factories with the defaults every loopwatch panel shares: the datasource variable,
 * a description for newcomers, units, legends and thresholds. Each returns a foundation-SDK
 * builder; layout.ts places it.
 */
import * as common from '@grafana/grafana-foundation-sdk/common';
import { DashboardLinkBuilder, ThresholdsConfigBuilder, ThresholdsMode, type DynamicConfigValue, type Threshold } from '@grafana/grafana-foundation-sdk/dashboard';
import { PanelBuilder as BarGaugeBuilder } from '@grafana/grafana-foundation-sdk/bargauge';
import { DataqueryBuilder, PromQueryFormat } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as TableBuilder } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as TimeseriesBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { DATASOURCE, VARIABLES } from './config.js';

/** Panels and queries use the dashboard's datasource variable (which defaults to DATASOURCE.uid). */
export const DS = { type: DATASOURCE.type, uid: `\${${VARIABLES.datasource}}` };

export interface Query {
  readonly expr: string;
  /** Legend / series name, e.g. `{{gen_ai_prompt_name}}`. */
  readonly legend?: string;
}

/** Grafana's "counts/min" unit, for loop detections and tool calls per minute. */
export const PER_MINUTE = 'cpm';

export const COLORS = { ok: 'green', watch: 'orange', bad: 'red', neutral: 'blue', text: 'text' } as const;

/** Threshold steps: a base colour, then [value, colour] pairs in rising order. */
export function thresholds(base: string, ...steps: (readonly [number, string])[]): ThresholdsConfigBuilder {
  const list: Threshold[] = [{ value: null, color: base }, ...steps.map(([value, color]) => ({ value, color }))];
  return new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps(list);
}

/** Query ids A, B, C... in order: table columns are named after them (`Value #B`). */
export const refId = (index: number): string => String.fromCharCode('A'.charCodeAt(0) + index);

function target(q: Query, kind: 'range' | 'instant' | 'table', index: number): DataqueryBuilder {
  const t = new DataqueryBuilder().refId(refId(index)).datasource(DS).expr(q.expr);
  if (q.legend !== undefined) t.legendFormat(q.legend);
  if (kind === 'range') t.range();
  else t.instant();
  if (kind === 'table') t.format(PromQueryFormat.Table);
  return t;
}

/** A data link, e.g. from a prompt template to its drill-down. */
export function link(title: string, url: string): DashboardLinkBuilder {
  return new DashboardLinkBuilder(title).url(url);
}

interface Common {
  readonly title: string;
  /** Shown as the panel's (i) tooltip: what the panel answers and how to read it. */
  readonly description: string;
  readonly unit: string;
  readonly decimals?: number;
}

export interface StatOptions extends Common {
  readonly query: Query;
  readonly thresholds: ThresholdsConfigBuilder;
  /** Shown when the query has no series (default "0"). */
  readonly noValue?: string;
}

/** One number over the dashboard's range, coloured by thresholds; "0" when there is no series. */
export function stat(o: StatOptions): StatBuilder {
  const p = new StatBuilder()
    .title(o.title)
    .description(o.description)
    .datasource(DS)
    .withTarget(target(o.query, 'instant', 0))
    .unit(o.unit)
    .thresholds(o.thresholds)
    .noValue(o.noValue ?? '0')
    .colorMode(common.BigValueColorMode.Value)
    .graphMode(common.BigValueGraphMode.None)
    .textMode(common.BigValueTextMode.Value)
    .justifyMode(common.BigValueJustifyMode.Center)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false));
  if (o.decimals !== undefined) p.decimals(o.decimals);
  return p;
}

export interface TimeseriesOptions extends Common {
  readonly queries: readonly Query[];
  readonly bars?: boolean;
  readonly stacked?: boolean;
  /** A dashed line (an alert threshold), drawn from the thresholds' steps. */
  readonly thresholdLines?: ThresholdsConfigBuilder;
  readonly links?: readonly DashboardLinkBuilder[];
  readonly overrides?: readonly { readonly name: string; readonly properties: DynamicConfigValue[] }[];
}

/** Lines (or bars) over time with a table legend giving mean, max and last per series. */
export function timeseries(o: TimeseriesOptions): TimeseriesBuilder {
  const p = new TimeseriesBuilder()
    .title(o.title)
    .description(o.description)
    .datasource(DS)
    .unit(o.unit)
    .min(0)
    .lineWidth(2)
    .fillOpacity(o.bars || o.stacked ? 70 : 10)
    .drawStyle(o.bars ? common.GraphDrawStyle.Bars : common.GraphDrawStyle.Line)
    .showPoints(common.VisibilityMode.Never)
    .spanNulls(false)
    .legend(
      new common.VizLegendOptionsBuilder()
        .displayMode(common.LegendDisplayMode.Table)
        .placement(common.LegendPlacement.Bottom)
        .showLegend(true)
        .calcs(['mean', 'max', 'lastNotNull'])
        .sortBy('Max')
        .sortDesc(true),
    )
    .tooltip(new common.VizTooltipOptionsBuilder().mode(common.TooltipDisplayMode.Multi).sort(common.SortOrder.Descending));
  o.queries.forEach((q, i) => p.withTarget(target(q, 'range', i)));
  if (o.decimals !== undefined) p.decimals(o.decimals);
  if (o.stacked) p.stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal));
  if (o.thresholdLines) {
    p.thresholds(o.thresholdLines).thresholdsStyle(new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Dashed));
  } else {
    p.thresholds(thresholds(COLORS.ok));
  }
  if (o.links) p.dataLinks([...o.links]);
  for (const ov of o.overrides ?? []) p.overrideByName(ov.name, ov.properties);
  return p;
}

export interface BarGaugeOptions extends Common {
  readonly query: Query;
  readonly thresholds: ThresholdsConfigBuilder;
}

/** Horizontal bars, one per series of an instant query over the dashboard's range. */
export function bargauge(o: BarGaugeOptions): BarGaugeBuilder {
  const p = new BarGaugeBuilder()
    .title(o.title)
    .description(o.description)
    .datasource(DS)
    .withTarget(target(o.query, 'instant', 0))
    .unit(o.unit)
    .min(0)
    .thresholds(o.thresholds)
    .noValue('no loops in this range')
    .orientation(common.VizOrientation.Horizontal)
    .displayMode(common.BarGaugeDisplayMode.Gradient)
    .valueMode(common.BarGaugeValueMode.Color)
    .namePlacement(common.BarGaugeNamePlacement.Left)
    .showUnfilled(true)
    .sizing(common.BarGaugeSizing.Auto)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false));
  if (o.decimals !== undefined) p.decimals(o.decimals);
  return p;
}

export interface TableColumn {
  /** Query result column (a label name, or `Value #<refId>`). */
  readonly field: string;
  /** Header shown. */
  readonly header: string;
  readonly unit?: string;
  readonly decimals?: number;
  readonly thresholds?: ThresholdsConfigBuilder;
  /** Colour the cell's background by the thresholds. */
  readonly colored?: boolean;
  readonly links?: readonly DashboardLinkBuilder[];
  readonly width?: number;
}

export interface TableOptions {
  readonly title: string;
  readonly description: string;
  /** Instant queries in table format with the same label columns; merged into one row per label set. */
  readonly queries: readonly Query[];
  readonly columns: readonly TableColumn[];
  /** Columns to drop (Time and any scrape label). */
  readonly hide: readonly string[];
  readonly sortBy: string;
  readonly sortDescending: boolean;
  readonly noValue: string;
  /** Unit of the value columns without one of their own (`string` for a table of labels). */
  readonly unit?: string;
}

/** A table of instant queries merged by their labels, columns renamed, unit and colour per column. */
export function table(o: TableOptions): TableBuilder {
  const p = new TableBuilder()
    .title(o.title)
    .description(o.description)
    .datasource(DS)
    .noValue(o.noValue)
    .unit(o.unit ?? 'none')
    .cellHeight(common.TableCellHeight.Sm)
    .filterable(true)
    .sortBy([new common.TableSortByFieldStateBuilder().displayName(o.sortBy).desc(o.sortDescending)]);
  o.queries.forEach((q, i) => p.withTarget(target(q, 'table', i)));
  const indexByName: Record<string, number> = {};
  const renameByName: Record<string, string> = {};
  o.columns.forEach((c, i) => {
    indexByName[c.field] = i;
    renameByName[c.field] = c.header;
  });
  p.withTransformation({ id: 'merge', options: {} });
  p.withTransformation({
    id: 'organize',
    options: { excludeByName: Object.fromEntries(o.hide.map((h) => [h, true])), indexByName, renameByName },
  });
  for (const c of o.columns) {
    const props: DynamicConfigValue[] = [];
    if (c.unit) props.push({ id: 'unit', value: c.unit });
    if (c.decimals !== undefined) props.push({ id: 'decimals', value: c.decimals });
    if (c.thresholds) props.push({ id: 'thresholds', value: c.thresholds.build() });
    if (c.colored) props.push({ id: 'custom.cellOptions', value: { type: 'color-background', mode: 'basic' } });
    if (c.links) props.push({ id: 'links', value: c.links.map((l) => l.build()) });
    if (c.width !== undefined) props.push({ id: 'custom.width', value: c.width });
    if (props.length > 0) p.overrideByName(c.header, props);
  }
  return p;
}
