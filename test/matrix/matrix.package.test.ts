/**
 * The SDK matrix: each cell in test/matrix/<cell>/ is a project of its own (its own lockfile,
 * its own SDK and API versions, Node 20, 22 or the oldest the package allows) that installs the
 * packed loopwatch and runs the shared scenario once with `import` and once with `require`. The
 * versions conflict across cells (API < 1.10 for SDK 2.x, >= 1.10 for 3.x), hence separate
 * projects. Node 22, and the oldest Node the package allows, come from scripts/setup/30-node.sh.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { cells, isCellNode, NODE_FLOOR, nodeOf, otlpReceiver, prepare, runNode, type CellInfo, type NodeBinaries, type ReceivedSpan } from './support.js';

interface SpanOut {
  name: string;
  traceId: string;
  toolName: string | null;
  operation: string | null;
  promptName: string | null;
  argumentsType: string;
  loopEvents: Array<{ level: string; kind: string; spanId: string | null }>;
}
interface RunOut {
  executed: number;
  aborted: boolean;
  reason: { name: string; toolName: string; kind: string; count: number; isError: boolean } | null;
  detections: Array<{ level: string; kind: string; callIndex: number; toolName: string; promptName: string | null; agentName: string | null; evidence: string }>;
  spans: SpanOut[];
}
interface CellOut {
  format: 'esm' | 'cjs';
  resolved: string;
  node: string;
  exports: string[];
  advancedExports: string[];
  sharedEngine: boolean;
  toolLoopErrorClass: boolean;
  loop: RunOut;
  honest: RunOut;
  dialect: RunOut;
}

// Cells with a suite of their own (loopwatchMatrix.suite) do not run the shared scenario.
const ALL = cells().filter((c) => c.suite === undefined);
const WITHOUT_ON_ENDING = new Set(['sdk2-no-onending']);
const STRUCTURED = new Set(['sdk3']);
const EXPECTED_SDK: Record<string, [string, string]> = {
  'sdk2-oldest': ['@opentelemetry/sdk-trace-base', '2.3.0'],
  'sdk2-latest': ['@opentelemetry/sdk-trace-node', '2.12.0'],
  'sdk2-no-onending': ['@opentelemetry/sdk-trace-base', '2.2.0'],
  sdk3: ['@opentelemetry/sdk-trace', '3.1.1'],
  nodesdk2: ['@opentelemetry/sdk-node', '0.223.0'],
  nodesdk3: ['@opentelemetry/sdk-node', '0.301.0'],
};

let binaries: NodeBinaries = { node22: '', nodeFloor: '' };
const nodeFor = (c: CellInfo) => nodeOf(c, binaries);
beforeAll(() => {
  binaries = prepare(...ALL.map((c) => c.name));
}, 900_000);

describe('the matrix', () => {
  it('runs a cell on the oldest Node the package allows (engines.node)', () => {
    expect(NODE_FLOOR).toMatch(/^\d+\.\d+\.\d+$/);
    expect(ALL.filter((c) => c.node === 'floor').map((c) => c.name)).toEqual(['sdk2-oldest']);
  });
});

describe.each(ALL)('matrix cell $name', (cell) => {
  it('has the SDK, API and Node versions it is meant to test', async () => {
    const [pkg, version] = EXPECTED_SDK[cell.name] ?? ['?', '?'];
    expect(cell.installed(pkg)).toBe(version);
    expect(cell.installed('@opentelemetry/api')).toMatch(cell.node === '22' ? /^1\.10\./ : /^1\.9\./);
    const v = await runNode(nodeFor(cell), cell.dir, ['-p', 'process.versions.node']);
    expect(isCellNode(cell, v.stdout.trim()), `${cell.name} runs on ${v.stdout.trim()}`).toBe(true);
  });

  it.each(['esm', 'cjs'] as const)('%s consumer: loops warned then stopped, honest run quiet, other dialects normalised', async (format) => {
    const run = await runNode(nodeFor(cell), cell.dir, [format === 'esm' ? 'esm.mjs' : 'cjs.cjs']);
    expect(run.code, run.stderr).toBe(0);
    const out = run.json<CellOut>();
    // the packed package, in the format asked for
    expect(out.format).toBe(format);
    expect(out.resolved).toContain(`${cell.name}/node_modules/loopwatch/dist/index.${format === 'esm' ? 'js' : 'cjs'}`);
    // the root holds what an application calls; the engine is loopwatch/advanced, the same class
    expect(out.exports).toEqual(['LoopDetectionSpanProcessor', 'ToolLoopError', 'customAdapter', 'defaultAdapters', 'registeredProcessor', 'ToolLoopGuard']);
    expect(out.advancedExports).toEqual(['LoopEngine', 'buildToolCall', 'LOOP_EVENT_NAME']);
    expect(out.sharedEngine).toBe(true);
    expect(isCellNode(cell, out.node.replace(/^v/, '')), `${cell.name} ran on ${out.node}`).toBe(true);

    const { loop, honest, dialect } = out;
    expect(loop.executed).toBe(5);
    expect(loop.aborted).toBe(true);
    expect(loop.reason).toEqual({ name: 'ToolLoopError', toolName: 'search', kind: 'repeat', count: 5, isError: true });
    expect(loop.detections.map((d) => [d.level, d.kind, d.callIndex, d.promptName, d.agentName, d.evidence])).toEqual([
      ['warning', 'repeat', 3, 'matrix-prompt', 'matrix-bot', 'arguments+result'],
      ['critical', 'repeat', 5, 'matrix-prompt', 'matrix-bot', 'arguments+result'],
    ]);
    const tools = loop.spans.filter((s) => s.name === 'execute_tool search');
    expect(tools).toHaveLength(5);
    expect(tools.every((s) => s.promptName === 'matrix-prompt')).toBe(true);
    // SDK 3.x keeps structured attribute values; 2.x only takes the JSON strings
    expect(new Set(tools.map((s) => s.argumentsType))).toEqual(new Set([STRUCTURED.has(cell.name) ? 'object' : 'string']));
    const root = loop.spans.find((s) => s.name === 'invoke_agent loop');
    if (WITHOUT_ON_ENDING.has(cell.name)) {
      // documented fallback: the tool span is read-only when the SDK tells us; the event goes on the open parent
      expect(tools.flatMap((s) => s.loopEvents)).toEqual([]);
      expect(root?.loopEvents.map((e) => [e.level, typeof e.spanId])).toEqual([
        ['warning', 'string'],
        ['critical', 'string'],
      ]);
    } else {
      expect(tools.map((s) => s.loopEvents.map((e) => e.level))).toEqual([[], [], ['warning'], [], ['critical']]);
      expect(root?.loopEvents).toEqual([]);
    }

    expect(honest.executed).toBe(3);
    expect(honest.aborted).toBe(false);
    expect(honest.detections).toEqual([]);
    expect(honest.spans.flatMap((s) => s.loopEvents)).toEqual([]);

    const aiSpans = dialect.spans.filter((s) => s.name === 'ai.toolCall');
    expect(aiSpans).toHaveLength(3);
    expect(dialect.detections.map((d) => [d.level, d.callIndex, d.toolName])).toEqual([['warning', 3, 'lookup']]);
    if (WITHOUT_ON_ENDING.has(cell.name)) {
      expect(aiSpans.every((s) => s.operation === null)).toBe(true); // nothing can be written at end there
    } else {
      expect(aiSpans.every((s) => s.operation === 'execute_tool' && s.toolName === 'lookup')).toBe(true);
    }
  });
});

describe.each(ALL.filter((c) => c.name.startsWith('nodesdk')))('zero-code start in $name', (cell) => {
  async function withReceiver(args: string[], env: Record<string, string> = {}) {
    const receiver = await otlpReceiver();
    try {
      const run = await runNode(nodeFor(cell), cell.dir, args, {
        OTEL_SERVICE_NAME: 'agent-app',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint,
        ...env,
      });
      return { run, spans: receiver.spans };
    } finally {
      await receiver.close();
    }
  }
  const toolEvents = (spans: ReceivedSpan[], traceId: string) =>
    spans.filter((s) => s.traceId === traceId && s.name === 'execute_tool search').map((s) => s.events.filter((e) => e.name === 'loop.detected').map((e) => e.attributes['loop.level']));

  it.each([
    ['--import', 'app.mjs'],
    ['--require', 'app.cjs'],
  ])('node %s loopwatch/register: NodeSDK from OTEL_* variables, loops annotated, exported and stoppable', async (flag, app) => {
    const { run, spans } = await withReceiver([flag, 'loopwatch/register', app]);
    expect(run.code, run.stderr).toBe(0);
    const out = run.json<{ registered: boolean; executed: number; aborted: boolean; reasonIsToolLoopError: boolean; traceId: string }>();
    expect(out).toMatchObject({ registered: true, executed: 5, aborted: true, reasonIsToolLoopError: true });
    expect(run.stderr).toContain('loopwatch: started NodeSDK, traces to otlp (http/json); loop detection mode enforce');
    expect(run.stderr).toMatch(/loopwatch: warning repeat 'search' x3 prompt=support-v2 trace=[0-9a-f]{32}/);
    expect(run.stderr).toMatch(/loopwatch: critical repeat 'search' x5/);
    expect(toolEvents(spans, out.traceId)).toEqual([[], [], ['warning'], [], ['critical']]);
    expect(spans.find((s) => s.traceId === out.traceId)?.resource['service.name']).toBe('agent-app');
    expect(run.stderr).not.toContain('order 1234'); // the log never prints call content
  });

  it('LOOPWATCH_MODE, LOOPWATCH_THRESHOLDS and LOOPWATCH_LOG configure it; bad values are reported, not fatal', async () => {
    const { run, spans } = await withReceiver(['--import', 'loopwatch/register', 'app.mjs'], {
      LOOPWATCH_MODE: 'observe',
      LOOPWATCH_THRESHOLDS: 'repeat=2:4,bogus=1:2',
      LOOPWATCH_LOG: 'json',
      LOOPWATCH_MAX_TRACES: 'many',
    });
    expect(run.code, run.stderr).toBe(0);
    const out = run.json<{ executed: number; aborted: boolean; traceId: string }>();
    expect(out).toMatchObject({ executed: 10, aborted: false });
    expect(run.stderr).toContain("LOOPWATCH_THRESHOLDS: 'bogus=1:2' names no rule: 'bogus' is not one of backToBack, repeat,");
    expect(run.stderr).toContain('LOOPWATCH_MAX_TRACES=many is not a positive integer');
    const logged = run.stderr
      .split('\n')
      .filter((l) => l.startsWith('loopwatch: {'))
      .map((l) => JSON.parse(l.slice('loopwatch: '.length)) as { level: string; callIndex: number; mode: string });
    expect(logged.map((d) => [d.level, d.callIndex, d.mode])).toEqual([
      ['warning', 2, 'observe'],
      ['critical', 4, 'observe'],
    ]);
    expect(toolEvents(spans, out.traceId).flat()).toEqual(['warning', 'critical']);
  });

  it('LOOPWATCH_REGISTER=attach joins the provider the app starts itself (opt-in, private SDK field)', async () => {
    const { run, spans } = await withReceiver(['--import', 'loopwatch/register', 'app-own-sdk.mjs'], { LOOPWATCH_REGISTER: 'attach' });
    expect(run.code, run.stderr).toBe(0);
    const out = run.json<{ registered: boolean; executed: number; aborted: boolean; traceId: string }>();
    expect(out).toMatchObject({ registered: true, executed: 5, aborted: true });
    expect(run.stderr).toContain('loopwatch: attached to the registered tracer provider (mode enforce)');
    expect(toolEvents(spans, out.traceId)).toEqual([[], [], ['warning'], [], ['critical']]);
  });

  it('OTEL_SDK_DISABLED=true: says loopwatch is off too, instead of "started" over a no-op SDK', async () => {
    const { run, spans } = await withReceiver(['--require', 'loopwatch/register', 'app.cjs'], { OTEL_SDK_DISABLED: 'true' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toMatchObject({ registered: false, executed: 10, aborted: false });
    expect(run.stderr).toBe('loopwatch: OTEL_SDK_DISABLED is true: the OpenTelemetry SDK is off, so loopwatch is not started either\n');
    expect(spans).toEqual([]);
  });

  it('no collector at the default OTLP endpoint: exits at once and blames the missing destination, not loopwatch', async () => {
    // A port that was just free: nothing listens there, so connections are refused.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const started = Date.now();
    const run = await runNode(nodeFor(cell), cell.dir, ['--import', 'loopwatch/register', 'app.mjs'], { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
    const seconds = (Date.now() - started) / 1000;
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toMatchObject({ registered: true, executed: 5, aborted: true });
    expect(run.stderr).toContain(`loopwatch: nothing listens at http://127.0.0.1:${port}/v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT): the otlp (http/protobuf) trace exporter cannot deliver this run's spans`);
    expect(run.stderr).not.toContain('shutdown failed');
    // The exporter alone retries with back-off for about 8 s before it gives up.
    expect(seconds).toBeLessThan(4);
  });

  it('LOOPWATCH_DISABLED=true leaves the app alone', async () => {
    const { run } = await withReceiver(['--import', 'loopwatch/register', 'app.mjs'], { LOOPWATCH_DISABLED: 'true' });
    expect(run.json()).toMatchObject({ registered: false, executed: 10, aborted: false });
    expect(run.stderr).toBe('');
  });
});

describe('zero-code start without @opentelemetry/sdk-node', () => {
  it('says what is missing and lets the app run', async () => {
    const cell = ALL.find((c) => c.name === 'sdk3');
    if (!cell) throw new Error('sdk3 cell missing');
    const run = await runNode(nodeFor(cell), cell.dir, [
      '--import',
      'loopwatch/register',
      '--input-type=module',
      '-e',
      "const m = await import('loopwatch'); console.log(JSON.stringify({ registered: m.registeredProcessor() !== undefined }));",
    ]);
    expect(run.code).toBe(0);
    expect(run.json()).toEqual({ registered: false });
    expect(run.stderr).toContain('loopwatch: not started: @opentelemetry/sdk-node is not installed');
  });
});
