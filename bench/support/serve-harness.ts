/**
 * What the serve reproductions and the soak share: the built CLI in a child process (or another
 * build's, through LOOPWATCH_BENCH_CLI, to measure a baseline side by side), a downstream that
 * counts every span id it receives and can be slow, refuse or go away, OTLP requests built with
 * the generated messages, and readings of a process from /proc (RSS, open files).
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, request, type Agent, type Server } from 'node:http';
import { createServer as createNetServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ExportTraceServiceRequestSchema,
  type ExportTraceServiceRequest,
} from '../../src/formats/protobuf/gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import type { KeyValue } from '../../src/formats/protobuf/gen/opentelemetry/proto/common/v1/common_pb.js';
import type { Span } from '../../src/formats/protobuf/gen/opentelemetry/proto/trace/v1/trace_pb.js';
import { hexOf, keyValue } from '../../src/formats/protobuf/span-view.js';

export const CLI = process.env.LOOPWATCH_BENCH_CLI ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'packages', 'cli', 'dist', 'cli.js');

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resident set size of a process (bytes), and its peak so far; undefined once it is gone. */
export function memoryOf(pid: number): { rss: number; peak: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
    const rss = kb('VmRSS');
    // a process that has exited but not been reaped has no memory lines
    return Number.isFinite(rss) ? { rss, peak: kb('VmHWM') } : undefined;
  } catch {
    return undefined;
  }
}

export function openFiles(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** What it wrote on stderr so far. */
  stderr(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  stats(): Promise<Record<string, number> | undefined>;
}

/** A port nothing listens on now (the kernel's choice, released again). */
export async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (!address || typeof address !== 'object') throw new Error('no address');
  return address.port;
}

/** `loopwatch serve` from the built CLI, ready once it says it listens; `maxOpenFiles` lowers its file limit (prlimit). */
export async function spawnServe(options: {
  forward: string;
  args?: readonly string[];
  env?: Record<string, string>;
  heapMb?: number;
  port?: number;
  maxOpenFiles?: number;
}): Promise<ServeProcess> {
  const port = options.port ?? (await freePort());
  const node = [process.execPath, ...(options.heapMb ? [`--max-old-space-size=${options.heapMb}`] : []), CLI, 'serve', '--port', String(port), '--forward', options.forward, ...(options.args ?? [])];
  const command = options.maxOpenFiles ? ['prlimit', `--nofile=${options.maxOpenFiles}:${options.maxOpenFiles}`, '--', ...node] : node;
  const child = spawn(command[0] as string, command.slice(1), {
    env: { ...process.env, OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none', ...options.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.length > 1 << 20) stderr = stderr.slice(-(1 << 19));
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, at: performance.now() })));
  const stats = async (): Promise<Record<string, number> | undefined> => {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(20_000) });
      return (await res.json()) as Record<string, number>;
    } catch {
      return undefined;
    }
  };
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`loopwatch serve exited at start:\n${stderr}`);
    if (stderr.includes('listening on')) return { child, port, stderr: () => stderr, exited, stats };
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`loopwatch serve did not start:\n${stderr}`);
}

/** GET on a connection of its own (a probe must not ride on a kept-alive one): status, or 0 when it failed. */
export function getFresh(port: number, path: string, timeoutMs: number): Promise<{ status: number; ms: number; error?: string }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, ms: performance.now() - t0, error: e.message }));
    req.end();
  });
}

export interface PostResult {
  readonly status: number;
  readonly retryAfter: number | undefined;
  readonly ms: number;
  readonly error?: string;
}

export function post(port: number, body: Uint8Array, options: { agent?: Agent; contentType?: string; headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<PostResult> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/traces',
        method: 'POST',
        ...(options.agent ? { agent: options.agent } : {}),
        headers: { 'content-type': options.contentType ?? 'application/x-protobuf', 'content-length': body.byteLength, ...options.headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const ra = res.headers['retry-after'];
          resolve({ status: res.statusCode ?? 0, retryAfter: ra === undefined ? undefined : Number(ra), ms: performance.now() - t0 });
        });
        res.on('error', (e) => resolve({ status: 0, retryAfter: undefined, ms: performance.now() - t0, error: e.message }));
      },
    );
    req.setTimeout(options.timeoutMs ?? 120_000, () => req.destroy(new Error('client timeout')));
    req.on('error', (e) => resolve({ status: 0, retryAfter: undefined, ms: performance.now() - t0, error: e.message }));
    req.end(body);
  });
}

/** Posts until the server takes the request (200), waiting as its Retry-After says (as an OTLP exporter does); gives up at `deadline`. */
export async function postUntilTaken(
  port: number,
  body: Uint8Array,
  deadline: number,
  options: { agent?: Agent; onRefused?: (r: PostResult) => void; giveUp?: () => boolean } = {},
): Promise<PostResult> {
  for (;;) {
    const r = await post(port, body, options.agent ? { agent: options.agent } : {});
    if (r.status === 200 || performance.now() > deadline || options.giveUp?.()) return r;
    if (r.status !== 0 && r.status !== 429 && r.status !== 503) return r;
    options.onRefused?.(r);
    await sleep(Math.min(5_000, (r.retryAfter ?? 1) * 1000) * (0.5 + Math.random() / 2));
  }
}

export const randomId = (bytes: 8 | 16): Uint8Array => new Uint8Array(randomBytes(bytes));

/** One span, with `attributes`; rootless unless `parent` is undefined (then it is its trace's local root). */
export function span(traceId: Uint8Array, options: { parent?: Uint8Array | undefined; name?: string; attributes?: KeyValue[]; startMs?: number; durationMs?: number; spanId?: Uint8Array } = {}): Span {
  const start = BigInt(Math.round((options.startMs ?? Date.now()) * 1e3)) * 1000n;
  return {
    $typeName: 'opentelemetry.proto.trace.v1.Span',
    traceId,
    spanId: options.spanId ?? randomId(8),
    traceState: '',
    parentSpanId: options.parent ?? new Uint8Array(0),
    flags: 0,
    name: options.name ?? 'work',
    kind: 1,
    startTimeUnixNano: start,
    endTimeUnixNano: start + BigInt(Math.round((options.durationMs ?? 5) * 1e6)),
    attributes: options.attributes ?? [],
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
  } as Span;
}

export function exportRequest(spans: Span[], service = 'bench-agent'): ExportTraceServiceRequest {
  return create(ExportTraceServiceRequestSchema, {
    resourceSpans: [{ resource: { attributes: [keyValue('service.name', service)] }, scopeSpans: [{ scope: { name: 'bench' }, spans }] }],
  });
}

export const protobufOf = (spans: Span[], service?: string): Uint8Array => toBinary(ExportTraceServiceRequestSchema, exportRequest(spans, service));

/**
 * One agent run of 13 spans in end order (a model call and a tool call per step, the root last);
 * one run in eight repeats the same search (a loop), the rest is honest work.
 */
export function agentRun(i: number, traceId = randomId(16)): Span[] {
  const root = randomId(8);
  const t0 = Date.now() - 10_000;
  const looping = i % 8 === 0;
  const spans: Span[] = [];
  let t = t0;
  for (let step = 0; step < 6; step++) {
    spans.push(
      span(traceId, {
        parent: root,
        name: 'chat gpt-4.1-mini',
        startMs: t,
        durationMs: 700,
        attributes: [keyValue('gen_ai.operation.name', 'chat'), keyValue('gen_ai.request.model', 'gpt-4.1-mini'), keyValue('gen_ai.usage.input_tokens', 1200 + step), keyValue('gen_ai.usage.output_tokens', 80)],
      }),
    );
    t += 701;
    const args = JSON.stringify(looping ? { query: 'order 1234 status', limit: 10 } : { query: `order ${i}-${step} status`, limit: 10 });
    const result = JSON.stringify(looping ? { orders: [], note: 'no order matches' } : { orders: [{ id: `o-${i}-${step}`, status: 'shipped' }] });
    spans.push(
      span(traceId, {
        parent: root,
        name: 'execute_tool search_orders',
        startMs: t,
        durationMs: 40,
        attributes: [
          keyValue('gen_ai.operation.name', 'execute_tool'),
          keyValue('gen_ai.tool.name', 'search_orders'),
          keyValue('gen_ai.tool.call.arguments', args),
          keyValue('gen_ai.tool.call.result', result),
        ],
      }),
    );
    t += 41;
  }
  spans.push(
    span(traceId, {
      spanId: root,
      name: 'invoke_agent support-bot',
      startMs: t0 - 1,
      durationMs: t - t0 + 2,
      attributes: [keyValue('gen_ai.operation.name', 'invoke_agent'), keyValue('gen_ai.prompt.name', `support-v${i % 3}`)],
    }),
  );
  return spans;
}

export const spanKey = (s: Span): string => `${hexOf(s.traceId)}:${hexOf(s.spanId)}`;

export type SinkMode = 'up' | 'refuse' | '503' | 'hang';

/**
 * A downstream OTLP/HTTP trace endpoint that counts every span it received by trace and span
 * id. `mode`: up (200), refuse (nothing listens: connection refused), 503, or hang (reads the
 * request and never answers); `delayMs` answers a taken request that much later.
 */
export class CountingSink {
  readonly arrivals = new Map<string, number>();
  readonly arrivalTimes = new Map<string, number>();
  requests = 0;
  spans = 0;
  mode: SinkMode = 'up';
  delayMs = 0;
  port = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests++;
        if (req.url !== '/v1/traces') {
          res.writeHead(200).end();
          return;
        }
        if (this.mode === 'hang') return;
        if (this.mode === '503') {
          res.writeHead(503, { 'retry-after': '1' }).end();
          return;
        }
        const answer = (): void => {
          this.record(Buffer.concat(chunks));
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        };
        if (this.delayMs > 0) setTimeout(answer, this.delayMs);
        else answer();
      });
    });
    this.server.keepAliveTimeout = 60_000;
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server?.listen(port, '127.0.0.1', resolve));
    const address = this.server.address();
    if (!address || typeof address !== 'object') throw new Error('no address');
    this.port = address.port;
    return this;
  }

  /** Connection refused from now on (the port is closed and its connections cut). */
  async down(): Promise<void> {
    this.mode = 'refuse';
    await this.stop();
  }

  async up(): Promise<void> {
    if (!this.server?.listening) await this.start(this.port);
    this.mode = 'up';
  }

  stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => (this.server?.listening ? this.server.close(() => resolve()) : resolve()));
  }

  /** Span ids that arrived more than once, and how many extra copies. */
  duplicates(): { spans: number; copies: number } {
    let spans = 0;
    let copies = 0;
    for (const n of this.arrivals.values()) {
      if (n > 1) {
        spans++;
        copies += n - 1;
      }
    }
    return { spans, copies };
  }

  private record(body: Buffer): void {
    const request = fromBinary(ExportTraceServiceRequestSchema, body);
    const now = performance.now();
    for (const rs of request.resourceSpans) {
      for (const ss of rs.scopeSpans) {
        for (const s of ss.spans) {
          const key = spanKey(s);
          this.spans++;
          const n = this.arrivals.get(key) ?? 0;
          this.arrivals.set(key, n + 1);
          if (n === 0) this.arrivalTimes.set(key, now);
        }
      }
    }
  }
}

export const mib = (n: number): string => `${(n / (1 << 20)).toFixed(0)} MiB`;
