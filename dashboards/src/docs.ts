/**
 * The panel reference in docs/dashboards.md, rendered from the built dashboards so the docs say
 * exactly what the JSON does.
 */
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';

export const DOCS_FILE = 'docs/dashboards.md';
export const PANELS_START = '<!-- generated: panels (npm run dashboards) -->';
export const PANELS_END = '<!-- end generated: panels -->';

interface DocPanel {
  readonly type: string;
  readonly title: string;
  readonly description: string;
  readonly exprs: readonly string[];
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** Panels in dashboard order with their queries (rows are section headers, not panels). */
export function docPanels(d: Dashboard): { readonly row: string; readonly panels: DocPanel[] }[] {
  const sections: { row: string; panels: DocPanel[] }[] = [];
  for (const p of d.panels ?? []) {
    if (p.type === 'row') {
      sections.push({ row: p.title ?? '', panels: [] });
      continue;
    }
    if (!('targets' in p)) continue;
    const exprs = (p.targets ?? []).map((t) => {
      const expr: unknown = (t as unknown as { expr?: unknown }).expr;
      return typeof expr === 'string' ? expr : '';
    });
    const section = sections.at(-1) ?? { row: '', panels: [] };
    if (sections.length === 0) sections.push(section);
    section.panels.push({ type: p.type, title: p.title ?? '', description: p.description ?? '', exprs });
  }
  return sections;
}

/** The compact table: every panel and what it answers (the README shows this one). */
export function panelTable(dashboards: readonly Dashboard[]): string {
  const lines: string[] = [];
  for (const d of dashboards) {
    lines.push(`**${d.title ?? ''}** (\`${d.uid ?? ''}\`)`, '', '| Section | Panel | Type | What it answers |', '|---|---|---|---|');
    for (const s of docPanels(d)) for (const p of s.panels) lines.push(`| ${cell(s.row)} | ${cell(p.title)} | ${p.type} | ${cell(p.description)} |`);
    lines.push('');
  }
  return lines.join('\n');
}

/** Every panel's PromQL, as Grafana sends it before substituting variables. */
export function panelQueries(dashboards: readonly Dashboard[]): string {
  const lines: string[] = [];
  for (const d of dashboards) {
    lines.push(`### ${d.title ?? ''}`, '');
    for (const s of docPanels(d)) {
      for (const p of s.panels) {
        lines.push(`**${p.title}**`, '', '```promql', ...p.exprs, '```', '');
      }
    }
  }
  return lines.join('\n');
}

/** The generated block between the markers. */
export function generatedDocsBlock(dashboards: readonly Dashboard[]): string {
  return [PANELS_START, '', '## Panels', '', panelTable(dashboards), '## Queries', '', panelQueries(dashboards).trimEnd(), '', PANELS_END].join('\n');
}

/** `doc` with its generated block replaced (the hand-written text around it is kept). */
export function withGeneratedBlock(doc: string, block: string): string {
  const start = doc.indexOf(PANELS_START);
  const end = doc.indexOf(PANELS_END);
  if (start < 0 || end < start) throw new Error(`${DOCS_FILE} needs the markers ${PANELS_START} and ${PANELS_END}`);
  return doc.slice(0, start) + block + doc.slice(end + PANELS_END.length);
}
