/**
 * loopwatch.rules.yml: promtool's syntax check and unit tests, plus checks that the unit tests
 * can fail: each mutation below breaks one safeguard of an alert, and promtool must notice.
 */
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT, requireTool, RULES_FILE, RULES_TEST_FILE } from '../e2e/support/paths.js';

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface AlertTest {
  eval_time: string;
  alertname: string;
  exp_alerts: unknown[];
}

const rulesText = readFileSync(RULES_FILE, 'utf8');
const rules = (parse(rulesText) as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const alerts = rules.filter((r) => r.alert !== undefined);
const unitTests = (parse(readFileSync(RULES_TEST_FILE, 'utf8')) as { tests: { alert_rule_test?: AlertTest[] }[] }).tests.flatMap((t) => t.alert_rule_test ?? []);
const scratch = mkdtempSync(join(tmpdir(), 'loopwatch-rules-'));

function promtool(...args: string[]): { status: number | null; output: string } {
  const res = spawnSync(requireTool('promtool'), args, { encoding: 'utf8' });
  return { status: res.status, output: `${res.stdout}${res.stderr}` };
}

/** promtool test rules on a copy of the rules with `from` replaced by `to` (async: mutations run side by side). */
function unitTestsPassWith(from: string, to: string): Promise<boolean> {
  const dir = mkdtempSync(join(scratch, 'm-'));
  writeFileSync(join(dir, 'loopwatch.rules.yml'), rulesText.replace(from, to));
  copyFileSync(RULES_TEST_FILE, join(dir, 'loopwatch.rules_test.yml'));
  return new Promise((resolve) => execFile(requireTool('promtool'), ['test', 'rules', join(dir, 'loopwatch.rules_test.yml')], (error) => resolve(error === null)));
}

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('collector-config/prometheus/loopwatch.rules.yml', () => {
  it('passes promtool check rules', () => {
    const res = promtool('check', 'rules', RULES_FILE);
    expect(res.output).toContain('SUCCESS');
    expect(res.status).toBe(0);
  });

  it('passes its promtool unit tests', () => {
    const res = promtool('test', 'rules', RULES_TEST_FILE);
    expect(res.output).toContain('SUCCESS');
    expect(res.status).toBe(0);
  });

  it('has the six alerts, each with severity, summary, description, runbook_url and dashboard_url (monitoring-mixins)', () => {
    expect(alerts.map((a) => a.alert).sort()).toEqual([
      'LoopwatchCriticalLoopStops',
      'LoopwatchFirstLoopsForTemplate',
      'LoopwatchHighLoopsPerToolCall',
      'LoopwatchLoopRateSpike',
      'LoopwatchLoopSpendHigh',
      'LoopwatchLoopTokensHigh',
    ]);
    const runbook = readFileSync(join(REPO_ROOT, 'docs', 'runbook.md'), 'utf8');
    // GitHub's anchors: the heading lower-cased, spaces to dashes, other punctuation dropped.
    const anchors = new Set([...runbook.matchAll(/^#{2,4} (.+)$/gm)].map((m) => (m[1] ?? '').toLowerCase().replace(/[^\w\s-]/g, '').replace(/\s/g, '-')));
    for (const a of alerts) {
      expect(['critical', 'warning', 'info'], a.alert).toContain(a.labels?.severity);
      expect(a.annotations?.summary, a.alert).toMatch(/\S/);
      expect(a.annotations?.description, a.alert).toMatch(/\{\{ *\$labels\.gen_ai_prompt_name *\}\}/);
      const runbookUrl = a.annotations?.runbook_url ?? '';
      expect(runbookUrl, a.alert).toMatch(/^https:\/\/github\.com\/loopwatch\/loopwatch\/blob\/main\/docs\/runbook\.md#/);
      expect(anchors, `${a.alert}: docs/runbook.md has a section for it`).toContain(runbookUrl.split('#')[1]);
      expect(a.annotations?.dashboard_url, a.alert).toMatch(/\/d\/loopwatch-prompt-template\?var-job=\{\{ \$labels\.job \}\}&var-service=\{\{ \$labels\.exported_job \}\}&var-prompt_template=\{\{ \$labels\.gen_ai_prompt_name \}\}/);
    }
  });

  it('pages only for critical stops: a relative spike, a high ratio and loop spend warn, first loops inform', () => {
    expect(Object.fromEntries(alerts.map((a) => [a.alert, a.labels?.severity]))).toEqual({
      LoopwatchLoopRateSpike: 'warning',
      LoopwatchHighLoopsPerToolCall: 'warning',
      LoopwatchFirstLoopsForTemplate: 'info',
      LoopwatchCriticalLoopStops: 'critical',
      LoopwatchLoopSpendHigh: 'warning',
      LoopwatchLoopTokensHigh: 'warning',
    });
  });

  it('keeps services apart: every aggregation keeps job and exported_job (the agent service)', () => {
    for (const r of rules) {
      for (const m of r.expr.matchAll(/\b(?:sum|count) by \(([^)]*)\)/g)) {
        const by = (m[1] ?? '').split(',').map((x) => x.trim());
        expect(by, r.record ?? r.alert).toEqual(expect.arrayContaining(['job', 'exported_job', 'gen_ai_prompt_name']));
      }
      if (r.record) expect(r.record.startsWith('job_exported_job_gen_ai_prompt_name'), r.record).toBe(true);
    }
  });

  it('builds the first-loops alert on its recording rule, not on a subquery over the raw counters', () => {
    const first = alerts.find((a) => a.alert === 'LoopwatchFirstLoopsForTemplate');
    expect(first?.expr).not.toMatch(/\[[^\]]*:[^\]]*\]/); // no [range:step] subquery
    expect(first?.expr).not.toContain('gen_ai_tool_loop_detections_total');
    expect(first?.expr).toContain('job_exported_job_gen_ai_prompt_name:gen_ai_tool_loop_detections_series:count[7d]');
  });

  it('unit-tests every alert both firing and not firing', () => {
    for (const a of alerts) {
      const cases = unitTests.filter((t) => t.alertname === a.alert);
      expect(cases.some((t) => t.exp_alerts.length > 0), `${a.alert} firing`).toBe(true);
      expect(cases.some((t) => t.exp_alerts.length === 0), `${a.alert} not firing`).toBe(true);
    }
  });

  it('uses only the contract metrics and its own recording rules', () => {
    const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
    const contract = new Set(['gen_ai_tool_loop_detections_total', 'gen_ai_tool_calls_total', 'gen_ai_tool_loop_tokens_total', 'gen_ai_tool_loop_cost_usd_total']);
    for (const r of rules) {
      // Metric-like names: identifiers followed by a selector, range or whitespace, not by "(" (functions) or "=" (labels).
      const names = [...r.expr.matchAll(/\b([a-z_][a-z0-9_]*(?::[a-z0-9_]+)+|gen_ai_[a-z0-9_]+_total)\b/g)].map((m) => m[1] ?? '');
      for (const n of names) expect(contract.has(n) || recorded.has(n), `${r.record ?? r.alert}: ${n}`).toBe(true);
    }
    expect([...rulesText.matchAll(/\bagent_[a-z_]+/g)]).toEqual([]);
  });

  it.concurrent.for([
    ['spike: absolute floor', 'rate5m > 0.03', 'rate5m > 0'],
    ['spike: baseline factor', '> 3 * (', '> 0.5 * ('],
    ['spike: for', '        for: 5m', '        for: 0m'],
    ['ratio: call-volume floor', 'job_exported_job_gen_ai_prompt_name:gen_ai_tool_calls:rate5m > 0.1', 'job_exported_job_gen_ai_prompt_name:gen_ai_tool_calls:rate5m > 0'],
    ['ratio: threshold', 'ratio_rate5m > 0.1', 'ratio_rate5m > 0.01'],
    ['ratio: for', 'for: 15m', 'for: 5m'],
    ['first loops: sparse-aware presence check', 'count by (job, exported_job, gen_ai_prompt_name) (gen_ai_tool_loop_detections_total)', 'count by (job, exported_job, gen_ai_prompt_name) (increase(gen_ai_tool_loop_detections_total[10m]) > 0)'],
    ['first loops: look-back', '[7d] offset 15m', '[7d] offset 1m'],
    ['first loops: services apart', 'count by (job, exported_job, gen_ai_prompt_name) (gen_ai_tool_loop_detections_total)', 'count by (job, gen_ai_prompt_name) (gen_ai_tool_loop_detections_total)'],
    ['critical: first increment of a new series', ') * 1\n            or\n', ') * 0\n            or\n'],
    ['critical: level filter', 'increase(gen_ai_tool_loop_detections_total{loop_level="critical"}[10m])', 'increase(gen_ai_tool_loop_detections_total[10m])'],
    ['critical: services apart', 'sum by (job, exported_job, gen_ai_prompt_name, gen_ai_tool_name, loop_kind)', 'sum by (job, gen_ai_prompt_name, gen_ai_tool_name, loop_kind)'],
    ['spend: first increment of a new series', 'gen_ai_tool_loop_cost_usd_total offset 1h\n            ) * 1', 'gen_ai_tool_loop_cost_usd_total offset 1h\n            ) * 0'],
    ['spend: threshold', '          ) > 5\n', '          ) > 50\n'],
    ['tokens: threshold', '> 2e+06', '> 2e+07'],
    ['tokens: priced templates left to the spend alert', 'unless on (job, exported_job, gen_ai_prompt_name)\n          gen_ai_tool_loop_cost_usd_total\n', 'unless on (job, exported_job, gen_ai_prompt_name)\n          gen_ai_tool_loop_cost_usd_total{gen_ai_prompt_name="none"}\n'],
  ] as const)('unit tests catch a broken %s', async ([, from, to], { expect }) => {
    expect(rulesText, `mutation target not found: ${from}`).toContain(from);
    expect(await unitTestsPassWith(from, to)).toBe(false);
  });
});
