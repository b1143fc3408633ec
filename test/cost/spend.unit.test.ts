import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { parseConfigText } from '../../src/formats/config-file.js';
import type { ModelUsage } from '../../src/conventions/usage.js';
import { PriceTable } from '../../src/cost/prices.js';
import { ModelCallWindow } from '../../src/cost/trace-cost.js';
import { resolveConfig, validateConfig } from '../../src/detector/config/index.js';

/** `ModelCallWindow` with the count of tool calls recorded, as the processor keeps it. */
class Trace {
  readonly cost: ModelCallWindow;
  recorded = 0;
  /** The latest tool call end told; +Infinity when a call was recorded without one (no model call is then clean). */
  toolsEnded = Number.NEGATIVE_INFINITY;
  constructor(window: number, priced: boolean, maxModelCalls?: number) {
    this.cost = new ModelCallWindow(window, priced, maxModelCalls);
  }
  toolCallRecorded(end = Number.POSITIVE_INFINITY): void {
    this.recorded++;
    this.toolsEnded = Math.max(this.toolsEnded, end);
  }
  modelCall(start: number, input: number, output: number, usd: number) {
    return this.cost.modelCall(this.recorded, start, input, output, usd, this.toolsEnded);
  }
  detection(d: { evidenceStartTime: number; evidenceCalls: number }, completedAt: number) {
    return this.cost.detection(d, this.recorded, completedAt);
  }
  loopSpend() {
    return this.cost.loopSpend();
  }
  get known(): boolean {
    return this.cost.known;
  }
  get heldModelCalls(): number {
    return this.cost.heldModelCalls;
  }
}

/**
 * An agent run fed to `ModelCallWindow` the way the processor feeds it: model call k (k = 1..) asks
 * for tool call k; each ends before the next starts. Model call k spends 100·k input and k output
 * tokens. Times in ms; `gap` between spans.
 */
function sequentialRun(cost: Trace, calls: number, opts: { gap?: number; usd?: (k: number) => number } = {}): { toolEnd: number[] } {
  const gap = opts.gap ?? 5;
  let t = 1_000;
  const toolEnd: number[] = [];
  for (let k = 1; k <= calls; k++) {
    cost.modelCall(t, 100 * k, k, opts.usd?.(k) ?? Number.NaN);
    t += gap;
    cost.toolCallRecorded();
    toolEnd[k] = t + 1;
    t += gap;
  }
  return { toolEnd };
}

describe('ModelCallWindow: the model calls behind a detection', () => {
  it('identical calls 1..5 detected at 5: the model calls between call 1 and call 5 (2..5), not the one that asked for call 1', () => {
    const cost = new Trace(128, false);
    const { toolEnd } = sequentialRun(cost, 5);
    const { spend } = cost.detection({ evidenceStartTime: toolEnd[1] as number, evidenceCalls: 5 }, toolEnd[5] as number);
    expect(spend).toEqual({ tokens: { input: 200 + 300 + 400 + 500, output: 2 + 3 + 4 + 5 }, modelCalls: 4 });
  });

  it('model call 1 is not in the window even when it ended after the first tool call started (it started before it ended)', () => {
    const cost = new Trace(128, false);
    cost.toolCallRecorded(); // an earlier, unrelated call: the trace is tracked
    cost.modelCall(990, 50, 5, Number.NaN); // asked for the call below; ended before it was recorded
    cost.toolCallRecorded(); // call F, ends at 1002
    cost.modelCall(1003, 70, 7, Number.NaN);
    cost.toolCallRecorded(); // completing call
    expect(cost.detection({ evidenceStartTime: 1002, evidenceCalls: 2 }, 1010).spend?.tokens).toEqual({ input: 70, output: 7 });
  });

  it('within one millisecond time cannot tell: the order calls ended in decides (instant tools, mock models)', () => {
    const cost = new Trace(128, false);
    // every span starts in the same millisecond; ends are start + a fraction
    for (let k = 1; k <= 5; k++) {
      cost.modelCall(1_000, 10, 1, Number.NaN);
      cost.toolCallRecorded();
    }
    // F = tool call 1 ended at 1000.4: model calls 2..5 started "before" it by the clock, after it in fact
    expect(cost.detection({ evidenceStartTime: 1000.4, evidenceCalls: 5 }, 1000.9).spend).toEqual({ tokens: { input: 40, output: 4 }, modelCalls: 4 });
  });

  it('a streaming model call that ran across the first call is not one of the calls that asked for the repetitions', () => {
    const cost = new Trace(128, false);
    cost.toolCallRecorded(); // F ends at 1050 while the stream started at 1000 is still open
    cost.modelCall(1_000, 999, 99, Number.NaN); // the stream ends after F: position after F, start clearly before
    cost.modelCall(1_060, 10, 1, Number.NaN);
    cost.toolCallRecorded();
    cost.modelCall(1_070, 10, 1, Number.NaN);
    cost.toolCallRecorded();
    expect(cost.detection({ evidenceStartTime: 1_050, evidenceCalls: 3 }, 1_080).spend?.tokens).toEqual({ input: 20, output: 2 });
  });

  it('model calls that end after the completing call are not in its window; before it, they are', () => {
    const after = new Trace(128, false);
    const a = sequentialRun(after, 3);
    after.modelCall(9_999, 7_000, 70, Number.NaN); // ends after tool call 3, the completing one, was recorded
    expect(after.detection({ evidenceStartTime: a.toolEnd[1] as number, evidenceCalls: 3 }, a.toolEnd[3] as number).spend?.tokens).toEqual({ input: 200 + 300, output: 2 + 3 });
    const before = new Trace(128, false);
    const b = sequentialRun(before, 3);
    before.modelCall(9_999, 7_000, 70, Number.NaN); // ends before tool call 4, which completes the evidence
    before.toolCallRecorded();
    expect(before.detection({ evidenceStartTime: b.toolEnd[1] as number, evidenceCalls: 4 }, 99_999).spend?.tokens).toEqual({ input: 200 + 300 + 7_000, output: 2 + 3 + 70 });
  });

  it('absent when no usage is known: no model call, or model calls only before the first tool call', () => {
    const none = new Trace(128, true);
    none.toolCallRecorded();
    none.toolCallRecorded();
    expect(none.detection({ evidenceStartTime: 0, evidenceCalls: 2 }, 1).spend).toBeUndefined();
    const before = new Trace(128, true);
    before.modelCall(0, 100, 10, 0.01);
    before.toolCallRecorded();
    before.toolCallRecorded();
    expect(before.known).toBe(false);
    expect(before.detection({ evidenceStartTime: 0, evidenceCalls: 2 }, 1).spend).toBeUndefined();
    expect(before.loopSpend()).toBeUndefined();
  });

  it('known usage and no model call in the window: zero tokens (and $0 with a price table)', () => {
    const cost = new Trace(128, true);
    cost.toolCallRecorded();
    cost.modelCall(5, 10, 1, 0.001);
    cost.toolCallRecorded(); // F
    cost.toolCallRecorded(); // C: a parallel repeat, no model call in between
    expect(cost.detection({ evidenceStartTime: 100, evidenceCalls: 2 }, 101).spend).toEqual({ tokens: { input: 0, output: 0 }, modelCalls: 0, costUsd: 0 });
  });

  it('USD when every call in the window is priced; none when one is not, or when there is no price table', () => {
    const priced = new Trace(128, true);
    const a = sequentialRun(priced, 3, { usd: (k) => k / 1000 });
    expect(priced.detection({ evidenceStartTime: a.toolEnd[1] as number, evidenceCalls: 3 }, a.toolEnd[3] as number).spend?.costUsd).toBeCloseTo(0.005, 12);
    const partly = new Trace(128, true);
    const b = sequentialRun(partly, 3, { usd: (k) => (k === 2 ? Number.NaN : k / 1000) });
    expect(partly.detection({ evidenceStartTime: b.toolEnd[1] as number, evidenceCalls: 3 }, b.toolEnd[3] as number).spend).not.toHaveProperty('costUsd');
    const table = new Trace(128, false);
    const c = sequentialRun(table, 3, { usd: () => 1 });
    expect(table.detection({ evidenceStartTime: c.toolEnd[1] as number, evidenceCalls: 3 }, c.toolEnd[3] as number).spend).not.toHaveProperty('costUsd');
  });

  it('the bill of a looping run: from the first detection\'s evidence, and from the first detection, to the end', () => {
    const cost = new Trace(128, true);
    const { toolEnd } = sequentialRun(cost, 3, { usd: () => 0.01 });
    // the warning at call 3 opens the bill with its window (model calls 2 and 3)
    const warning = cost.detection({ evidenceStartTime: toolEnd[1] as number, evidenceCalls: 3 }, toolEnd[3] as number);
    expect(warning.opened).toEqual({ input: 500, output: 5, usd: 0.02 });
    // the run goes on: model calls 4..7, each added to the bill as it ends
    const deltas = [4, 5, 6, 7].map((k) => {
      const d = cost.modelCall(10_000 + k * 10, 100 * k, k, 0.01);
      cost.toolCallRecorded();
      return d;
    });
    expect(deltas).toEqual([4, 5, 6, 7].map((k) => ({ input: 100 * k, output: k, usd: 0.01 })));
    // a later detection does not open the bill again
    expect(cost.detection({ evidenceStartTime: toolEnd[1] as number, evidenceCalls: 7 }, 99_999).opened).toBeUndefined();
    const bill = cost.loopSpend();
    expect(bill?.loop).toMatchObject({ tokens: { input: 200 + 300 + 400 + 500 + 600 + 700, output: 27 }, modelCalls: 6 });
    expect(bill?.loop.costUsd).toBeCloseTo(0.06, 12);
    expect(bill?.afterDetection).toMatchObject({ tokens: { input: 400 + 500 + 600 + 700, output: 22 }, modelCalls: 4 });
  });

  it('memory is bounded: model calls no detection can reach are dropped, and a cap holds when no tool call comes', () => {
    const cost = new Trace(8, false, 32);
    sequentialRun(cost, 200);
    expect(cost.heldModelCalls).toBeLessThanOrEqual(10);
    for (let i = 0; i < 1_000; i++) cost.modelCall(1e9 + i, 1, 1, Number.NaN);
    expect(cost.heldModelCalls).toBe(32);
    // the newest calls are still counted exactly
    cost.toolCallRecorded();
    expect(cost.detection({ evidenceStartTime: 0, evidenceCalls: 2 }, 2e9).spend?.modelCalls).toBe(32);
  });
});

const usage = (input: number, output: number, requestModel?: string, responseModel?: string, cacheRead = 0): ModelUsage => ({ input, output, cacheRead, requestModel, responseModel });

describe('PriceTable', () => {
  it('USD per million tokens, cached input at its own price', () => {
    const table = new PriceTable({ 'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 } });
    expect(table.usd(usage(1_000_000, 0, 'gpt-4o'))).toBeCloseTo(2.5, 12);
    expect(table.usd(usage(1200, 40, 'gpt-4o', undefined, 1000))).toBeCloseTo((200 * 2.5 + 1000 * 1.25 + 40 * 10) / 1e6, 15);
    // without a cached price, cached tokens cost what input costs
    expect(new PriceTable({ m: { input: 3, output: 15 } }).usd(usage(1200, 0, 'm', undefined, 1000))).toBeCloseTo((1200 * 3) / 1e6, 15);
  });

  it('the model that answered before the one asked for; an exact name before any pattern; a longer pattern before a shorter', () => {
    const table = new PriceTable({
      'gpt-4o': { input: 1, output: 1 },
      'gpt-4o-2024-08-06': { input: 2, output: 2 },
      'gpt-4o*': { input: 3, output: 3 },
      'gpt-*': { input: 4, output: 4 },
      '*mini*': { input: 5, output: 5 },
      'claude-*': { input: 6, output: 6 },
    });
    expect(table.priceOf('gpt-4o', 'gpt-4o-2024-08-06')?.input).toBe(2);
    expect(table.priceOf('gpt-4o', 'gpt-4o-2024-11-20')?.input).toBe(1);
    expect(table.priceOf(undefined, 'gpt-4o-2024-11-20')?.input).toBe(3);
    expect(table.priceOf('gpt-4.1', undefined)?.input).toBe(4);
    expect(table.priceOf('gpt-4o-mini', undefined)?.input).toBe(3);
    expect(table.priceOf('my-alias', 'claude-sonnet-4-5')?.input).toBe(6);
    expect(table.priceOf('GPT-4O', undefined)?.input).toBe(1);
    expect(table.priceOf('llama-3', 'llama-3-70b')).toBeUndefined();
  });

  it('an unpriced model costs NaN and is reported once', () => {
    const onUnpriced = vi.fn();
    const table = new PriceTable({ 'gpt-4o': { input: 1, output: 1 } }, onUnpriced);
    expect(table.usd(usage(10, 10, 'llama-3'))).toBeNaN();
    expect(table.usd(usage(10, 10, 'llama-3'))).toBeNaN();
    expect(table.usd(usage(10, 10))).toBeNaN();
    expect(onUnpriced.mock.calls).toEqual([['llama-3'], ['(no model name)']]);
  });

  it('an empty or absent table prices nothing', () => {
    expect(PriceTable.of(undefined)).toBeUndefined();
    expect(PriceTable.of({})).toBeUndefined();
    expect(PriceTable.of({ '*': { input: 1, output: 2 } })?.usd(usage(1e6, 1e6))).toBe(3);
  });
});

describe('prices in the configuration', () => {
  it('is accepted beside the engine settings, which ignore it', () => {
    const prices = { 'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 }, 'claude-*': { input: 3, output: 15 } };
    expect(validateConfig({ prices })).toEqual([]);
    expect(resolveConfig({ prices }).mode).toBe('enforce');
  });

  it('reports every problem with its path', () => {
    const issues = validateConfig({
      prices: {
        'gpt-4o': { input: 2.5 },
        mini: { input: -1, output: 'cheap', cents: 3 },
        perToken: { input: 0.0000025, output: 0.00001 },
        '  ': { input: 1, output: 1 },
        list: [1, 2],
      },
    });
    expect(issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'prices.gpt-4o.output: missing: the price in USD per million tokens',
      'prices.mini.cents: unknown key (expected one of: input, output, cachedInput)',
      'prices.mini.input: must be at least 0, got -1',
      'prices.mini.output: expected a number, got "cheap"',
      'prices.perToken.input: prices are USD per million tokens: 0.0000025 looks like a price per token (2.5 per million)',
      'prices.perToken.output: prices are USD per million tokens: 0.00001 looks like a price per token (10 per million)',
      'prices.  : expected a model name or pattern, got an empty key',
      'prices.list: expected { input, output, cachedInput } in USD per million tokens, got a list',
    ]);
    expect(validateConfig({ prices: 'gpt-4o=2.5' })[0]?.message).toMatch(/expected a map of model names/);
  });

  it('a configuration file names the file and line of a bad price', () => {
    const yaml = ['mode: enforce', 'prices:', '  gpt-4o:', '    input: 2.5', '    output: ten', ''].join('\n');
    expect(() => parseConfigText(yaml, 'loopwatch.yaml')).toThrow('loopwatch.yaml:5: prices.gpt-4o.output: expected a number, got "ten"');
  });
});

describe('the docs on prices', () => {
  it('show price tables that the configuration accepts', () => {
    const docs = ['docs/loop-cost.md', 'docs/configuration.md'].map((f) => readFileSync(join(import.meta.dirname, '../..', f), 'utf8')).join('\n');
    const blocks = [...docs.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '').filter((b) => /^prices:/m.test(b));
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const b of blocks) expect(Object.keys(parseConfigText(b, 'docs').prices ?? {}).length).toBeGreaterThan(0);
  });

  it("an agent's tens of model calls between two tool calls take one entry, and every figure stays what it was", () => {
    const cost = new Trace(128, true);
    let t = 1_000;
    for (let tool = 1; tool <= 5; tool++) {
      for (let m = 0; m < 8; m++) {
        cost.modelCall(t, 1_000, 50, 0.001);
        t += 3;
      }
      t += 2;
      cost.toolCallRecorded(t);
      t += 2;
    }
    // 40 model calls, the first 8 before any tool call (kept nowhere), then 4 positions of 8
    expect(cost.heldModelCalls).toBe(4);
    expect(cost.detection({ evidenceStartTime: 0, evidenceCalls: 5 }, t).spend).toMatchObject({ modelCalls: 32, tokens: { input: 32_000, output: 1_600 } });
  });

  it('sharing entries changes no spend or bill, whatever the timing (reference: every call its own entry)', () => {
    type Op = { kind: 'model'; startBack: number; input: number } | { kind: 'tool'; dur: number } | { kind: 'detect'; back: number; calls: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 5, arbitrary: fc.record({ kind: fc.constant('model' as const), startBack: fc.constantFrom(0, 0, 0, 1, 2, 5, 30), input: fc.integer({ min: 1, max: 500 }) }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('tool' as const), dur: fc.constantFrom(0, 1, 2, 10) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('detect' as const), back: fc.integer({ min: 0, max: 6 }), calls: fc.integer({ min: 1, max: 6 }) }) },
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), fc.boolean(), (ops, priced) => {
        const shared = new Trace(16, priced, 24);
        const alone = new Trace(16, priced, 24);
        const ends: number[] = [];
        let now = 1_000;
        for (const o of ops) {
          now += 1;
          if (o.kind === 'model') {
            const usd = o.input / 1e5;
            // a model call that started `startBack` ms ago (a streaming call may span a tool call)
            expect(shared.modelCall(now - o.startBack, o.input, 1, usd)).toEqual(alone.modelCall(now - o.startBack, o.input, 1, usd));
          } else if (o.kind === 'tool') {
            now += o.dur;
            ends.push(now);
            shared.toolCallRecorded(now);
            alone.toolCallRecorded();
          } else if (ends.length > 0) {
            const first = Math.max(0, ends.length - o.calls);
            const d = { evidenceStartTime: (ends[Math.max(0, first - o.back)] ?? 0) as number, evidenceCalls: Math.min(o.calls, ends.length) };
            const a = shared.detection(d, now);
            const b = alone.detection(d, now);
            expect(a.spend?.modelCalls).toBe(b.spend?.modelCalls);
            expect(a.spend?.tokens).toEqual(b.spend?.tokens);
            if (b.spend?.costUsd !== undefined) expect(a.spend?.costUsd).toBeCloseTo(b.spend.costUsd, 9);
            expect(a.opened?.input).toBe(b.opened?.input);
          }
        }
        const a = shared.loopSpend();
        const b = alone.loopSpend();
        expect(a?.loop.tokens).toEqual(b?.loop.tokens);
        expect(a?.afterDetection.modelCalls).toBe(b?.afterDetection.modelCalls);
        expect(shared.heldModelCalls).toBeLessThanOrEqual(alone.heldModelCalls);
      }),
      { numRuns: 500 },
    );
  });
});
