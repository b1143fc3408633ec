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
import { requireTool, RULES_FILE, RULES_TEST_FILE } from '../e2e/support/paths.js';

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

  it('has the six alerts, each with severity, summary and description', () => {
    expect(alerts.map((a) => a.alert).sort()).toEqual([
      'LoopwatchCriticalLoopStops',
      'LoopwatchFirstLoopsForTemplate',
      'LoopwatchHighLoopsPerToolCall',
      'LoopwatchLoopRateSpike',
      'LoopwatchLoopSpendHigh',
      'LoopwatchLoopTokensHigh',
    ]);
    for (const a of alerts) {
      expect(['critical', 'warning', 'info'], a.alert).toContain(a.labels?.severity);
      expect(a.annotations?.summary, a.alert).toMatch(/\S/);
      expect(a.annotations?.description, a.alert).toMatch(/\{\{ *\$labels\.gen_ai_prompt_name *\}\}/);
    }
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
    ['ratio: call-volume floor', 'gen_ai_prompt_name:gen_ai_tool_calls:rate5m > 0.1', 'gen_ai_prompt_name:gen_ai_tool_calls:rate5m > 0'],
    ['ratio: threshold', 'ratio_rate5m > 0.1', 'ratio_rate5m > 0.01'],
    ['ratio: for', 'for: 15m', 'for: 5m'],
    ['first loops: sparse-aware presence check', 'count by (gen_ai_prompt_name) (gen_ai_tool_loop_detections_total)\n          unless', 'sum by (gen_ai_prompt_name) (increase(gen_ai_tool_loop_detections_total[10m])) > 0\n          unless'],
    ['first loops: look-back', '[7d:5m] offset 15m', '[7d:5m] offset 1m'],
    ['critical: first increment of a new series', ') * 1\n            or\n', ') * 0\n            or\n'],
    ['critical: level filter', 'increase(gen_ai_tool_loop_detections_total{loop_level="critical"}[10m])', 'increase(gen_ai_tool_loop_detections_total[10m])'],
    ['spend: first increment of a new series', 'gen_ai_tool_loop_cost_usd_total offset 1h\n            ) * 1', 'gen_ai_tool_loop_cost_usd_total offset 1h\n            ) * 0'],
    ['spend: threshold', '          ) > 5\n', '          ) > 50\n'],
    ['tokens: threshold', '> 2e+06', '> 2e+07'],
    ['tokens: priced templates left to the spend alert', 'unless on (gen_ai_prompt_name)\n          gen_ai_tool_loop_cost_usd_total\n', 'unless on (gen_ai_prompt_name)\n          gen_ai_tool_loop_cost_usd_total{gen_ai_prompt_name="none"}\n'],
  ] as const)('unit tests catch a broken %s', async ([, from, to], { expect }) => {
    expect(rulesText, `mutation target not found: ${from}`).toContain(from);
    expect(await unitTestsPassWith(from, to)).toBe(false);
  });
});
