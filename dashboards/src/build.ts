/**
 * Everything `npm run dashboards` writes, as path → content, built in memory so the freshness
 * test can compare it with the committed files.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { DASHBOARDS } from './config.js';
import { DOCS_FILE, generatedDocsBlock, withGeneratedBlock } from './docs.js';
import { lintConfig } from './lint-config.js';
import { overviewDashboard } from './overview.js';
import { promptTemplateDashboard } from './prompt-template.js';
import { dashboardProviderYaml, datasourceYaml, prometheusYaml, PROVISIONING_FILES } from './provisioning.js';

/** Panel ids 1, 2, 3... in layout order (the SDK leaves them unset, or 0 for rows). */
function withPanelIds(d: Dashboard): Dashboard {
  let id = 1;
  for (const p of d.panels ?? []) p.id = id++;
  return d;
}

export function buildDashboards(): { readonly file: string; readonly dashboard: Dashboard }[] {
  return [
    { file: `dashboards/${DASHBOARDS.overview.file}`, dashboard: withPanelIds(overviewDashboard()) },
    { file: `dashboards/${DASHBOARDS.promptTemplate.file}`, dashboard: withPanelIds(promptTemplateDashboard()) },
  ];
}

/**
 * The SDK puts every link and annotation toggle into Grafana 12's controls dropdown
 * (`placement: "inControlsMenu"`); leaving the field out keeps them on the dashboard's top bar,
 * where someone arriving from an alert sees them.
 */
const dropControlsMenuPlacement = (key: string, value: unknown): unknown => (key === 'placement' && value === 'inControlsMenu' ? undefined : value);

const json = (value: unknown): string => `${JSON.stringify(value, dropControlsMenuPlacement, 2)}\n`;

/** Repo-relative path → file content, for every generated file. */
export function buildArtifacts(repoRoot: string): Map<string, string> {
  const dashboards = buildDashboards();
  const files = new Map<string, string>();
  for (const { file, dashboard } of dashboards) files.set(file, json(dashboard));
  files.set(PROVISIONING_FILES.datasource, datasourceYaml());
  files.set(PROVISIONING_FILES.dashboards, dashboardProviderYaml());
  files.set(PROVISIONING_FILES.prometheus, prometheusYaml());
  files.set('dashboards/.lint', lintConfig(dashboards.map((d) => d.dashboard)));
  const doc = readFileSync(join(repoRoot, DOCS_FILE), 'utf8');
  files.set(DOCS_FILE, withGeneratedBlock(doc, generatedDocsBlock(dashboards.map((d) => d.dashboard))));
  return files;
}
