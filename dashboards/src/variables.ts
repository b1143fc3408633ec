/**
 * Dashboard variables: the datasource, and prompt template / tool / loop kind pickers filled
 * from the metrics themselves.
 */
import {
  CustomVariableBuilder,
  DatasourceVariableBuilder,
  QueryVariableBuilder,
  VariableRefresh,
  VariableSort,
  type VariableOption,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { DATASOURCE, LABELS, LOOP_KINDS, METRICS, SOURCE_LABELS, UNKNOWN_LABEL_VALUE, VARIABLES, type LabelName } from './config.js';
import { DS } from './panels.js';

/** "All" matches every value, including a missing label (so a template named "unknown" is never lost). */
export const ALL_VALUE = '.*';
/** "All" for the scrape's own labels, which every scraped series has (Grafana's dashboard-linter convention). */
export const ALL_PRESENT = '.+';

export function datasourceVariable(): DatasourceVariableBuilder {
  return new DatasourceVariableBuilder(VARIABLES.datasource)
    .label('Data source')
    .description('The Prometheus that scrapes the loopwatch collector gateways.')
    .type(DATASOURCE.type)
    .current({ text: DATASOURCE.name, value: DATASOURCE.uid });
}

interface LabelValuesSpec {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  readonly metric: string;
  readonly valuesOf: LabelName;
  /** Narrow by other variables, e.g. the tools of the selected templates. */
  readonly filters?: readonly { readonly label: LabelName; readonly variable: string }[];
  readonly multi: boolean;
  /** The regex "All" stands for (default ALL_VALUE). */
  readonly allValue?: string;
}

/**
 * A label_values() variable. Grafana's Prometheus variable editor stores the query as fields
 * (metric, label filters, label) and renders `label_values(...)` from them, so both forms are
 * written, from the same spec.
 */
function labelValues(spec: LabelValuesSpec): QueryVariableBuilder {
  const filters = spec.filters ?? [];
  const selector = filters.length === 0 ? spec.metric : `${spec.metric}{${filters.map((f) => `${f.label}=~"$${f.variable}"`).join(',')}}`;
  const definition = `label_values(${selector},${spec.valuesOf})`;
  const v = new QueryVariableBuilder(spec.name)
    .label(spec.label)
    .description(spec.description)
    .datasource(DS)
    .query({
      qryType: 1,
      query: definition,
      metric: spec.metric,
      label: spec.valuesOf,
      labelFilters: filters.map((f) => ({ label: f.label, op: '=~', value: `$${f.variable}` })),
      refId: 'PrometheusVariableQueryEditor-VariableQuery',
    })
    .definition(definition)
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc)
    .multi(spec.multi)
    .includeAll(spec.multi);
  if (spec.multi) v.allValue(spec.allValue ?? ALL_VALUE).current({ text: ['All'], value: ['$__all'] });
  return v;
}

/** The Prometheus scrape jobs of the loopwatch gateways (usually one: `loopwatch-gateway`). */
export function jobVariable(): QueryVariableBuilder {
  return labelValues({
    name: VARIABLES.job,
    label: 'Job',
    description: 'Prometheus scrape job of the loopwatch collector gateways.',
    metric: METRICS.toolCalls,
    valuesOf: SOURCE_LABELS.job,
    multi: true,
    allValue: ALL_PRESENT,
  });
}

/** One gateway (scrape target); All sums over them, as the rules do. */
export function instanceVariable(): QueryVariableBuilder {
  return labelValues({
    name: VARIABLES.instance,
    label: 'Instance',
    description: 'Collector gateway (scrape target). Each gateway counts the spans it received; All adds them up.',
    metric: METRICS.toolCalls,
    valuesOf: SOURCE_LABELS.instance,
    filters: [{ label: SOURCE_LABELS.job, variable: VARIABLES.job }],
    multi: true,
    allValue: ALL_PRESENT,
  });
}

/** The agents' service.name: one prompt template name can exist in several services. */
export function serviceVariable(): QueryVariableBuilder {
  return labelValues({
    name: VARIABLES.service,
    label: 'Service',
    description: `The agents' service.name (Prometheus label ${SOURCE_LABELS.service}: the collector exports it as job, Prometheus renames it on scrape). The same prompt template name in two services is two templates.`,
    metric: METRICS.toolCalls,
    valuesOf: SOURCE_LABELS.service,
    filters: [{ label: SOURCE_LABELS.job, variable: VARIABLES.job }],
    multi: true,
  });
}

/** Prompt templates that made tool calls (not only those that looped: a quiet template is news too). */
export function promptVariable(multi: boolean): QueryVariableBuilder {
  return labelValues({
    name: VARIABLES.prompt,
    label: 'Prompt template',
    description: `gen_ai.prompt.name of the agent runs; "${UNKNOWN_LABEL_VALUE}" collects runs without one.`,
    metric: METRICS.toolCalls,
    valuesOf: LABELS.prompt,
    filters: [
      { label: SOURCE_LABELS.job, variable: VARIABLES.job },
      { label: SOURCE_LABELS.service, variable: VARIABLES.service },
    ],
    multi,
  });
}

/** The variables that pick where series come from, in the order the dashboards show them. */
export function sourceVariables(): QueryVariableBuilder[] {
  return [jobVariable(), instanceVariable(), serviceVariable()];
}

export function toolVariable(): QueryVariableBuilder {
  return labelValues({
    name: VARIABLES.tool,
    label: 'Tool',
    description: 'Tools called by the selected prompt templates.',
    metric: METRICS.toolCalls,
    valuesOf: LABELS.tool,
    filters: [
      { label: SOURCE_LABELS.service, variable: VARIABLES.service },
      { label: LABELS.prompt, variable: VARIABLES.prompt },
    ],
    multi: true,
  });
}

export function kindVariable(): QueryVariableBuilder {
  return labelValues({
    name: VARIABLES.kind,
    label: 'Loop kind',
    description: `${Object.keys(LOOP_KINDS).join(', ')}. Filters loop panels only (tool calls have no kind).`,
    metric: METRICS.loopDetections,
    valuesOf: LABELS.kind,
    multi: true,
  });
}

/** Baseline windows for the drill-down; values in seconds so queries can divide by them. */
export const BASELINE_OPTIONS: readonly VariableOption[] = [
  { text: '1 hour', value: '3600' },
  { text: '6 hours', value: '21600' },
  { text: '1 day', value: '86400' },
  { text: '7 days', value: '604800' },
];

export function baselineVariable(): CustomVariableBuilder {
  const [first] = BASELINE_OPTIONS;
  if (!first) throw new Error('no baseline options');
  return new CustomVariableBuilder(VARIABLES.baseline)
    .label('Baseline window')
    .description("The template's normal: its average loop rate over this window (the spike alert uses the hour before the last 5 minutes).")
    .values(BASELINE_OPTIONS.map((o) => `${String(o.text)} : ${String(o.value)}`).join(','))
    .options(BASELINE_OPTIONS.map((o) => ({ ...o, selected: o === first })))
    .current({ text: first.text, value: first.value })
    .multi(false)
    .includeAll(false);
}
