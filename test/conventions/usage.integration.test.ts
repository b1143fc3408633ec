import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, trace, type Attributes } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { claimingAdapter, defaultAdapters } from '../../src/conventions/index.js';
import { readModelUsage } from '../../src/conventions/usage.js';
import { collectingProcessor } from '../support/collecting-processor.js';

interface SpanSpec {
  readonly name: string;
  readonly attributes: Record<string, unknown>;
  readonly why?: string;
}
export interface UsageFixture {
  readonly instrumentation: string;
  readonly source: string;
  readonly modelCall: SpanSpec;
  readonly expect: { input: number; output: number; cacheRead: number; requestModel: string; responseModel: string };
  readonly notModelCalls: readonly SpanSpec[];
}

export const USAGE_FIXTURES = join(import.meta.dirname, '../fixtures/usage');
export const usageFixtures: ReadonlyArray<readonly [string, UsageFixture]> = readdirSync(USAGE_FIXTURES)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => [f, JSON.parse(readFileSync(join(USAGE_FIXTURES, f), 'utf8')) as UsageFixture] as const);

describe('model-call usage per dialect (test/fixtures/usage)', () => {
  it('has a fixture for every dialect that reports usage', () => {
    expect(usageFixtures.map(([f]) => f.replace('.json', ''))).toEqual([
      'ai-sdk-v4', 'ai-sdk-v6', 'ai-sdk-v7-otel', 'gen-ai-semconv', 'langfuse', 'langsmith', 'mastra', 'openinference', 'traceloop-legacy', 'traceloop',
    ]);
  });

  for (const [file, fx] of usageFixtures) {
    describe(file, () => {
      it(`reads the model call: ${fx.instrumentation}`, () => {
        expect(readModelUsage(fx.modelCall)).toEqual(fx.expect);
      });
      for (const span of fx.notModelCalls) {
        it(`does not count ${span.name}: ${span.why ?? ''}`, () => {
          expect(readModelUsage(span)).toBeUndefined();
        });
      }
    });
  }

  it('tokens written as OTLP/JSON 64-bit strings, or as bigints, count; fractions round down', () => {
    expect(readModelUsage({ name: 'chat', attributes: { 'gen_ai.usage.input_tokens': '120', 'gen_ai.usage.output_tokens': BigInt(7) } })).toMatchObject({ input: 120, output: 7 });
    expect(readModelUsage({ name: 'chat', attributes: { 'gen_ai.usage.input_tokens': 12.9 } })).toMatchObject({ input: 12, output: 0 });
  });

  it('only one side reported: the other is 0; a cache larger than the input is cut to it', () => {
    expect(readModelUsage({ name: 'chat', attributes: { 'gen_ai.usage.output_tokens': 9 } })).toMatchObject({ input: 0, output: 9, cacheRead: 0 });
    expect(readModelUsage({ name: 'chat', attributes: { 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.cache_read.input_tokens': 50 } })).toMatchObject({ cacheRead: 10 });
  });

  it('spans of no dialect, and model calls without usage, give nothing', () => {
    expect(readModelUsage({ name: 'GET /orders', attributes: { 'http.request.method': 'GET' } })).toBeUndefined();
    expect(readModelUsage({ name: 'chat gpt-4o', attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' } })).toBeUndefined();
    expect(readModelUsage({ name: 'llm', attributes: { 'langfuse.observation.type': 'generation', 'langfuse.observation.usage_details': 'not json' } })).toBeUndefined();
  });
});

describe('each dialect\'s model calls between looping tool calls, through a real SDK with loopwatch registered', () => {
  for (const [file, fx] of usageFixtures) {
    it(`${file}: the critical detection at call 5 counts the 4 model calls that asked for calls 2..5, nothing else`, async () => {
      const exporter = new InMemorySpanExporter();
      const { loops, detections } = collectingProcessor({ mode: 'observe' });
      const provider = new BasicTracerProvider({ spanProcessors: [loops as unknown as SpanProcessor, new SimpleSpanProcessor(exporter)] });
      const tracer = provider.getTracer('usage-fixtures');
      // spans that must not count, minus tool spans (they would be tool calls of the loop)
      const distractors = fx.notModelCalls.filter((s) => claimingAdapter(defaultAdapters, s) === undefined);
      const root = tracer.startSpan('invoke_agent support', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.prompt.name': 'support-v2' } });
      const ctx = trace.setSpan(context.active(), root);
      for (let i = 0; i < 6; i++) {
        tracer.startSpan(fx.modelCall.name, { attributes: fx.modelCall.attributes as Attributes }, ctx).end();
        for (const d of distractors) tracer.startSpan(d.name, { attributes: d.attributes as Attributes }, ctx).end();
        tracer
          .startSpan('execute_tool lookup', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup', 'gen_ai.tool.call.arguments': '{"id":7}', 'gen_ai.tool.call.result': '{"found":false}' } }, ctx)
          .end();
      }
      root.end();
      await provider.forceFlush();
      const critical = detections.find((d) => d.level === 'critical');
      expect(critical?.callIndex).toBe(5);
      expect(critical?.tokens).toEqual({ input: 4 * fx.expect.input, output: 4 * fx.expect.output });
      await provider.shutdown();
    });
  }
});
