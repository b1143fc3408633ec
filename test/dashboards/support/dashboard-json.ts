/**
 * The committed dashboard JSON as the tests read it: a minimal typed view (what Grafana reads
 * from the classic model), checked on load, and the list of every query in it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DASHBOARDS } from '../../../dashboards/src/config.js';

export const REPO_ROOT = join(import.meta.dirname, '../../..');

export interface DatasourceRef {
  readonly type?: string;
  readonly uid?: string;
}

export interface GridPos {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

export interface TargetJson {
  readonly refId?: string;
  readonly expr?: string;
  readonly legendFormat?: string;
  readonly instant?: boolean;
  readonly range?: boolean;
  readonly format?: string;
  readonly datasource?: DatasourceRef;
}

export interface OverrideJson {
  readonly matcher: { readonly id: string; readonly options?: unknown };
  readonly properties: readonly { readonly id: string; readonly value?: unknown }[];
}

export interface PanelJson {
  readonly id?: number;
  readonly type: string;
  readonly title?: string;
  readonly description?: string;
  readonly gridPos?: GridPos;
  readonly datasource?: DatasourceRef;
  readonly targets?: readonly TargetJson[];
  readonly panels?: readonly PanelJson[];
  readonly collapsed?: boolean;
  readonly transformations?: readonly { readonly id: string; readonly options?: Record<string, unknown> }[];
  readonly fieldConfig?: {
    readonly defaults?: { readonly unit?: string; readonly links?: readonly { readonly url?: string; readonly title?: string }[]; readonly thresholds?: unknown };
    readonly overrides?: readonly OverrideJson[];
  };
}

export interface VariableJson {
  readonly type: string;
  readonly name: string;
  readonly query?: unknown;
  readonly definition?: string;
  readonly datasource?: DatasourceRef;
  readonly multi?: boolean;
  readonly includeAll?: boolean;
  readonly allValue?: string;
  readonly current?: { readonly text?: unknown; readonly value?: unknown };
  readonly options?: readonly { readonly text: string; readonly value: string }[];
}

export interface AnnotationJson {
  readonly name: string;
  readonly datasource?: DatasourceRef;
  readonly expr?: string;
  readonly titleFormat?: string;
  readonly textFormat?: string;
}

export interface DashboardJson {
  readonly uid: string;
  readonly title: string;
  readonly description?: string;
  readonly editable?: boolean;
  readonly schemaVersion: number;
  readonly panels: readonly PanelJson[];
  readonly templating: { readonly list: readonly VariableJson[] };
  readonly annotations: { readonly list?: readonly AnnotationJson[] };
  readonly links?: readonly { readonly url?: string; readonly title?: string; readonly tooltip?: string }[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses and checks the fields every test relies on, so a malformed file fails with its name. */
export function parseDashboard(text: string, name: string): DashboardJson {
  const value: unknown = JSON.parse(text);
  const fail = (what: string): never => {
    throw new Error(`${name}: ${what}`);
  };
  if (!isObject(value)) return fail('not an object');
  if (typeof value.uid !== 'string' || typeof value.title !== 'string') fail('uid and title must be strings');
  if (typeof value.schemaVersion !== 'number') fail('schemaVersion must be a number');
  if (!Array.isArray(value.panels) || !value.panels.every((p) => isObject(p) && typeof p.type === 'string')) fail('panels must be objects with a type');
  if (!isObject(value.templating) || !Array.isArray(value.templating.list)) fail('templating.list must be an array');
  if (!isObject(value.annotations)) fail('annotations must be an object');
  return value as unknown as DashboardJson;
}

export function loadDashboard(file: string): DashboardJson {
  return parseDashboard(readFileSync(join(REPO_ROOT, 'dashboards', file), 'utf8'), file);
}

export const loadDashboards = (): { readonly overview: DashboardJson; readonly promptTemplate: DashboardJson } => ({
  overview: loadDashboard(DASHBOARDS.overview.file),
  promptTemplate: loadDashboard(DASHBOARDS.promptTemplate.file),
});

/** Every panel, row members included. */
export function allPanels(d: DashboardJson): PanelJson[] {
  return d.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

/** One query Grafana sends: a panel target or an annotation. */
export interface QueryRef {
  /** `<panel title>/<refId>`, or `annotation/<name>`: unique within a dashboard. */
  readonly key: string;
  readonly panel: PanelJson | undefined;
  readonly expr: string;
  readonly legendFormat: string | undefined;
  /** Graphs run range queries; stats, bars and tables instant ones. */
  readonly range: boolean;
}

export function queriesOf(d: DashboardJson): QueryRef[] {
  const out: QueryRef[] = [];
  for (const panel of allPanels(d)) {
    for (const t of panel.targets ?? []) {
      out.push({ key: `${panel.title ?? ''}/${t.refId ?? ''}`, panel, expr: t.expr ?? '', legendFormat: t.legendFormat, range: t.range === true && t.instant !== true });
    }
  }
  for (const a of d.annotations.list ?? []) {
    if (a.expr !== undefined) out.push({ key: `annotation/${a.name}`, panel: undefined, expr: a.expr, legendFormat: undefined, range: true });
  }
  return out;
}
