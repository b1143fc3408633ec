/**
 * Item 3 of issue 15: the contract's counters through the real Metrics SDK and each detection as
 * a real log record, from the processor (real tracer SDK) and from serve (real OTLP requests).
 */
import { context, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import type { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopDetectionSpanProcessor, type LoopDetection } from '../../src/index.js';
import { LoopwatchServer } from '../../src/serve/server.js';
import { metricsHarness } from '../support/metrics.js';
import { agentTrace, tracesData } from '../support/otlp.js';
import { FakeDownstream } from '../serve/downstream.js';

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => void context.setGlobalContextManager(contextManager.enable()));
afterAll(() => void context.disable());

/** The contract's series; serve's own gauges (memory, spool, connections) are checked in test/serve/limits.integration.test.ts. */
const SERIES = (name: string): boolean => !name.startsWith('loopwatch.serve.');

function logsHarness() {
  const exporter = new InMemoryLogRecordExporter();
  const loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
  // the simple processor exports on a promise: flushed before reading
  const records = async () => {
    await loggerProvider.forceFlush();
    return exporter.getFinishedLogRecords();
  };
  return { loggerProvider, records };
}

/** One agent run through a real tracer: `n` identical search calls under an invoke_agent span. */
function runAgent(tracer: Tracer, prompt: string, n: number, honest = false): void {
  tracer.startActiveSpan('invoke_agent support', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.prompt.name': prompt } }, (root) => {
    for (let i = 0; i < n; i++) {
      const span = tracer.startSpan('execute_tool search', {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'search',
          'gen_ai.tool.call.arguments': JSON.stringify({ q: honest ? `page ${i}` : 'zq-secret-query' }),
          'gen_ai.tool.call.result': JSON.stringify(honest ? { page: i } : { items: [] }),
        },
      });
      span.end();
    }
    root.end();
  });
}

describe('the processor records the contract counters and log records through the real SDKs', () => {
  it('counts every tool call and detection, cumulatively, with the collector path labels', async () => {
    const { meterProvider, read } = metricsHarness(SERIES);
    const { loggerProvider, records } = logsHarness();
    const detections: LoopDetection[] = [];
    const loops = new LoopDetectionSpanProcessor({ meterProvider, loggerProvider, onLoop: (d) => void detections.push(d) });
    const provider = new BasicTracerProvider({ spanProcessors: [loops as unknown as SpanProcessor, new SimpleSpanProcessor(new InMemorySpanExporter())] });
    const tracer = provider.getTracer('test');
    runAgent(tracer, 'support', 5);
    runAgent(tracer, 'billing', 3, true);
    expect(await read()).toEqual({
      'gen_ai.tool.calls{gen_ai.prompt.name=support,gen_ai.tool.name=search}': 5,
      'gen_ai.tool.calls{gen_ai.prompt.name=billing,gen_ai.tool.name=search}': 3,
      'gen_ai.tool.loop.detections{gen_ai.prompt.name=support,gen_ai.tool.name=search,loop.kind=repeat,loop.level=warning}': 1,
      'gen_ai.tool.loop.detections{gen_ai.prompt.name=support,gen_ai.tool.name=search,loop.kind=repeat,loop.level=critical}': 1,
    });
    // cumulative: a second run adds to the same series
    runAgent(tracer, 'support', 3);
    const after = await read();
    expect(after['gen_ai.tool.calls{gen_ai.prompt.name=support,gen_ai.tool.name=search}']).toBe(8);
    expect(after['gen_ai.tool.loop.detections{gen_ai.prompt.name=support,gen_ai.tool.name=search,loop.kind=repeat,loop.level=warning}']).toBe(2);

    const logs = await records();
    expect(logs).toHaveLength(detections.length);
    expect(logs.map((r) => [r.eventName, r.severityText, r.attributes['loop.level']])).toEqual(detections.map((d) => ['loop.detected', d.level === 'critical' ? 'ERROR' : 'WARN', d.level]));
    expect(logs[0]?.spanContext?.traceId).toBe(detections[0]?.traceId);
    expect(logs[0]?.spanContext?.spanId).toBe(detections[0]?.spanId);
    expect(logs[0]?.body).toBe(detections[0]?.message);
    expect(JSON.stringify(logs.map((r) => r.attributes))).not.toContain('zq-secret-query');
    await provider.shutdown();
  });

  it('a provider that throws turns its feature off, never the processor or the app', async () => {
    const broken = { getMeter: () => ({ createCounter: () => ({ add: () => { throw new Error('meter down'); } }) }) } as unknown as MeterProvider;
    const brokenLogs = { getLogger: () => { throw new Error('no logger'); } };
    const detections: LoopDetection[] = [];
    const loops = new LoopDetectionSpanProcessor({ meterProvider: broken, loggerProvider: brokenLogs, onLoop: (d) => void detections.push(d) });
    const provider = new BasicTracerProvider({ spanProcessors: [loops as unknown as SpanProcessor] });
    expect(() => runAgent(provider.getTracer('t'), 'p', 5)).not.toThrow();
    expect(detections.map((d) => d.level)).toEqual(['warning', 'critical']);
    expect(trace.getActiveSpan()).toBeUndefined();
    await provider.shutdown();
  });
});

describe('serve records the same counters and log records', () => {
  it('counts what it forwards: tool calls and detections of every completed trace', async () => {
    const { meterProvider, read } = metricsHarness(SERIES);
    const { loggerProvider, records } = logsHarness();
    const down = await new FakeDownstream().start();
    const server = new LoopwatchServer({ port: 0, forward: down.url, limits: { quietAfterRoot: 20 }, meterProvider, loggerProvider, log: () => undefined });
    const { port } = await server.listen();
    const spans = [
      ...agentTrace({ label: 'm-loop', prompt: 'support', steps: Array.from({ length: 5 }, () => ({ tool: 'search', args: { q: 'x' }, result: 'same' })) }),
      ...agentTrace({ label: 'm-honest', steps: Array.from({ length: 2 }, (_, i) => ({ tool: 'fetch', args: { i }, result: i })) }),
    ];
    const res = await fetch(`http://127.0.0.1:${port}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(tracesData(spans)) });
    expect(res.status).toBe(200);
    await server.close(5_000);
    await down.stop();
    expect(await read()).toEqual({
      'gen_ai.tool.calls{gen_ai.prompt.name=support,gen_ai.tool.name=search}': 5,
      'gen_ai.tool.calls{gen_ai.prompt.name=unknown,gen_ai.tool.name=fetch}': 2,
      'gen_ai.tool.loop.detections{gen_ai.prompt.name=support,gen_ai.tool.name=search,loop.kind=repeat,loop.level=warning}': 1,
      'gen_ai.tool.loop.detections{gen_ai.prompt.name=support,gen_ai.tool.name=search,loop.kind=repeat,loop.level=critical}': 1,
    });
    expect((await records()).map((r) => [r.eventName, r.attributes['loop.call_index']])).toEqual([
      ['loop.detected', 3],
      ['loop.detected', 5],
    ]);
  });
});
