/**
 * What loops cost, from `loopwatch scan`: the loop-cost fixture (five runs whose model calls
 * report usage in five dialects) with its price table. Expectations are derived from the usage
 * the fixture's runs were built with (test/support/loop-cost-fixture.ts), not read off the output.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LoopDetection } from '../../src/index.js';
import { runCli } from '../report/support/render.js';
import { DOCS_OUT, docsIn, REFUND_OUT, refundIn, SUPPORT_OUT, supportIn, TRIAGE_OUT, triageIn } from '../support/loop-cost-fixture.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/otlp');
const TRACES = join(FIXTURES, 'loop-cost.jsonl');
const PRICES = join(FIXTURES, 'loop-cost.prices.yaml');

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, k) => from + k);
const sum = (xs: number[], f: (i: number) => number): number => xs.reduce((s, i) => s + f(i), 0);
/** USD of model call i of a run whose call i reads call i-1's input from the cache (prices per million). */
const cachedUsd = (input: (i: number) => number, output: number, p: { input: number; output: number; cachedInput: number }) => (i: number): number =>
  ((input(i) - (i > 0 ? input(i - 1) : 0)) * p.input + (i > 0 ? input(i - 1) : 0) * p.cachedInput + output * p.output) / 1e6;
const supportUsd = cachedUsd(supportIn, SUPPORT_OUT, { input: 2.5, output: 10, cachedInput: 1.25 });
const docsUsd = cachedUsd(docsIn, DOCS_OUT, { input: 3, output: 15, cachedInput: 0.3 });
const refundUsd = (i: number): number => (refundIn(i) * 0.15 + REFUND_OUT * 0.6) / 1e6;

/** Detections by prompt and level. */
function byPrompt(detections: LoopDetection[]): Map<string, LoopDetection> {
  return new Map(detections.map((d) => [`${d.promptName}/${d.level}`, d]));
}

describe('scan: what loops cost', () => {
  it('--json: every detection carries the tokens (and USD) of the model calls between its first and completing call', async () => {
    const r = await runCli(['scan', '--json', '--config', PRICES, TRACES]);
    expect(r.code).toBe(1);
    const d = byPrompt(r.stdout.trim().split('\n').map((l) => JSON.parse(l) as LoopDetection));
    // gen_ai spans; identical calls 1..n detected at n: model calls 1..n-1 (0-based) asked for calls 2..n
    for (const [level, at] of [['warning', 3], ['critical', 5]] as const) {
      const window = range(1, at - 1);
      expect(d.get(`support-v2/${level}`)).toMatchObject({ callIndex: at, tokens: { input: sum(window, supportIn), output: SUPPORT_OUT * window.length } });
      expect(d.get(`support-v2/${level}`)?.costUsd).toBeCloseTo(sum(window, supportUsd), 9);
      // AI SDK v6 spans: the ai.generateText sums on the root do not count twice
      expect(d.get(`docs-qa-v1/${level}`)).toMatchObject({ callIndex: at, tokens: { input: sum(window, docsIn), output: DOCS_OUT * window.length } });
      expect(d.get(`docs-qa-v1/${level}`)?.costUsd).toBeCloseTo(sum(window, docsUsd), 9);
      // Langfuse generations
      expect(d.get(`refund-v1/${level}`)).toMatchObject({ callIndex: at, tokens: { input: sum(window, refundIn), output: REFUND_OUT * window.length } });
      expect(d.get(`refund-v1/${level}`)?.costUsd).toBeCloseTo(sum(window, refundUsd), 9);
    }
    // OpenInference, a cycle from call 1 on an unpriced model: tokens, no cost
    for (const [level, at] of [['warning', 6], ['critical', 8]] as const) {
      const window = range(1, at - 1);
      expect(d.get(`triage-v3/${level}`)).toMatchObject({ callIndex: at, tokens: { input: sum(window, triageIn), output: TRIAGE_OUT * window.length } });
      expect(d.get(`triage-v3/${level}`)).not.toHaveProperty('costUsd');
    }
    expect(r.stderr).toContain('no price for model llama-3.1-70b-instruct');
  });

  it('without prices: tokens only', async () => {
    const r = await runCli(['scan', '--json', TRACES]);
    const detections = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as LoopDetection);
    expect(detections).toHaveLength(8);
    expect(detections.every((d) => d.tokens !== undefined && d.costUsd === undefined)).toBe(true);
    expect(r.stderr).toContain('no prices in the configuration: tokens only');
  });

  it('human output: each detection\'s cost, each looping run\'s bill, the total and per prompt template', async () => {
    const r = await runCli(['scan', '--config', PRICES, TRACES]);
    const out = r.stdout;
    // support-v2 ran 8 steps: the loop's bill runs from the end of call 1 to the end of the trace
    const loop = range(1, 7);
    const after = range(3, 7);
    const tokens = (xs: number[], f: (i: number) => number, o: number): string => `${(sum(xs, f) + o * xs.length).toLocaleString('en-US')} tokens (${sum(xs, f).toLocaleString('en-US')} in, ${(o * xs.length).toLocaleString('en-US')} out)`;
    expect(out).toContain(`loop spend: 7 model calls, ${tokens(loop, supportIn, SUPPORT_OUT)}, $${sum(loop, supportUsd).toFixed(3)} from the end of the loop's first call to the end of the trace`);
    expect(out).toContain(`5 model calls, ${tokens(after, supportIn, SUPPORT_OUT)}, $${sum(after, supportUsd).toFixed(3)} of it after the first detection`);
    expect(out).toContain(`the repetitions cost ${tokens(range(1, 4), supportIn, SUPPORT_OUT)}, $${sum(range(1, 4), supportUsd).toFixed(3)}`);
    const total = sum(range(1, 7), supportIn) + sum(range(1, 5), docsIn) + sum(range(1, 7), triageIn) + sum(range(1, 4), refundIn);
    expect(out).toMatch(new RegExp(`Loops cost [0-9,]+ tokens \\(${total.toLocaleString('en-US')} in, [0-9,]+ out\\), \\$[0-9.]+ and unpriced tokens in 4 traces \\(1 of them on a model without a price: tokens only\\)`));
    const templates = out.slice(out.indexOf('Per prompt template:')).split('\n').slice(1).filter((l) => l.trim() !== '');
    // ranked by tokens; the honest run has no bill
    expect(templates.map((l) => l.trim().split(/\s+/)[0])).toEqual(['support-v2', 'docs-qa-v1', 'triage-v3', 'refund-v1']);
    expect(templates[2]).not.toContain('$');
  });

  it('the HTML report: spent in loops, cost columns per template, each detection\'s cost and each run\'s bill', async () => {
    const html = join(mkdtempSync(join(tmpdir(), 'loopwatch-cost-')), 'report.html');
    const r = await runCli(['scan', '--config', PRICES, '--report', html, TRACES]);
    expect(r.code).toBe(1);
    const page = readFileSync(html, 'utf8');
    expect(page).toMatch(/<div class="value">\$0\.0[0-9]+\+<\/div><div class="label">spent in loops<\/div>/);
    const support = sum(range(1, 7), supportIn) + SUPPORT_OUT * 7;
    expect(page).toContain(`<tr data-template="support-v2"><th scope="row">support-v2</th><td>1</td><td>1</td><td>8</td><td>2</td><td>25.0</td><td class="bad">1</td><td>${support.toLocaleString('en-US')}</td><td>$${sum(range(1, 7), supportUsd).toFixed(3)}</td></tr>`);
    expect(page).toMatch(/<tr data-template="triage-v3">.*<td>—<\/td><\/tr>/);
    expect(page).toMatch(/<tr data-template="billing-v1">.*<td>—<\/td><td>—<\/td><\/tr>/);
    expect(page).toContain('Loop spend: 7 model calls');
    expect(page).toContain(`${(sum(range(1, 4), supportIn) + 4 * SUPPORT_OUT).toLocaleString('en-US')} tok · $${sum(range(1, 4), supportUsd).toFixed(3)}`);
  });
});
