/**
 * Grafana's variable interpolation for Prometheus queries, as far as these dashboards use it:
 * `$name` / `${name}` / `[[name]]`, multi-value and All formatting, and the built-in window
 * variables. An unknown variable throws, so a query can only use variables that exist.
 */
import type { DashboardJson, VariableJson } from './dashboard-json.js';

/** Grafana built-ins (`$__...`): ones substituted here, and ones only links or legends use. */
export const BUILT_IN_QUERY_VARIABLES = ['__range', '__range_s', '__range_ms', '__rate_interval', '__rate_interval_ms', '__interval', '__interval_ms'] as const;
export const BUILT_IN_LINK_VARIABLES = ['__url_time_range', '__field', '__value', '__data', '__series'] as const;

/** `$x`, `${x}`, `${x:fmt}`, `${x.path}`, `[[x]]`: the name is group 1, 2 or 3. */
const REFERENCE = /\$(\w+)|\$\{(\w+)(?::\w+)?(?:\.[^}]*)?\}|\[\[(\w+)(?::\w+)?\]\]/g;

/** Names of every variable referenced in `text`. */
export function referencedVariables(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(REFERENCE)) {
    const name = m[1] ?? m[2] ?? m[3];
    if (name !== undefined) names.push(name);
  }
  return names;
}

export interface Windows {
  readonly rangeSeconds: number;
  readonly rateSeconds: number;
  /** $__interval: a graph's step. */
  readonly intervalSeconds?: number;
}

/** Selected values per variable name; a missing multi-value variable means All. */
export type VariableValues = Readonly<Record<string, string | readonly string[] | undefined>>;

// Grafana's prometheusSpecialRegexEscape: regex metacharacters get a (PromQL-escaped) backslash.
const regexEscape = (v: string): string => v.replace(/[\\^$*+?.()|{}[\]]/g, '\\\\$&');
// Grafana's prometheusRegularEscape, for single-value variables.
const regularEscape = (v: string): string => v.replace(/\\/g, '\\\\').replace(/'/g, "\\\\'");

function formatVariable(variable: VariableJson, value: string | readonly string[] | undefined): string {
  if (variable.type === 'datasource' || variable.type === 'custom' || (!variable.multi && !variable.includeAll)) {
    const single = Array.isArray(value) ? value[0] : value;
    if (typeof single !== 'string') throw new Error(`no value for single-value variable $${variable.name}`);
    return variable.type === 'query' ? regularEscape(single) : single;
  }
  if (value === undefined) {
    if (!variable.includeAll || variable.allValue === undefined) throw new Error(`$${variable.name} has no All value`);
    return variable.allValue;
  }
  const values = typeof value === 'string' ? [value] : value;
  const escaped = values.map(regexEscape);
  return escaped.length === 1 ? (escaped[0] ?? '') : `(${escaped.join('|')})`;
}

/** A PromQL duration; milliseconds when the window is not whole seconds (the tests cut windows on scrape times). */
const duration = (seconds: number): string => (Number.isInteger(seconds) ? `${seconds}s` : `${Math.round(seconds * 1000)}ms`);

function builtIn(name: string, w: Windows): string | undefined {
  const interval = w.intervalSeconds ?? w.rateSeconds;
  switch (name) {
    case '__range':
      return duration(w.rangeSeconds);
    case '__range_s':
      return String(Math.round(w.rangeSeconds));
    case '__range_ms':
      return String(Math.round(w.rangeSeconds * 1000));
    case '__rate_interval':
      return duration(w.rateSeconds);
    case '__rate_interval_ms':
      return String(Math.round(w.rateSeconds * 1000));
    case '__interval':
      return duration(interval);
    case '__interval_ms':
      return String(Math.round(interval * 1000));
    default:
      return undefined;
  }
}

/** `text` with every variable replaced as Grafana would for these selections and windows. */
export function interpolate(text: string, dashboard: DashboardJson, values: VariableValues, windows: Windows): string {
  return text.replace(REFERENCE, (match: string, a?: string, b?: string, c?: string) => {
    const name = a ?? b ?? c ?? '';
    const fixed = builtIn(name, windows);
    if (fixed !== undefined) return fixed;
    const variable = dashboard.templating.list.find((v) => v.name === name);
    if (!variable) throw new Error(`${dashboard.uid}: ${match} is not a dashboard variable or a Grafana built-in`);
    return formatVariable(variable, values[name]);
  });
}
