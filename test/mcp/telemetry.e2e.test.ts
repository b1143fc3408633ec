/**
 * E2E: what `loopwatch mcp` exports, received by the real collector with the project's gateway
 * configuration (collector-config/gateway.yaml + the file-export overlay, all traces kept): a
 * span per tools/call following the OpenTelemetry MCP conventions, the `loop.detected` events,
 * and the contract's counters as the gateway's count connector makes them from those spans,
 * counting a call once when the client sends its own span for it (W3C trace context in
 * params._meta, as the MCP conventions propagate it).
 */
import { context, SpanKind, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { startGateway, type Gateway } from '../e2e/support/collector.js';
import { readFileSpans, type FileSpan } from '../e2e/support/otlp-json-lines.js';
import { RUN_ROOT } from '../e2e/support/paths.js';
import { logTail, sleep } from '../e2e/support/process.js';
import { connectThroughProxy, ORDER_SERVER, resultText } from './support/proxy.js';

const runDir = join(RUN_ROOT, `mcp-telemetry-${process.pid}-${Date.now()}`);
let gateway: Gateway;
let failed = false;

beforeAll(async () => {
  gateway = await startGateway({ name: 'mcp-gateway', runDir, samplePercent: 100 });
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  if (!failed && !process.env.LOOPWATCH_KEEP_RUN) rmSync(runDir, { recursive: true, force: true });
});

async function spansUntil(count: number): Promise<FileSpan[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const spans = readFileSpans(gateway.sampledFile);
    if (spans.length >= count || Date.now() > deadline) return spans;
    await sleep(250);
  }
}

/** The gateway's Prometheus exposition: value of each series of `metric`, by its labels. */
async function series(metric: string): Promise<Record<string, number>> {
  const text = await (await fetch(`http://${gateway.metricsTarget}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const labels = line.slice(metric.length + 1, line.lastIndexOf('}'));
    const pick = (name: string): string => new RegExp(`${name}="([^"]*)"`).exec(labels)?.[1] ?? '';
    const key = metric.includes('detections') ? `${pick('gen_ai_tool_name')} ${pick('loop_kind')} ${pick('loop_level')}` : pick('gen_ai_tool_name');
    out[key] = (out[key] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}

describe('loopwatch mcp telemetry at the real collector gateway', { timeout: 180_000 }, () => {
  it('a span per tools/call (MCP conventions), loop.detected events on the hinted and refused calls, each call counted once', async () => {
    onTestFailed(() => {
      failed = true;
      console.log(`gateway log:\n${logTail(gateway.process.logFile)}`);
    });
    const env = {
      ...process.env,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: gateway.otlpHttpUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'mcp-e2e',
    };
    const { client, transport } = await connectThroughProxy([], ORDER_SERVER, env);
    for (let i = 0; i < 4; i++) await client.callTool({ name: 'lookup_order', arguments: { order_id: 'A-1042' } });
    await client.callTool({ name: 'echo', arguments: { text: 'untraced' } });

    // a client that traces its own call and propagates the context in params._meta
    const clientProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: gateway.otlpHttpUrl }))] });
    const tracer = clientProvider.getTracer('e2e-mcp-client');
    const clientSpan = tracer.startSpan('tools/call echo', {
      kind: SpanKind.CLIENT,
      attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'echo' },
    });
    const meta: Record<string, string> = {};
    new W3CTraceContextPropagator().inject(trace.setSpan(context.active(), clientSpan), meta, { set: (c, k, v) => void (c[k] = v) });
    expect(resultText(await client.callTool({ name: 'echo', arguments: { text: 'traced' }, _meta: meta }))).toBe('traced');
    clientSpan.end();
    await clientProvider.shutdown();
    await client.close();
    await transport.exit;

    const spans = await spansUntil(7);
    const proxySpans = spans.filter((s) => s.name.startsWith('tools/call') && s.spanId !== clientSpan.spanContext().spanId);
    console.log(
      `spans exported by loopwatch mcp:\n${proxySpans
        .map((s) => `  ${s.name} ${JSON.stringify(s.attributes)}${s.events.map((e) => `\n    event ${e.name} ${JSON.stringify(e.attributes)}`).join('')}`)
        .join('\n')}`,
    );
    expect(proxySpans).toHaveLength(6);
    const loops = proxySpans.filter((s) => s.name === 'tools/call lookup_order').sort((a, b) => Number(a.attributes['jsonrpc.request.id']) - Number(b.attributes['jsonrpc.request.id']));
    expect(loops).toHaveLength(4);
    for (const s of loops) {
      expect(s.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'lookup_order', 'gen_ai.operation.name': 'execute_tool', 'network.transport': 'pipe', 'error.type': 'tool_error' });
      expect(typeof s.attributes['jsonrpc.request.id']).toBe('string');
      expect(typeof s.attributes['mcp.session.id']).toBe('string');
      expect(s.attributes['mcp.protocol.version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    const events = loops.flatMap((s) => s.events.filter((e) => e.name === 'loop.detected').map((e) => ({ action: s.attributes['loop.action'], ...e.attributes })));
    expect(events).toMatchObject([
      { action: 'hinted', 'loop.action': 'hinted', 'loop.kind': 'error_pattern', 'loop.level': 'warning', 'gen_ai.tool.name': 'lookup_order', 'loop.count': 3 },
      { action: 'blocked', 'loop.action': 'blocked', 'loop.kind': 'error_pattern', 'loop.level': 'critical', 'gen_ai.tool.name': 'lookup_order' },
    ]);
    // nothing of the arguments or results leaves the process
    expect(JSON.stringify(proxySpans)).not.toContain('A-1042');
    expect(JSON.stringify(proxySpans)).not.toContain('locked by another process');
    // the traced call: the proxy's span is in the client's trace, and is not a second tool call
    const traced = proxySpans.find((s) => s.traceId === clientSpan.spanContext().traceId);
    expect(traced?.name).toBe('tools/call echo');
    expect(traced?.attributes['gen_ai.operation.name']).toBeUndefined();

    // the gateway's counters: each call once (the traced echo by the client's span), each detection once
    const deadline = Date.now() + 60_000;
    let calls: Record<string, number> = {};
    let detections: Record<string, number> = {};
    while (Date.now() < deadline) {
      calls = await series('gen_ai_tool_calls_total');
      detections = await series('gen_ai_tool_loop_detections_total');
      if (calls.echo === 2 && calls.lookup_order === 4 && Object.keys(detections).length === 2) break;
      await sleep(500);
    }
    expect(calls).toEqual({ lookup_order: 4, echo: 2 });
    expect(detections).toEqual({ 'lookup_order error_pattern warning': 1, 'lookup_order error_pattern critical': 1 });
  });
});
