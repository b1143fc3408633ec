/**
 * Three hours of exported agent traces for the report tests and docs/report.png: several prompt
 * templates doing honest work, each loop kind, and one template whose loops spike in the last
 * hour. Deterministic (ids and times from labels), written as the collector's file exporter
 * writes: JSON Lines of export batches with traces interleaved.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentTrace, batches, interleave, tracesData, type OtlpSpan, type ToolCallSpec } from '../../support/otlp.js';

export const FIXTURE_START = Date.parse('2026-11-21T08:00:00Z');
const MINUTE = 60_000;

const repeat = (tool: string, times: number, topic: string): ToolCallSpec[] =>
  Array.from({ length: times }, () => ({ tool, args: { query: topic, limit: 5 }, result: { hits: [], note: 'no results' } }));
const pages = (tool: string, count: number, topic: string): ToolCallSpec[] =>
  Array.from({ length: count }, (_, i) => ({ tool, args: { query: topic, page: i + 1 }, result: { items: [`${topic}-${i * 10}`, `${topic}-${i * 10 + 1}`] } }));
const failing = (tool: string, times: number): ToolCallSpec[] =>
  Array.from({ length: times }, (_, i) => ({ tool, args: { suite: 'unit', filter: 'checkout' }, error: `3 tests failed (run ${i + 1}, ${100 + i * 7} ms)` }));
const rephrased = (tool: string, times: number): ToolCallSpec[] =>
  Array.from({ length: times }, (_, i) => ({ tool, args: { question: `refund window for order, wording ${i}` }, result: { answer: 'no matching policy' } }));
const cycle = (a: string, b: string, laps: number): ToolCallSpec[] =>
  Array.from({ length: laps }, () => [
    { tool: a, args: { path: 'src/cart.ts' }, result: { content: 'export const total = 0;' } },
    { tool: b, args: { path: 'src/cart.ts', text: 'export const total = 0;' }, result: { ok: false, reason: 'no change' } },
  ]).flat();
const unknownTool = (tool: string, times: number): ToolCallSpec[] => Array.from({ length: times }, () => ({ tool, args: {}, error: `tool '${tool}' not found` }));
const reply = (text: string): ToolCallSpec => ({ tool: 'send_message', args: { to: 'user', text }, result: { delivered: true } });

interface Run {
  readonly at: number;
  readonly prompt: string | undefined;
  readonly agent: string;
  readonly steps: ToolCallSpec[];
}

/** The runs of the fixture, in start order. */
export function fixtureRuns(): Run[] {
  const runs: Run[] = [];
  for (let m = 0; m < 180; m += 6) {
    // support-triage: honest most of the time, a loop now and then; in the last hour it loops on every run.
    const spike = m >= 125;
    runs.push({
      at: m,
      prompt: 'support-triage',
      agent: 'support-agent',
      steps: spike || m % 36 === 0 ? [...repeat('search_kb', spike && m % 12 === 2 ? 7 : 5, `order-${m}`), reply('escalated')] : [...pages('search_kb', 3, `order-${m}`), reply('answered')],
    });
    if (spike) runs.push({ at: m + 3, prompt: 'support-triage', agent: 'support-agent', steps: [...repeat('search_kb', 6, `refund-${m}`), reply('escalated')] });
    if (m % 12 === 0) runs.push({ at: m + 2, prompt: 'code-fix', agent: 'coding-agent', steps: m % 48 === 0 ? [...failing('run_tests', 5)] : [...pages('grep_repo', 3, 'TODO'), { tool: 'run_tests', args: { suite: 'unit' }, result: '42 passed' }] });
    if (m % 30 === 12) runs.push({ at: m + 3, prompt: 'research-brief', agent: 'research-agent', steps: m === 42 ? cycle('read_file', 'edit_file', 4) : [...pages('web_search', 4, 'agent loops'), reply('brief sent')] });
    if (m % 60 === 24) runs.push({ at: m + 1, prompt: 'billing-v1', agent: 'billing-agent', steps: m === 84 ? [...unknownTool('refund_order_v2', 3), reply('sorry')] : [...rephrased('lookup_policy', 2), reply('done')] });
    if (m === 150) runs.push({ at: m + 4, prompt: 'billing-v1', agent: 'billing-agent', steps: [...rephrased('lookup_policy', 5)] });
    if (m % 45 === 30) runs.push({ at: m + 5, prompt: undefined, agent: 'legacy-agent', steps: [...repeat('lookup_order', m === 120 ? 3 : 1, `o-${m}`)] });
  }
  return runs;
}

/** The fixture's traces, each as its spans in end order. */
export function fixtureTraces(): OtlpSpan[][] {
  return fixtureRuns().map((r, i) =>
    agentTrace({ label: `report-${i}`, ...(r.prompt !== undefined ? { prompt: r.prompt } : {}), agent: r.agent, startMs: FIXTURE_START + r.at * MINUTE, steps: r.steps }),
  );
}

/** Writes `traces` (default: the fixture) as JSON Lines into `dir`; returns the file's path. */
export function writeReportFixture(dir: string, traces: OtlpSpan[][] = fixtureTraces()): string {
  const file = join(dir, 'agents.jsonl');
  writeFileSync(file, `${batches(interleave(...traces), 40)
    .map((b) => JSON.stringify(tracesData(b)))
    .join('\n')}\n`);
  return file;
}
