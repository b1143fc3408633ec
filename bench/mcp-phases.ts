/**
 * Where a `tools/call` through the stdio proxy spends its time, phase by phase (issue 31): the
 * proxy's own code (src/mcp, as `loopwatch mcp` runs it) in a child process whose handlers,
 * writes, guard and readings are wrapped with clock stamps here, never in the shipped code. The
 * stamps are `process.hrtime` (CLOCK_MONOTONIC, the same clock in every process), so the client's
 * send and receive line up with the proxy's phases. The proxy runs bundled as the CLI is (see
 * `bundledProxy`). Requests alternate call by call with a direct connection to the same server,
 * `PACE_MS` apart, every method and size in turn, as bench/mcp.ts sends them. Printed per kind:
 * each phase's p50 / p90 / p99 / max / mean, the GC pauses, the messages that arrived while a
 * reading was under way, and what the slowest 1 % of round trips spent their time on.
 *
 *   npm run build && node --import tsx bench/mcp-phases.ts [--calls=1000] [--sizes=1024,65536]
 *     [--methods=tools/call] [--spans] [--observe] [--cpu-prof | --log-deopt] [--cli]
 *
 * `--spans`: the proxy's spans on (OTLP/HTTP to a local sink); `--cpu-prof`: a V8 CPU profile of the proxy; `--log-deopt`: its deoptimisations and inline
 * caches in a V8 log; `--cli`: the built CLI as the proxy (round trips only, no probes), to compare.
 * (`--proxy` is the child's role.)
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { LineSplitter } from '../src/mcp/framing.js';
import { quantile } from './support/report.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SERVER = join(ROOT, 'bench', 'support', 'ndjson-server.mjs');
const PACE_MS = 2;
const hr = (): number => Number(process.hrtime.bigint()) / 1e6;

/** Durations (ms) of the proxy's phases, by the index of the client message under way. */
type Probe = Record<string, number[]>;

interface ProxyRecord {
  probes: Probe;
  /** Stamps (hr ms) by client message index. */
  stamps: Record<string, number[]>;
  gc: { at: number; ms: number; kind: number; call: number }[];
  /** Readings run from the timer (off the path): start and end (hr ms). */
  readings: [number, number][];
}

async function proxyRole(): Promise<void> {
  const [{ startStdioProxy }, { McpCallGuard }, { DeferredReadings }, { ToolLoopGuard }, { TraceDetector }, { McpTelemetry }, { LoopEngine }, { Runs }] = await Promise.all([
    import('../src/mcp/stdio.js'),
    import('../src/mcp/call-guard.js'),
    import('../src/mcp/deferred-readings.js'),
    import('../src/guard/guard.js'),
    import('../src/detector/trace-detector.js'),
    import('../src/mcp/telemetry.js'),
    import('../src/detector/engine.js'),
    import('../src/mcp/runs.js'),
  ]);
  const out = process.env.MCP_PHASES_OUT as string;
  const rec: ProxyRecord = { probes: {}, stamps: {}, gc: [], readings: [] };
  let call = 0;
  /** Inside a client or server data handler (the response path), not a timer's reading. */
  let onPath = false;
  const add = (name: string, ms: number): void => {
    const a = (rec.probes[name] ??= []);
    a[call] = (a[call] ?? 0) + ms;
  };
  const stamp = (name: string, first = false): void => {
    const a = (rec.stamps[name] ??= []);
    if (first && a[call] !== undefined) return;
    a[call] = hr();
  };
  /** Wraps a prototype method with a duration probe (only where `when` holds, if given). */
  const probe = (proto: object, method: string, name: string | ((self: unknown) => string)): void => {
    const p = proto as Record<string, (...a: unknown[]) => unknown>;
    const original = p[method] as (...a: unknown[]) => unknown;
    p[method] = function (this: unknown, ...args: unknown[]) {
      const label = typeof name === 'string' ? name : name(this);
      const t0 = hr();
      try {
        return original.apply(this, args);
      } finally {
        add(label, hr() - t0);
      }
    };
  };
  probe(McpCallGuard.prototype, 'fromClient', 'guard.fromClient');
  probe(ToolLoopGuard.prototype, 'check', 'guard.check');
  probe(TraceDetector.prototype, 'preview', 'guard.preview');
  probe(Runs.prototype, 'runOf', 'runs.runOf');
  probe(McpTelemetry.prototype, 'startToolCall', 'span.start');
  probe(McpCallGuard.prototype, 'readLater', 'readLater');
  // the readings: on the path when a drain (the next message) reads them, off it from the timer
  probe(DeferredReadings.prototype, 'readFirst', () => (onPath ? 'reading.onPath' : 'reading.offPath'));
  const readFirst = (DeferredReadings.prototype as unknown as Record<string, (...a: unknown[]) => unknown>).readFirst as (...a: unknown[]) => unknown;
  (DeferredReadings.prototype as unknown as Record<string, unknown>).readFirst = function (this: unknown, ...args: unknown[]) {
    const t0 = hr();
    try {
      return readFirst.apply(this, args);
    } finally {
      if (!onPath && args[0] !== 0) rec.readings.push([t0, hr()]);
    }
  };
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const at = e.startTime + offset;
      rec.gc.push({ at, ms: e.duration, kind: (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0, call });
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  const offset = hr() - performance.now();

  /** Times each write of `stream` (`probeName`) and stamps when the last one returned (`stampName`). */
  const timeWrites = (stream: Writable, probeName: string, stampName: string): void => {
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    (stream as { write: unknown }).write = (...a: unknown[]) => {
      const t0 = hr();
      try {
        return write(...a);
      } finally {
        add(probeName, hr() - t0);
        stamp(stampName);
      }
    };
  };
  let child: ChildProcessByStdio<Writable, Readable, null> | undefined;
  // the CommonJS module object, whose change syncBuiltinESMExports carries to the ESM named export
  const childProcess = createRequire(import.meta.url)('node:child_process') as { spawn: typeof spawn };
  const realSpawn = childProcess.spawn;
  childProcess.spawn = ((...args: Parameters<typeof spawn>) => {
    const c = (realSpawn as (...a: unknown[]) => ChildProcessByStdio<Writable, Readable, null>)(...args);
    child = c;
    c.stdout.prependListener('data', () => {
      onPath = true;
      stamp('serverIn', true);
    });
    timeWrites(c.stdin, 'write.toServer', 'toServerWritten');
    return c;
  }) as typeof spawn;
  syncBuiltinESMExports();
  timeWrites(process.stdout, 'write.toClient', 'toClientWritten');
  // before any listener on stdin: its data flows from the first one on
  const engine = new LoopEngine(process.env.MCP_PHASES_MODE === 'observe' ? { mode: 'observe' } : {});
  const telemetry = await McpTelemetry.fromEnv(process.env, 'bench', () => undefined);
  process.stdin.on('data', (chunk: Buffer) => {
    // the index is the request's id (the driver numbers them 1, 2, ...): one request per chunk
    const id = /"id":(\d+)/.exec(chunk.toString('latin1', 0, 64))?.[1];
    call = id === undefined ? call : Number(id);
    onPath = true;
    stamp('clientIn');
  });
  const [cmd, ...args] = process.argv.slice(process.argv.indexOf('--') + 1) as [string, ...string[]];
  const proxy = startStdioProxy({
    command: cmd,
    args,
    env: process.env,
    guard: new McpCallGuard({ engine, action: 'graduated', idleGapMs: 300_000, telemetry, transport: 'pipe', say: (l) => process.stderr.write(`${l}\n`) }),
    input: process.stdin,
    output: process.stdout,
    say: (l) => process.stderr.write(`${l}\n`),
  });
  process.stdin.on('data', () => {
    stamp('clientDone');
    onPath = false;
  });
  child?.stdout.on('data', () => {
    stamp('serverDone');
    onPath = false;
  });
  await proxy.ended;
  obs.disconnect();
  writeFileSync(out, JSON.stringify(rec));
  // the span processor's timer would keep the process alive, as `loopwatch mcp` shuts it down
  await telemetry.shutdown();
  process.stdin.destroy();
}

type Child = ChildProcessByStdio<Writable, Readable, null>;
interface Sample {
  method: string;
  size: number;
  which: 'direct' | 'proxied';
  id: number;
  sent: number;
  received: number;
}

class Peer {
  private readonly lines = new LineSplitter();
  private waiting: (() => void) | undefined;
  private nextId = 1;
  constructor(readonly child: Child) {
    child.once('exit', (code) => {
      if (this.waiting) throw new Error(`a peer exited (${code}) with a request open`);
    });
    child.stdout.on('data', (chunk: Buffer) =>
      this.lines.push(chunk, () => {
        const done = this.waiting;
        this.waiting = undefined;
        done?.();
      }),
    );
  }
  /** Send and receive stamps (hr ms) of one request. */
  async request(method: string, size: number): Promise<{ id: number; sent: number; received: number }> {
    const id = this.nextId++;
    const params = method === 'tools/call' ? { name: 'fetch_page', arguments: { page: id, bytes: size } } : { uri: `file:///${id}`, bytes: size };
    const line = `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`;
    const answered = new Promise<void>((resolve) => (this.waiting = resolve));
    const sent = hr();
    this.child.stdin.write(line);
    await answered;
    return { id, sent, received: hr() };
  }
  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.child.once('close', () => resolve());
      this.child.stdin.end();
    });
  }
}

async function driverRole(): Promise<void> {
  const argv = process.argv.slice(2);
  const opt = (name: string, d: string): string => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? d;
  const calls = Number(opt('calls', '1000'));
  const sizes = opt('sizes', '1024,4096,16384,65536').split(',').map(Number);
  const methods = opt('methods', 'tools/call,resources/read').split(',');
  const dir = mkdtempSync(join(tmpdir(), 'mcp-phases-'));
  const out = join(dir, 'proxy.json');
  const nodeArgs = [
    ...(argv.includes('--cpu-prof') ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100'] : []),
    ...(argv.includes('--log-deopt') ? ['--log-deopt', '--log-ic', `--logfile=${join(dir, 'v8.log')}`, '--no-logfile-per-isolate'] : []),
  ];
  // `--spans`: the proxy's spans on, exported over OTLP/HTTP to a sink here that takes them
  const sink = argv.includes('--spans') ? await otlpSink() : undefined;
  // `--observe`: the proxy in observe mode
  const env = { ...process.env, MCP_PHASES_OUT: out, ...(argv.includes('--observe') ? { MCP_PHASES_MODE: 'observe' } : {}), ...(sink ? { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: sink.url, OTEL_SDK_DISABLED: 'false' } : { OTEL_SDK_DISABLED: 'true' }) };
  const direct = new Peer(spawn(process.execPath, [SERVER], { stdio: ['pipe', 'pipe', 'inherit'], env }));
  const proxyArgs = argv.includes('--cli') ? [join(ROOT, 'packages', 'cli', 'dist', 'cli.js'), 'mcp'] : [await bundledProxy(), '--proxy'];
  const proxied = new Peer(spawn(process.execPath, [...nodeArgs, ...proxyArgs, '--', process.execPath, SERVER], { stdio: ['pipe', 'pipe', 'inherit'], env }));
  const order: Sample[] = [];
  // warm-up (JIT, buffers), not reported
  const warm = 200;
  for (let i = 0; i < warm; i++) for (const p of [direct, proxied]) await p.request('tools/call', 4096);
  // bench/mcp.ts's order: every method and size in turn, the two connections alternating which goes first
  for (let i = 0; i < calls; i++) {
    for (const method of methods) {
      for (const size of sizes) {
        const pair: ('direct' | 'proxied')[] = i % 2 === 0 ? ['direct', 'proxied'] : ['proxied', 'direct'];
        for (const which of pair) {
          const r = await (which === 'direct' ? direct : proxied).request(method, size);
          order.push({ method, size, which, ...r });
          await sleep(PACE_MS);
        }
      }
    }
  }
  await Promise.all([direct.stop(), proxied.stop()]);
  sink?.server.close();
  const rec: ProxyRecord = argv.includes('--cli') ? { probes: {}, stamps: {}, gc: [], readings: [] } : (JSON.parse(readFileSync(out, 'utf8')) as ProxyRecord);
  for (const method of methods) for (const size of sizes) report(rec, order, method, size);
  if (argv.includes('--cpu-prof') || argv.includes('--log-deopt')) console.log(`profile or V8 log in ${dir}`);
}

/** An OTLP/HTTP endpoint that accepts everything (for `--spans`). */
async function otlpSink(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces` };
}

/**
 * This file bundled as the CLI is (tsup, no kept names, no source maps): run through tsx, the
 * proxy's code carries tsx's `__name` wrappers and source-map look-ups, which the shipped CLI does not.
 */
async function bundledProxy(): Promise<string> {
  const outDir = join(ROOT, 'node_modules', '.cache', 'mcp-phases');
  const { build } = await import('tsup');
  await build({ entry: { 'mcp-phases': fileURLToPath(import.meta.url) }, outDir, format: ['esm'], platform: 'node', target: 'node20', config: false, silent: true, splitting: false, skipNodeModulesBundle: true });
  return join(outDir, 'mcp-phases.js');
}

function report(rec: ProxyRecord, order: Sample[], method: string, size: number): void {
  const f = (x: number): string => x.toFixed(3).padStart(7);
  const row = (name: string, xs: number[]): void => {
    const v = xs.filter((x) => Number.isFinite(x));
    if (v.length === 0) return;
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    console.log(`${name.padEnd(44)} ${f(quantile(v, 0.5))} ${f(quantile(v, 0.9))} ${f(quantile(v, 0.99))} ${f(Math.max(...v))} ${f(mean)}  n=${v.length}`);
  };
  const s = rec.stamps;
  {
    console.log(`\n## ${method} ${size} B: ms (p50, p90, p99, max, mean)`);
    const direct = order.filter((o) => o.method === method && o.size === size && o.which === 'direct').map((o) => o.received - o.sent);
    const mine = order.filter((o) => o.which === 'proxied' && o.method === method && o.size === size).map((o) => ({ ...o, k: o.id }));
    const at = (name: string, kk: number): number => s[name]?.[kk] ?? NaN;
    const p = (name: string, kk: number): number => rec.probes[name]?.[kk] ?? 0;
    row('round trip, direct', direct);
    row('round trip, proxied', mine.map((m) => m.received - m.sent));
    row('client write -> proxy handler starts', mine.map((m) => at('clientIn', m.k) - m.sent));
    row('proxy client handler (parse, guard, write)', mine.map((m) => at('clientDone', m.k) - at('clientIn', m.k)));
    row('  guard.fromClient (all of the guard)', mine.map((m) => p('guard.fromClient', m.k)));
    row('    the previous reading, drained on path', mine.map((m) => p('reading.onPath', m.k)));
    row('    runs.runOf', mine.map((m) => p('runs.runOf', m.k)));
    row('    span start', mine.map((m) => p('span.start', m.k)));
    row('    guard.check', mine.map((m) => p('guard.check', m.k)));
    row('      preview', mine.map((m) => p('guard.preview', m.k)));
    row('  write to the server', mine.map((m) => p('write.toServer', m.k)));
    row('  rest (frame, parse, needles)', mine.map((m) => at('clientDone', m.k) - at('clientIn', m.k) - p('guard.fromClient', m.k) - p('write.toServer', m.k)));
    row('server leg (written -> first chunk back)', mine.map((m) => at('serverIn', m.k) - at('toServerWritten', m.k)));
    row('proxy server handler until last write', mine.map((m) => at('toClientWritten', m.k) - at('serverIn', m.k)));
    row('  write to the client', mine.map((m) => p('write.toClient', m.k)));
    row('  readLater', mine.map((m) => p('readLater', m.k)));
    row('last write -> client has it', mine.map((m) => m.received - at('toClientWritten', m.k)));
    row('reading off path (timer)', mine.map((m) => p('reading.offPath', m.k)));
    // a reading under way when the message arrived holds it until the reading ends
    const heldBy = (m: { sent: number }): number => {
      const t = m.sent;
      const r = rec.readings.find(([a, b]) => a <= t && t < b);
      return r ? r[1] - t : 0;
    };
    const held = mine.map(heldBy);
    row('held by a reading under way (all)', held);
    console.log(`messages arriving during a reading: ${held.filter((x) => x > 0).length} of ${held.length}`);
    const onPathGc = rec.gc.filter((g) => mine.some((m) => m.k === g.call && g.at >= at('clientIn', g.call) - 0.01 && g.at <= at('toClientWritten', g.call)));
    const allGc = rec.gc.filter((g) => mine.some((m) => m.k === g.call));
    console.log(`GC: ${allGc.length} pauses during these calls (${allGc.reduce((a, g) => a + g.ms, 0).toFixed(1)} ms), ${onPathGc.length} inside the path (${onPathGc.map((g) => g.ms.toFixed(2)).join(' ')})`);
    // the slowest 1 %: what their time went to
    const slow = [...mine].sort((a, b) => b.received - b.sent - (a.received - a.sent)).slice(0, Math.max(3, Math.ceil(mine.length / 100)));
    console.log('slowest 1 %: total | wake in | handler (guard, check, onPath reading) | server leg | to last write | wake out | gc in window | held by a reading');
    for (const m of slow) {
      const gcIn = rec.gc.filter((g) => g.at >= m.sent && g.at <= m.received).reduce((a, g) => a + g.ms, 0);
      console.log(
        [m.received - m.sent, at('clientIn', m.k) - m.sent, at('clientDone', m.k) - at('clientIn', m.k), p('guard.fromClient', m.k), p('guard.check', m.k), p('reading.onPath', m.k), at('serverIn', m.k) - at('toServerWritten', m.k), at('toClientWritten', m.k) - at('serverIn', m.k), m.received - at('toClientWritten', m.k), gcIn, heldBy(m)]
          .map((x) => x.toFixed(3))
          .join(' '),
      );
    }
  }
}

if (process.argv.includes('--proxy')) await proxyRole();
else await driverRole();
