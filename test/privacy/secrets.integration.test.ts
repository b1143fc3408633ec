/**
 * Privacy: a secret planted in tool arguments, results and error messages never appears in
 * anything loopwatch writes or says: span events, attributes it adds, detections handed to
 * onLoop, diag messages, or `loopwatch scan --json` output. The opt-in argument preview shows
 * arguments only when asked, bounded, with credentials redacted. (Metrics: test/e2e/privacy.)
 */
import { diag, DiagLogLevel, ROOT_CONTEXT, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { LoopDetectionSpanProcessor, type LoopDetection, type LoopDetectionSpanProcessorOptions } from '../../src/index.js';
import { ATTR_LOOP_ARGUMENTS_PREVIEW } from '../../src/advanced.js';
import { agentTrace, tracesData } from '../support/otlp.js';

const SECRET = 'sk-live-4f9c2e71b3a84d0f9e6a5c1d7b2e8f30';
const PASSWORD = 'hunter2-correct-horse';

/** Calls that loop (so that events, detections and messages are written), full of secrets. */
function secretCalls(): Array<{ tool: string; args: Record<string, unknown>; result?: unknown; error?: string }> {
  const lookup = { tool: 'call_api', args: { url: 'https://api.example.com/v1/orders', token: SECRET, password: PASSWORD, note: `use ${SECRET}` }, result: { echo: SECRET, body: `Bearer ${SECRET}` } };
  const failing = { tool: 'login', args: { user: 'ops', password: PASSWORD }, error: `invalid credentials for ${SECRET}` };
  const cycleA = { tool: 'get_key', args: { id: SECRET }, result: { key: SECRET } };
  const cycleB = { tool: 'use_key', args: { ref: SECRET }, result: `rejected ${SECRET}` };
  return [...Array.from({ length: 6 }, () => lookup), ...Array.from({ length: 6 }, () => failing), ...Array.from({ length: 4 }, () => [cycleA, cycleB]).flat()];
}

function pipeline(options: LoopDetectionSpanProcessorOptions = {}) {
  const exporter = new InMemorySpanExporter();
  const detections: LoopDetection[] = [];
  const loops = new LoopDetectionSpanProcessor({ ...options, onLoop: (d) => void detections.push(d) });
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), loops as unknown as SpanProcessor] });
  return { tracer: provider.getTracer('privacy'), exporter, detections };
}

/** Runs the secret calls; returns, per span id, the attributes the app itself set. */
function runSecrets(p: ReturnType<typeof pipeline>): Map<string, Attributes> {
  const own = new Map<string, Attributes>();
  const rootAttrs = { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.prompt.name': 'vault-v1', 'gen_ai.agent.name': 'vault-bot' };
  const root = p.tracer.startSpan('invoke_agent vault-bot', { attributes: rootAttrs }, ROOT_CONTEXT);
  own.set(root.spanContext().spanId, rootAttrs);
  const ctx = trace.setSpan(ROOT_CONTEXT, root);
  for (const c of secretCalls()) {
    const attrs: Attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': c.tool, 'gen_ai.tool.call.arguments': JSON.stringify(c.args) };
    const span = p.tracer.startSpan(`execute_tool ${c.tool}`, { attributes: attrs }, ctx);
    if (c.error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: c.error });
      span.recordException({ name: 'AuthError', message: c.error });
      attrs['error.type'] = 'AuthError';
      span.setAttribute('error.type', 'AuthError');
    } else {
      attrs['gen_ai.tool.call.result'] = JSON.stringify(c.result);
      span.setAttribute('gen_ai.tool.call.result', JSON.stringify(c.result));
    }
    own.set(span.spanContext().spanId, attrs);
    span.end();
  }
  root.end();
  return own;
}

/** What loopwatch added to an exported span: attributes the app did not set, and loop events. */
function added(span: ReadableSpan, own: Map<string, Attributes>): unknown {
  const mine = own.get(span.spanContext().spanId) ?? {};
  const attributes = Object.fromEntries(Object.entries(span.attributes).filter(([k]) => !(k in mine)));
  return { attributes, events: span.events.filter((e) => e.name === 'loop.detected') };
}

const leaks = (text: string): string[] => [SECRET, SECRET.slice(8, 24), PASSWORD].filter((s) => text.includes(s));

afterEach(() => diag.disable());

describe('secrets in tool arguments and results', () => {
  it('never appear in events, added attributes, detections or diag messages', () => {
    const messages: string[] = [];
    const log = (m: string, ...rest: unknown[]) => void messages.push([m, ...rest].join(' '));
    diag.setLogger({ error: log, warn: log, info: log, debug: log, verbose: log }, DiagLogLevel.ALL);
    const p = pipeline();
    const own = runSecrets(p);
    const spans = p.exporter.getFinishedSpans();
    // the calls did loop: there is something written that could leak
    expect(new Set(p.detections.map((d) => d.kind))).toEqual(new Set(['repeat', 'error_pattern', 'cycle']));
    const written = spans.map((s) => added(s, own));
    expect(spans.flatMap((s) => s.events).filter((e) => e.name === 'loop.detected').length).toBe(p.detections.length);
    expect(leaks(JSON.stringify(written))).toEqual([]);
    expect(leaks(JSON.stringify(p.detections))).toEqual([]);
    expect(leaks(messages.join('\n'))).toEqual([]);
    // and the app's own attributes did hold them (the test would prove nothing otherwise)
    expect(leaks(JSON.stringify(spans.map((s) => s.attributes))).length).toBeGreaterThan(0);
  });

  it('never appear in loopwatch scan --json output (stdout or stderr)', async () => {
    const spans = agentTrace({ label: 'secrets', prompt: 'vault-v1', agent: 'vault-bot', steps: secretCalls() });
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-privacy-'));
    const file = join(dir, 'export.jsonl');
    writeFileSync(file, `${JSON.stringify(tracesData(spans))}\n`);
    expect(leaks(JSON.stringify(tracesData(spans))).length).toBeGreaterThan(0);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const out: string[] = [];
    stdout.on('data', (c: Buffer) => out.push(c.toString()));
    stderr.on('data', (c: Buffer) => out.push(c.toString()));
    const code = await main(['scan', '--json', file], { stdout, stderr, stdin: Readable.from([]), env: {}, interactive: false });
    expect(code).toBe(1);
    const text = out.join('');
    const detections = text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LoopDetection);
    expect(new Set(detections.map((d) => d.kind))).toEqual(new Set(['repeat', 'error_pattern', 'cycle']));
    expect(leaks(text)).toEqual([]);
  });
});

describe('argument previews (opt-in)', () => {
  it('are absent by default', () => {
    const p = pipeline();
    runSecrets(p);
    expect(p.detections.every((d) => d.argumentsPreview === undefined)).toBe(true);
    const attrs = p.exporter.getFinishedSpans().flatMap((s) => s.events.map((e) => e.attributes ?? {}));
    expect(attrs.some((a) => ATTR_LOOP_ARGUMENTS_PREVIEW in a)).toBe(false);
  });

  it('when on: show the arguments, bounded, with credential members and credential-shaped text redacted', () => {
    const p = pipeline({ argumentPreview: { maxLength: 90 } });
    runSecrets(p);
    const previews = p.detections.map((d) => d.argumentsPreview ?? '');
    expect(previews.every((t) => t.length > 0 && t.length <= 90)).toBe(true);
    const callApi = p.detections.find((d) => d.toolName === 'call_api')?.argumentsPreview;
    expect(callApi).toBe('{"url":"https://api.example.com/v1/orders","token":"[redacted]","password":"[redacted]","…');
    expect(p.detections.find((d) => d.toolName === 'login')?.argumentsPreview).toBe('{"user":"ops","password":"[redacted]"}');
    // on the events too, and never the secret, whatever the member is called (`ref`: by its shape)
    const events = p.exporter.getFinishedSpans().flatMap((s) => s.events).filter((e) => e.name === 'loop.detected');
    expect(events.map((e) => e.attributes?.[ATTR_LOOP_ARGUMENTS_PREVIEW])).toEqual(previews);
    expect(leaks(JSON.stringify(previews))).toEqual([]);
    expect(p.detections.find((d) => d.kind === 'cycle')?.argumentsPreview).toBe('{"ref":"[redacted]"}');
  });

  it('when on with extra names: those are redacted too; longer previews are cut with an ellipsis', () => {
    const p = pipeline({ argumentPreview: { maxLength: 40, redactKeys: ['Account-Number'] } });
    const root = p.tracer.startSpan('invoke_agent bank', { attributes: { 'gen_ai.prompt.name': 'bank-v1' } }, ROOT_CONTEXT);
    const ctx = trace.setSpan(ROOT_CONTEXT, root);
    for (let i = 0; i < 3; i++) {
      const s = p.tracer.startSpan('execute_tool transfer', {
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'transfer', 'gen_ai.tool.call.arguments': '{"account_number":"DE44500105175407324931","amount":100,"memo":"rent for march and april"}', 'gen_ai.tool.call.result': '"pending"' },
      }, ctx);
      s.end();
    }
    root.end();
    expect(p.detections.map((d) => d.argumentsPreview)).toEqual(['{"account_number":"[redacted]","amount"…']);
  });
});
