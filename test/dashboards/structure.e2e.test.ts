/**
 * The committed dashboard JSON is well formed for Grafana: unique ids and titles, a grid without
 * overlaps, datasource references that resolve to the provisioned datasource, the current schema
 * version, and every variable a query, legend or link uses defined (and every variable used).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DashboardBuilder } from '@grafana/grafana-foundation-sdk/dashboard';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DATASOURCE, METRICS, RECORDED, SOURCE_LABELS, VARIABLES } from '../../dashboards/src/config.js';
import { GRID_COLUMNS } from '../../dashboards/src/layout.js';
import { PROVISIONING_FILES } from '../../dashboards/src/provisioning.js';
import { allPanels, loadDashboards, queriesOf, REPO_ROOT, type DashboardJson, type DatasourceRef, type PanelJson } from './support/dashboard-json.js';
import { BUILT_IN_LINK_VARIABLES, BUILT_IN_QUERY_VARIABLES, referencedVariables } from './support/grafana-vars.js';

const { overview, promptTemplate } = loadDashboards();
const DASHBOARDS_UNDER_TEST: readonly DashboardJson[] = [overview, promptTemplate];

const provisionedDatasource = (): { uid: string; type: string } => {
  const doc = parse(readFileSync(join(REPO_ROOT, PROVISIONING_FILES.datasource), 'utf8')) as { datasources: { uid: string; type: string }[] };
  const [ds] = doc.datasources;
  if (!ds) throw new Error('no datasource provisioned');
  return ds;
};

const overlaps = (a: PanelJson, b: PanelJson): boolean => {
  const p = a.gridPos;
  const q = b.gridPos;
  if (!p || !q) return false;
  return p.x < q.x + q.w && q.x < p.x + p.w && p.y < q.y + q.h && q.y < p.y + p.h;
};

/** Every string in the dashboard Grafana interpolates: queries, legends, titles, descriptions, links. */
function interpolatedStrings(d: DashboardJson): string[] {
  const out: string[] = [];
  for (const p of allPanels(d)) {
    out.push(p.title ?? '', p.description ?? '');
    for (const t of p.targets ?? []) out.push(t.expr ?? '', t.legendFormat ?? '');
    for (const l of p.fieldConfig?.defaults?.links ?? []) out.push(l.url ?? '', l.title ?? '');
    for (const o of p.fieldConfig?.overrides ?? []) for (const prop of o.properties) if (prop.id === 'links') out.push(JSON.stringify(prop.value));
  }
  for (const a of d.annotations.list ?? []) out.push(a.expr ?? '', a.titleFormat ?? '', a.textFormat ?? '');
  for (const v of d.templating.list) out.push(v.definition ?? '', JSON.stringify(v.query ?? ''));
  for (const l of d.links ?? []) out.push(l.url ?? '');
  return out;
}

describe.each(DASHBOARDS_UNDER_TEST.map((d) => [d.uid, d] as const))('dashboard %s', (_uid, d) => {
  const panels = allPanels(d);
  const visible = panels.filter((p) => p.type !== 'row');

  it('has unique panel ids (1 and up) and unique panel titles', () => {
    const ids = panels.map((p) => p.id);
    expect(ids.every((id) => typeof id === 'number' && id >= 1)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const titles = visible.map((p) => p.title);
    expect(titles.every((t) => typeof t === 'string' && t.length > 0)).toBe(true);
    expect(new Set(titles).size).toBe(titles.length);
  });

  it('places every panel on the 24-column grid without overlaps, rows spanning the width', () => {
    for (const p of panels) {
      const g = p.gridPos;
      expect(g, p.title).toBeDefined();
      if (!g) continue;
      expect(g.x >= 0 && g.y >= 0 && g.w >= 1 && g.h >= 1 && g.x + g.w <= GRID_COLUMNS, `${p.title ?? ''} ${JSON.stringify(g)}`).toBe(true);
      if (p.type === 'row') expect(g).toMatchObject({ x: 0, w: GRID_COLUMNS, h: 1 });
    }
    const clashes: string[] = [];
    panels.forEach((a, i) => panels.slice(i + 1).forEach((b) => overlaps(a, b) && clashes.push(`${a.title ?? ''} / ${b.title ?? ''}`)));
    expect(clashes).toEqual([]);
    // Rows open sections: a panel belongs to the last row above it, so order must follow the grid.
    const ys = panels.map((p) => p.gridPos?.y ?? -1);
    expect([...ys].sort((a, b) => a - b)).toEqual(ys);
  });

  it('uses the current schema version of the foundation SDK', () => {
    const current = new DashboardBuilder('probe').build().schemaVersion;
    expect(current).toBeGreaterThanOrEqual(41);
    expect(d.schemaVersion).toBe(current);
  });

  it('refers only to the datasource variable, which defaults to the provisioned Prometheus', () => {
    const dsVars = d.templating.list.filter((v) => v.type === 'datasource');
    expect(dsVars.map((v) => v.name)).toEqual([VARIABLES.datasource]);
    const [dsVar] = dsVars;
    const provisioned = provisionedDatasource();
    expect(provisioned).toMatchObject({ uid: DATASOURCE.uid, type: DATASOURCE.type });
    expect(dsVar?.query).toBe(provisioned.type);
    expect(dsVar?.current).toMatchObject({ value: provisioned.uid });

    const refs: { where: string; ref: DatasourceRef | undefined }[] = [];
    for (const p of visible) {
      refs.push({ where: `${p.title ?? ''}`, ref: p.datasource });
      for (const t of p.targets ?? []) refs.push({ where: `${p.title ?? ''}/${t.refId ?? ''}`, ref: t.datasource });
    }
    for (const v of d.templating.list.filter((x) => x.type === 'query')) refs.push({ where: `$${v.name}`, ref: v.datasource });
    for (const a of d.annotations.list ?? []) refs.push({ where: `annotation ${a.name}`, ref: a.datasource });
    const wrong = refs.filter((r) => r.ref?.type !== provisioned.type || r.ref.uid !== `\${${VARIABLES.datasource}}`);
    expect(wrong).toEqual([]);
  });

  it('defines every variable its queries, legends and links use, and uses every variable it defines', () => {
    const builtIns = new Set<string>([...BUILT_IN_QUERY_VARIABLES, ...BUILT_IN_LINK_VARIABLES]);
    const defined = new Set(d.templating.list.map((v) => v.name));
    const used = new Set(interpolatedStrings(d).flatMap(referencedVariables));
    expect([...used].filter((n) => !defined.has(n) && !builtIns.has(n))).toEqual([]);
    // The datasource variable is used through the panels' datasource references.
    expect([...defined].filter((n) => !used.has(n) && n !== VARIABLES.datasource)).toEqual([]);
  });

  it('gives every panel a description, a query with a unique refId, and a unit', () => {
    for (const p of visible) {
      expect(p.description?.length ?? 0, `${p.title ?? ''}: description`).toBeGreaterThan(40);
      const refIds = (p.targets ?? []).map((t) => t.refId);
      expect(refIds.length, `${p.title ?? ''}: queries`).toBeGreaterThan(0);
      expect(new Set(refIds).size).toBe(refIds.length);
      for (const t of p.targets ?? []) expect(t.expr?.trim().length ?? 0, `${p.title ?? ''}/${t.refId ?? ''}`).toBeGreaterThan(0);
      if (p.type !== 'table') expect(p.fieldConfig?.defaults?.unit, `${p.title ?? ''}: unit`).toBeTruthy();
    }
  });

  it('names table columns after queries that exist, and styles only columns that exist', () => {
    for (const p of visible.filter((x) => x.type === 'table')) {
      const organize = p.transformations?.find((t) => t.id === 'organize')?.options as { renameByName?: Record<string, string> } | undefined;
      const renames = organize?.renameByName ?? {};
      const refIds = new Set((p.targets ?? []).map((t) => t.refId));
      for (const field of Object.keys(renames)) {
        const m = /^Value #(\w+)$/.exec(field);
        if (m) expect(refIds.has(m[1]), `${p.title ?? ''}: ${field}`).toBe(true);
      }
      // Every query's value column is shown under a header.
      if (refIds.size > 1) for (const id of refIds) expect(Object.keys(renames), `${p.title ?? ''}`).toContain(`Value #${id ?? ''}`);
      const headers = new Set(Object.values(renames));
      for (const o of p.fieldConfig?.overrides ?? []) {
        if (o.matcher.id === 'byName') expect(headers.has(String(o.matcher.options)), `${p.title ?? ''}: override ${String(o.matcher.options)}`).toBe(true);
      }
    }
  });

  it('has graphs run range queries and single values, bars and tables instant ones', () => {
    for (const q of queriesOf(d)) {
      if (!q.panel) continue;
      expect(q.range, q.key).toBe(q.panel.type === 'timeseries');
    }
  });
});

/** Grafana's unit ids the panels use; dashboard-linter v0.1.1's panel-units-rule accepts exactly its list, which holds these. */
const KNOWN_UNITS = new Set(['none', 'short', 'percent', 'percentunit', 'cpm', 'string', 'dateTimeFromNow', 'currencyUSD']);

/** Every `metric{matchers}` selector in a query: the metric (or rule) name and its matchers. */
function selectors(expr: string): { name: string; matchers: string }[] {
  return [...expr.matchAll(/\b([A-Za-z_:][\w:]*)\{([^}]*)\}/g)].map((m) => ({ name: m[1] ?? '', matchers: m[2] ?? '' }));
}

describe.each(DASHBOARDS_UNDER_TEST.map((d) => [d.uid, d] as const))('dashboard %s, by the dashboard-linter conventions', (_uid, d) => {
  it('is read-only, as its provisioning (allowUiUpdates: false) makes it', () => {
    expect(d.editable).toBe(false);
    const provider = parse(readFileSync(join(REPO_ROOT, PROVISIONING_FILES.dashboards), 'utf8')) as { providers: { allowUiUpdates: boolean }[] };
    expect(provider.providers[0]?.allowUiUpdates).toBe(false);
  });

  it('has Job and Instance variables (multi, All = .+) and a Service variable, on the datasource variable', () => {
    for (const [name, label] of [[VARIABLES.job, 'Job'], [VARIABLES.instance, 'Instance'], [VARIABLES.service, 'Service']] as const) {
      const v = d.templating.list.find((x) => x.name === name);
      expect(v, name).toMatchObject({ type: 'query', label, multi: true, includeAll: true, datasource: { uid: `\${${VARIABLES.datasource}}` } });
      if (name !== VARIABLES.service) expect(v?.allValue, name).toBe('.+');
    }
  });

  it('filters every selector by job and service, and by instance where the series still has it (raw counters)', () => {
    const missing: string[] = [];
    for (const q of queriesOf(d)) {
      for (const sel of selectors(q.expr)) {
        const need = [`${SOURCE_LABELS.job}=~"$${VARIABLES.job}"`, `${SOURCE_LABELS.service}=~"$${VARIABLES.service}"`];
        if (Object.values(METRICS).includes(sel.name as never)) need.push(`${SOURCE_LABELS.instance}=~"$${VARIABLES.instance}"`);
        else if (!Object.values(RECORDED).includes(sel.name as never) && sel.name !== 'ALERTS') missing.push(`${q.key}: unexpected selector ${sel.name}`);
        for (const n of need) if (!sel.matchers.includes(n)) missing.push(`${q.key}: ${sel.name} lacks ${n}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('gives every stat, graph and bar a unit Grafana knows (no free-text suffix units)', () => {
    for (const p of allPanels(d).filter((x) => x.type !== 'row')) {
      const unit = p.fieldConfig?.defaults?.unit;
      expect(KNOWN_UNITS.has(unit ?? ''), `${p.title ?? ''}: ${String(unit)}`).toBe(true);
    }
  });
});

/**
 * Grafana's dashboard-linter itself, where it is installed (LOOPWATCH_DASHBOARD_LINTER or
 * `dashboard-linter` on PATH): its Go module cannot be fetched through the module proxy, so CI
 * does not have it; build it from a checkout of its v0.1.1 tag with `go build` (docs/dashboards.md).
 */
const linter = process.env.LOOPWATCH_DASHBOARD_LINTER ?? spawnSync('bash', ['-c', 'command -v dashboard-linter'], { encoding: 'utf8' }).stdout.trim();
describe.skipIf(!linter)('Grafana dashboard-linter (when installed)', () => {
  it.each(['loopwatch-overview.json', 'loopwatch-prompt-template.json'])('lint --strict %s passes, exceptions only from dashboards/.lint', (file) => {
    const out = execFileSync(linter, ['lint', '--strict', join(REPO_ROOT, 'dashboards', file)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(out).not.toContain('❌');
  });
});

describe('the two dashboards', () => {
  it('link to each other and carry distinct uids', () => {
    expect(overview.uid).not.toBe(promptTemplate.uid);
    expect(overview.links?.some((l) => l.url === `/d/${promptTemplate.uid}`)).toBe(true);
    expect(promptTemplate.links?.some((l) => l.url === `/d/${overview.uid}`)).toBe(true);
  });

  it('drill-down picks exactly one prompt template; the overview many', () => {
    const pick = (d: DashboardJson) => d.templating.list.find((v) => v.name === VARIABLES.prompt);
    expect(pick(overview)).toMatchObject({ multi: true, includeAll: true });
    expect(pick(promptTemplate)).toMatchObject({ multi: false, includeAll: false });
  });
});
