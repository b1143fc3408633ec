/**
 * Every dashboard query, with its variables substituted as Grafana would, runs against a real
 * Prometheus scraping the real collector after real looping and honest agent traffic, and must
 * return exactly the series and values computed from the processor's own onLoop reports and
 * the tool spans the agents made. Traffic runs in three phases (A, then B1 and B2) so that
 * windows covering only the later phases prove the queries count increments of old series and
 * the first increments of new ones, and nothing from before the window.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { ALERTS, LABELS, RECORDED, VARIABLES } from '../../dashboards/src/config.js';
import { paginated, repeatedCall, trafficRound } from '../e2e/support/agent-traffic.js';
import { expectEventuallyEqual } from '../e2e/support/expect-eventually.js';
import { RUN_ROOT } from '../e2e/support/paths.js';
import { sleep } from '../e2e/support/process.js';
import { compareInstant, compareRange } from './support/compare.js';
import { loadDashboards, queriesOf, REPO_ROOT, type DashboardJson } from './support/dashboard-json.js';
import { ALERT_LABELS, ExpectationContext, OVERVIEW_EXPECTATIONS, PROMPT_TEMPLATE_EXPECTATIONS, type AlertRuleInfo, type Expectation, type Scenario } from './support/expectations.js';
import { interpolate, type VariableValues } from './support/grafana-vars.js';
import type { Sample } from './support/prom-api.js';
import { DashboardStack, SERVICES, shippedRuleFiles } from './support/stack.js';
import type { TimeWindow } from './support/truth.js';

const runDir = join(RUN_ROOT, `dashboards-${process.pid}-${Date.now()}`);
/** The panel values of every scenario, for the issue's closing note (kept after the run). */
const RECORD_FILE = join(REPO_ROOT, '.tmp', 'dashboard-panel-values.md');
/** $__interval, and a graph's step and rate window in the range checks: two scrapes of the test's Prometheus. */
const STEP_SECONDS = 2;

const dashboards = loadDashboards();
let stack: DashboardStack;
let failed = false;
/** Evaluation time and window starts, epoch ms: scrape times, so windows start in quiet gaps between phases. */
let T = 0;
let windows: { all: TimeWindow; later: TimeWindow; quiet: TimeWindow; rangeStart: number };
const record: string[] = [];

function alertRuleInfo(): AlertRuleInfo {
  const severity = new Map<string, string>();
  for (const file of shippedRuleFiles()) {
    const doc = parse(readFileSync(file, 'utf8')) as { groups?: { rules?: { alert?: string; labels?: { severity?: string } }[] }[] };
    for (const g of doc.groups ?? []) for (const r of g.rules ?? []) if (r.alert && r.labels?.severity) severity.set(r.alert, r.labels.severity);
  }
  return { severity };
}

const phaseOrder = (): readonly string[] => stack.phases;

/** When the shipped recording rules last ran before T (epoch ms): the time of their newest sample. */
async function ruleEvaluationTime(): Promise<number> {
  const [sample] = await stack.api.instant(`max(timestamp(${RECORDED.loopRate5m}))`, T / 1000);
  if (!sample) throw new Error('the recording rules have no sample at T');
  return Math.round(sample.value * 1000);
}
const context = (s: Scenario): ExpectationContext => new ExpectationContext(stack.truth, s, alertRuleInfo(), phaseOrder(), STEP_SECONDS);

/** Variable values for a scenario; the drill-down's template is a single value. */
function variableValues(d: DashboardJson, s: Scenario): VariableValues {
  const single = d.uid === dashboards.promptTemplate.uid;
  const prompt = s.selection.prompt;
  return {
    [VARIABLES.datasource]: 'loopwatch-prometheus',
    // job and instance: All (one scrape job, one gateway here).
    [VARIABLES.service]: s.selection.service,
    [VARIABLES.prompt]: single ? prompt?.[0] : prompt,
    [VARIABLES.tool]: s.selection.tool,
    [VARIABLES.kind]: s.selection.kind,
    ...(s.baseline ? { [VARIABLES.baseline]: String(s.baseline.seconds) } : {}),
  };
}

const show = (samples: readonly Sample[]): string =>
  samples.length === 0
    ? '(no series)'
    : samples
        .map((s) => {
          const labels = Object.entries(s.metric)
            .filter(([k]) => k !== '__name__')
            .map(([k, v]) => `${k}=${v}`)
            .join(',');
          return `${labels ? `{${labels}} ` : ''}${Number.isInteger(s.value) ? s.value : s.value.toPrecision(4)}`;
        })
        .sort()
        .join('; ');

/** Runs every query of `d` as an instant query at T for scenario `s`; returns the problems found. */
async function checkInstant(d: DashboardJson, table: Readonly<Record<string, (c: ExpectationContext) => Expectation>>, s: Scenario): Promise<string[]> {
  const problems: string[] = [];
  const ctx = context(s);
  record.push(`\n### ${d.title} — ${s.name}\n`, '| Panel / query | PromQL as run | Returned |', '|---|---|---|');
  for (const q of queriesOf(d)) {
    const expect_ = table[q.key];
    if (!expect_) {
      problems.push(`${q.key}: no expectation`);
      continue;
    }
    const expr = interpolate(q.expr, d, variableValues(d, s), { rangeSeconds: s.range.seconds, rateSeconds: s.rate.seconds, intervalSeconds: STEP_SECONDS });
    const samples = await stack.api.instant(expr, T / 1000);
    const expectation = expect_(ctx);
    // A recording-rule panel is compared with the rule's definition at the rule's evaluation time.
    const reference = expectation.kind === 'recorded' ? await stack.api.instant(expectation.reference, (await ruleEvaluationTime()) / 1000) : [];
    for (const p of compareInstant(expectation, samples, reference)) problems.push(`${s.name} / ${q.key}: ${p}\n    ${expr}`);
    record.push(`| ${q.key} | \`${expr.replace(/\|/g, '\\|')}\` | ${show(samples).replace(/\|/g, '\\|')} |`);
  }
  return problems;
}

/** Runs every graph query of `d` as a range query over the later phases, stepped by its own window. */
async function checkRange(d: DashboardJson, table: Readonly<Record<string, (c: ExpectationContext) => Expectation>>, s: Scenario): Promise<string[]> {
  const problems: string[] = [];
  const covered: TimeWindow = { phases: windows.later.phases, seconds: (T - windows.rangeStart) / 1000 };
  // The rate window equals the step; the whole range is the scenario's window for the expectation.
  const ctx = context({ ...s, rate: covered, range: covered });
  for (const q of queriesOf(d).filter((x) => x.range)) {
    const expect_ = table[q.key];
    if (!expect_) continue;
    const expr = interpolate(q.expr, d, variableValues(d, s), { rangeSeconds: covered.seconds, rateSeconds: STEP_SECONDS, intervalSeconds: STEP_SECONDS });
    const series = await stack.api.range(expr, windows.rangeStart / 1000 + STEP_SECONDS, T / 1000, STEP_SECONDS);
    for (const p of compareRange(expect_(ctx), series, STEP_SECONDS)) problems.push(`${s.name} (range) / ${q.key}: ${p}\n    ${expr}`);
  }
  return problems;
}

describe('dashboard queries on the real collector and Prometheus', { timeout: 240_000 }, () => {
  beforeAll(async () => {
    stack = await DashboardStack.start(runDir);
    const start = await stack.lastScrape();
    // A: two rounds of mixed traffic (four templates and an agent without one).
    await stack.phase('A', [...trafficRound(0), ...trafficRound(1)]);
    // Let a scrape pass that holds all of A and nothing later: the "later" window starts on it.
    await sleep(2_500);
    const laterStart = await stack.lastScrape();
    // The graphs' range checks start within 2 s after it: nothing may happen before that.
    await sleep(2_100);
    // B1: another round; B2: a tool that never looped before (new series), more loops, honest calls.
    await stack.phase('B1', trafficRound(2));
    await sleep(2_500);
    await stack.phase('B2', [
      repeatedCall('support-agent', 'support-triage', 'lookup_customer', 6, 'customer-42'),
      repeatedCall('support-agent', 'support-triage', 'search_kb', 5, 'returns'),
      paginated('coding-agent', 'code-fix', 'grep_repo', 5),
    ]);
    // The shipped alerts must have caught up before T (they are evaluated every second).
    const ctx = context({ name: 'alerts', selection: {}, range: { phases: new Set(), seconds: 1 }, rate: { phases: new Set(), seconds: 1 } });
    const alertKeys = [...ctx.firingAlerts().values.keys()].sort();
    await expectEventuallyEqual(
      async () =>
        (await stack.prometheus.query(`ALERTS{alertstate="firing", alertname=~"${ALERTS.namePrefix}.+"}`))
          .map((s) => ALERT_LABELS.map((l) => s.metric[l] ?? '').join(' | '))
          .sort(),
      alertKeys,
      { timeoutMs: 30_000, what: 'firing loopwatch alerts' },
    );
    await sleep(3_000);
    T = await stack.lastScrape();
    const rangeSteps = Math.floor((T - laterStart) / (STEP_SECONDS * 1000));
    windows = {
      // Starts before the first loop series existed: every series counts whole (exact), and the
      // length is whole seconds, as the baseline variable needs.
      all: { phases: new Set(['A', 'B1', 'B2']), seconds: Math.ceil((T - start) / 1000) + 5 },
      // Starts on a scrape holding all of A: A's series count their growth since, B's new ones whole.
      later: { phases: new Set(['B1', 'B2']), seconds: (T - laterStart) / 1000 },
      // The last two seconds: nothing happened (loops per minute "now" are 0, not missing).
      quiet: { phases: new Set(), seconds: STEP_SECONDS },
      rangeStart: T - rangeSteps * STEP_SECONDS * 1000,
    };
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
    mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
    const w = (x: TimeWindow | undefined): string => (x ? `${x.seconds}s covering phases ${[...x.phases].join('+') || 'none'}` : '?');
    writeFileSync(RECORD_FILE, `# Dashboard panel values on the e2e traffic\n\nWindows: all ${w(windows?.all)}; later ${w(windows?.later)}; quiet ${w(windows?.quiet)}\n${record.join('\n')}\n`);
    if (!failed && !process.env.LOOPWATCH_KEEP_RUN) rmSync(runDir, { recursive: true, force: true });
    else console.log(`dashboard e2e logs and data kept in ${runDir}`);
  });

  it('has an expectation for every query of both dashboards, and no stale one', () => {
    onTestFailed(() => void (failed = true));
    expect(queriesOf(dashboards.overview).map((q) => q.key).sort()).toEqual(Object.keys(OVERVIEW_EXPECTATIONS).sort());
    expect(queriesOf(dashboards.promptTemplate).map((q) => q.key).sort()).toEqual(Object.keys(PROMPT_TEMPLATE_EXPECTATIONS).sort());
  });

  it('fills the variables with the templates, tools and kinds of the traffic', async () => {
    onTestFailed(() => void (failed = true));
    for (const d of [dashboards.overview, dashboards.promptTemplate]) {
      for (const v of d.templating.list.filter((x) => x.type === 'query')) {
        const m = /^label_values\((.+),(\w+)\)$/.exec(v.definition ?? '');
        expect(m, `${d.uid} $${v.name}: label_values(selector,label)`).not.toBeNull();
        const [, rawSelector = '', label = ''] = m ?? [];
        const selection = { prompt: ['support-triage', 'code-fix'] };
        const selector = interpolate(rawSelector, d, { [VARIABLES.prompt]: d.uid === dashboards.promptTemplate.uid ? 'code-fix' : selection.prompt }, { rangeSeconds: 60, rateSeconds: 60 });
        const got = await stack.api.labelValues(label, selector, (T - windows.all.seconds * 1000) / 1000, T / 1000);
        const everything: TimeWindow = windows.all;
        const forDashboard = d.uid === dashboards.promptTemplate.uid ? { prompt: ['code-fix'] } : selection;
        const want =
          v.name === VARIABLES.job
            ? ['loopwatch-gateway']
            : v.name === VARIABLES.instance
              ? [stack.gateway.metricsTarget]
              : v.name === VARIABLES.service
                ? [...SERVICES]
                : v.name === VARIABLES.prompt
                  ? [...stack.truth.count('calls', {}, [LABELS.prompt], everything).keys()]
                  : v.name === VARIABLES.tool
                    ? [...stack.truth.count('calls', forDashboard, [LABELS.tool], everything).keys()]
                    : [...stack.truth.count('detections', {}, [LABELS.kind], everything).keys()];
        expect(got, `${d.uid} $${v.name} = ${v.definition ?? ''}`).toEqual(want.sort());
      }
    }
  });

  const overviewScenarios = (): Scenario[] => [
    { name: 'all templates, later phases', selection: {}, range: windows.later, rate: windows.later },
    { name: 'all templates, whole test', selection: {}, range: windows.all, rate: windows.all },
    { name: 'two templates', selection: { prompt: ['support-triage', 'code-fix'] }, range: windows.later, rate: windows.later },
    {
      name: 'one template, two tools, one kind',
      selection: { prompt: ['support-triage'], tool: ['search_kb', 'lookup_customer'], kind: ['repeat'] },
      range: windows.all,
      rate: windows.later,
    },
    // A 2 s rate window: graphs read 0 now.
    { name: 'whole test, 2 s steps', selection: {}, range: windows.all, rate: windows.quiet },
    // One service: the other service's runs of the same templates must not count.
    { name: 'one service', selection: { service: [SERVICES[1]] }, range: windows.all, rate: windows.later },
  ];

  const drillDownScenarios = (): Scenario[] => [
    { name: 'support-triage', selection: { prompt: ['support-triage'] }, range: windows.later, rate: windows.later, baseline: windows.all },
    { name: 'support-triage in one service', selection: { service: [SERVICES[0]], prompt: ['support-triage'] }, range: windows.all, rate: windows.later, baseline: windows.all },
    { name: 'code-fix, two kinds', selection: { prompt: ['code-fix'], kind: ['error_pattern', 'cycle'] }, range: windows.all, rate: windows.later, baseline: windows.all },
    { name: 'unknown template, 2 s steps', selection: { prompt: ['unknown'] }, range: windows.later, rate: windows.quiet, baseline: windows.all },
  ];

  it('overview: every panel query returns the truth for each variable selection and window', async () => {
    onTestFailed(() => void (failed = true));
    const problems: string[] = [];
    for (const s of overviewScenarios()) problems.push(...(await checkInstant(dashboards.overview, OVERVIEW_EXPECTATIONS, s)));
    expect(problems).toEqual([]);
  });

  it('drill-down: every panel query returns the truth for each template, selection and window', async () => {
    onTestFailed(() => void (failed = true));
    const problems: string[] = [];
    for (const s of drillDownScenarios()) problems.push(...(await checkInstant(dashboards.promptTemplate, PROMPT_TEMPLATE_EXPECTATIONS, s)));
    expect(problems).toEqual([]);
  });

  it('graphs: range queries stepped by their rate window show the expected series and add up to the increments', async () => {
    onTestFailed(() => void (failed = true));
    const problems: string[] = [];
    for (const s of overviewScenarios().slice(0, 4)) problems.push(...(await checkRange(dashboards.overview, OVERVIEW_EXPECTATIONS, s)));
    for (const s of drillDownScenarios().slice(0, 2)) problems.push(...(await checkRange(dashboards.promptTemplate, PROMPT_TEMPLATE_EXPECTATIONS, s)));
    expect(problems).toEqual([]);
  });
});
