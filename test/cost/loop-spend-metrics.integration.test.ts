/**
 * The loop-spend counters (gen_ai.tool.loop.tokens by prompt template and token type,
 * gen_ai.tool.loop.cost.usd) through the real Metrics SDK: from the processor as the spend happens,
 * and from serve when a trace completes; both equal the loop bills the traces report, and the
 * bills equal the usage the runs were built with.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, trace, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { LoopDetectionSpanProcessor, type TraceLoopSummary } from '../../src/index.js';
import { LoopwatchServer } from '../../src/serve/server.js';
import { FakeDownstream } from '../serve/downstream.js';
import { metricsHarness } from '../support/metrics.js';
import { batches, interleave, tracesData } from '../support/otlp.js';
import { loopCostTraces, DOCS_OUT, docsIn, REFUND_OUT, refundIn, SUPPORT_OUT, supportIn, TRIAGE_OUT, triageIn } from '../support/loop-cost-fixture.js';

/** The loop-spend series, not the detection counter. */
const SPEND_SERIES = (name: string): boolean => name.startsWith('gen_ai.tool.loop.') && name !== 'gen_ai.tool.loop.detections';

const PRICES = { 'gpt-4o': { input: 2.5, output: 10 } };
const sum = (from: number, to: number, f: (n: number) => number): number => Array.from({ length: to - from + 1 }, (_, k) => f(from + k)).reduce((a, b) => a + b, 0);

/** `steps` identical search calls, each asked for by a gpt-4o call with 100·n input tokens (n = 1..) and 5 output. */
function run(tracer: Tracer, prompt: string, steps: number): void {
  tracer.startActiveSpan('invoke_agent support', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.prompt.name': prompt } }, (root) => {
    const ctx = trace.setSpan(context.active(), root);
    for (let n = 1; n <= steps; n++) {
      tracer.startSpan('chat gpt-4o', { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 100 * n, 'gen_ai.usage.output_tokens': 5 } }, ctx).end();
      tracer.startSpan('execute_tool search', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"q":"x"}', 'gen_ai.tool.call.result': '[]' } }, ctx).end();
    }
    root.end();
  });
}

describe('loop-spend counters', () => {
  it('the processor counts each model call inside a loop as it ends: the counters follow the bill while the run is still going', async () => {
    const { meterProvider, read } = metricsHarness(SPEND_SERIES);
    const summaries: TraceLoopSummary[] = [];
    const loops = new LoopDetectionSpanProcessor({ mode: 'observe', meterProvider, prices: PRICES, onTraceEnd: (s) => void summaries.push(s) });
    const provider = new BasicTracerProvider({ spanProcessors: [loops as unknown as SpanProcessor, new SimpleSpanProcessor(new InMemorySpanExporter())] });
    const tracer = provider.getTracer('spend');
    // not a loop yet after 2 calls: nothing counted
    await tracer.startActiveSpan('invoke_agent support', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.prompt.name': 'live' } }, async (root) => {
      const ctx = trace.setSpan(context.active(), root);
      const step = (n: number): void => {
        tracer.startSpan('chat gpt-4o', { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 100 * n, 'gen_ai.usage.output_tokens': 5 } }, ctx).end();
        tracer.startSpan('execute_tool search', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"q":"x"}', 'gen_ai.tool.call.result': '[]' } }, ctx).end();
      };
      step(1);
      step(2);
      expect(await read()).toEqual({});
      step(3); // the warning: model calls 2 and 3 open the bill
      expect(await read()).toEqual({ 'gen_ai.tool.loop.tokens{gen_ai.prompt.name=live,gen_ai.token.type=input}': 500, 'gen_ai.tool.loop.tokens{gen_ai.prompt.name=live,gen_ai.token.type=output}': 10, 'gen_ai.tool.loop.cost.usd{gen_ai.prompt.name=live}': (500 * 2.5 + 10 * 10) / 1e6 });
      step(4); // one more model call: counted when it ends, before the trace does
      expect((await read())['gen_ai.tool.loop.tokens{gen_ai.prompt.name=live,gen_ai.token.type=input}']).toBe(900);
      root.end();
    });
    expect(summaries[0]?.loop?.tokens).toEqual({ input: 900, output: 15 });

    // two more runs: cumulative per template, equal to the sum of the bills
    run(tracer, 'live', 6);
    run(tracer, 'other', 3);
    const values = await read();
    const bills = new Map<string, { input: number; output: number; usd: number }>();
    for (const s of summaries) {
      const b = bills.get(s.promptName ?? '') ?? { input: 0, output: 0, usd: 0 };
      bills.set(s.promptName ?? '', { input: b.input + (s.loop?.tokens.input ?? 0), output: b.output + (s.loop?.tokens.output ?? 0), usd: b.usd + (s.loop?.costUsd ?? 0) });
    }
    expect(bills.get('live')).toMatchObject({ input: 900 + sum(2, 6, (n) => 100 * n), output: 15 + 25 });
    expect(bills.get('other')).toMatchObject({ input: 500, output: 10 });
    for (const [prompt, b] of bills) {
      expect(values[`gen_ai.tool.loop.tokens{gen_ai.prompt.name=${prompt},gen_ai.token.type=input}`]).toBe(b.input);
      expect(values[`gen_ai.tool.loop.tokens{gen_ai.prompt.name=${prompt},gen_ai.token.type=output}`]).toBe(b.output);
      expect(values[`gen_ai.tool.loop.cost.usd{gen_ai.prompt.name=${prompt}}`]).toBeCloseTo(b.usd, 12);
    }
    await provider.shutdown();
  });

  it('serve counts each completed trace\'s bill, per template, priced where its configuration says', async () => {
    const { meterProvider, read } = metricsHarness(SPEND_SERIES);
    const down = await new FakeDownstream().start();
    const config = parse(readFileSync(join(import.meta.dirname, '../fixtures/otlp/loop-cost.prices.yaml'), 'utf8')) as object;
    const server = new LoopwatchServer({ port: 0, forward: down.url, limits: { quietAfterRoot: 20 }, meterProvider, config, log: () => undefined });
    const { port } = await server.listen();
    const t = loopCostTraces();
    for (const batch of batches(interleave(t.supportLoop, t.docsLoop, t.triageCycle, t.refundFailures, t.billingHonest), 9)) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(tracesData(batch)) });
      expect(res.status).toBe(200);
    }
    await server.close(5_000);
    await down.stop();
    const values = await read();
    // each loop's bill runs from the end of its first call (model calls 1..) to the end of the trace
    const tokens = (prompt: string, type: string): number | undefined => values[`gen_ai.tool.loop.tokens{gen_ai.prompt.name=${prompt},gen_ai.token.type=${type}}`];
    expect([tokens('support-v2', 'input'), tokens('support-v2', 'output')]).toEqual([sum(1, 7, supportIn), 7 * SUPPORT_OUT]);
    expect([tokens('docs-qa-v1', 'input'), tokens('docs-qa-v1', 'output')]).toEqual([sum(1, 5, docsIn), 5 * DOCS_OUT]);
    expect([tokens('triage-v3', 'input'), tokens('triage-v3', 'output')]).toEqual([sum(1, 7, triageIn), 7 * TRIAGE_OUT]);
    expect([tokens('refund-v1', 'input'), tokens('refund-v1', 'output')]).toEqual([sum(1, 4, refundIn), 4 * REFUND_OUT]);
    expect(Object.keys(values).filter((k) => k.includes('billing-v1'))).toEqual([]);
    // the llama model of triage-v3 has no price: no cost series for it
    expect(Object.keys(values).filter((k) => k.startsWith('gen_ai.tool.loop.cost.usd')).sort()).toEqual(
      ['docs-qa-v1', 'refund-v1', 'support-v2'].map((p) => `gen_ai.tool.loop.cost.usd{gen_ai.prompt.name=${p}}`),
    );
    // the forwarded roots carry the loop.summary event with the same bill
    const summaries = down.spans.flatMap((s) => s.events.filter((e) => e.name === 'loop.summary').map((e) => e.attributes));
    expect(summaries).toHaveLength(4);
    const support = summaries.find((a) => a['gen_ai.prompt.name'] === 'support-v2');
    expect(support).toMatchObject({ 'loop.tokens.input': sum(1, 7, supportIn), 'loop.tokens.output': 7 * SUPPORT_OUT, 'loop.model_calls': 7, 'loop.detections': 2, 'loop.stopped': false });
    expect(support?.['loop.cost.usd']).toBeCloseTo(values['gen_ai.tool.loop.cost.usd{gen_ai.prompt.name=support-v2}'] ?? Number.NaN, 9);
  });
});
