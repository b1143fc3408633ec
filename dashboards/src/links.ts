/** Links between the two dashboards, keeping the time range and datasource. */
import { DashboardLinkBuilder, DashboardLinkType } from '@grafana/grafana-foundation-sdk/dashboard';
import { DASHBOARDS, LABELS, VARIABLES } from './config.js';
import { link } from './panels.js';

const drillDownUrl = (templateExpr: string): string =>
  `/d/${DASHBOARDS.promptTemplate.uid}?var-${VARIABLES.prompt}=${templateExpr}&var-${VARIABLES.datasource}=\${${VARIABLES.datasource}}&\${__url_time_range}`;

/** From a series labelled with a prompt template (graphs). */
export const drillDownFromSeries = (): DashboardLinkBuilder =>
  link(`Drill down into \${__field.labels.${LABELS.prompt}}`, drillDownUrl(`\${__field.labels.${LABELS.prompt}}`));

/** From a table cell holding a prompt template. */
export const drillDownFromCell = (): DashboardLinkBuilder => link('Drill down into ${__value.text}', drillDownUrl('${__value.raw}'));

/** Dashboard-level link between the loopwatch dashboards. */
export function dashboardLink(title: string, uid: string): DashboardLinkBuilder {
  return new DashboardLinkBuilder(title)
    .type(DashboardLinkType.Link)
    .url(`/d/${uid}`)
    .icon('dashboard')
    .tooltip(title)
    .keepTime(true)
    .includeVars(true)
    .asDropdown(false)
    .targetBlank(false)
    .tags([]);
}
