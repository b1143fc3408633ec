import { fromBinary } from '@bufbuild/protobuf';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:http';
import { decodeTraceRequest, encodeTraceRequest } from '../src/formats/protobuf/codec.js';
import { ExportTraceServiceRequestSchema } from '../src/formats/protobuf/gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import { hexOf } from '../src/formats/protobuf/span-view.js';
import { LoopwatchServer } from '../src/serve/server.js';
import { bytes, quantile, type Figure } from './support/report.js';
import { CLI } from './support/serve-harness.js';

/**
 * `loopwatch serve` (issue 15): throughput in spans per second of the serve process's own CPU
 * time (the built CLI in a child process, fed over loopback by this process with a realistic
 * agent mix, protobuf and JSON), memory per held trace (in process, heap after GC), and the
 * latency serve adds before forwarding (from the request that completed a trace to the trace's
 * arrival downstream), beside the target of 25 000 spans/s per core.
 */

export const TARGET_SPANS_PER_CORE = 25_000;
const SPANS_PER_REQUEST = 512;

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0').slice(-width);
const kv = (key: string, value: string | number) => ({ key, value: typeof value === 'number' ? { intValue: String(value) } : { stringValue: value } });

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: ReturnType<typeof kv>[];
}

/**
 * One agent run, spans in end order: per step a model call and a tool call (arguments and result
 * captured), the root last. Half the runs speak the gen_ai conventions, half OpenInference; one
 * in eight loops (the same search again and again), the rest is honest work. 13 spans a run.
 */
function agentRun(i: number, round: number): JsonSpan[] {
  const traceId = hex(i * 2654435761 + round * 7919 + 1, 16) + hex(i + round * 100_003 + 7, 16);
  const root = hex(i * 40503 + round * 31 + 11, 16);
  const t0 = 1_795_000_000_000 + i * 50;
  const looping = i % 8 === 0;
  const openInference = i % 2 === 1;
  const ns = (ms: number): string => `${ms}000000`;
  const spans: JsonSpan[] = [];
  let t = t0;
  for (let step = 0; step < 6; step++) {
    spans.push({
      traceId,
      spanId: hex(i * 977 + step * 262 + 3, 16),
      parentSpanId: root,
      name: 'chat gpt-4.1-mini',
      kind: 3,
      startTimeUnixNano: ns(t),
      endTimeUnixNano: ns(t + 700),
      attributes: [kv('gen_ai.operation.name', 'chat'), kv('gen_ai.request.model', 'gpt-4.1-mini'), kv('gen_ai.usage.input_tokens', 1200 + step), kv('gen_ai.usage.output_tokens', 80)],
    });
    t += 701;
    const args = JSON.stringify(looping ? { query: 'order 1234 status', limit: 10 } : { query: `order ${i}-${step} status`, limit: 10, filters: { region: 'eu-west' } });
    const result = JSON.stringify(
      looping ? { orders: [], note: 'no order matches the query' } : { orders: [{ id: `o-${i}-${step}`, status: 'shipped', items: 3, total: 42.5 + step }], note: `found 1 order for customer ${i}` },
    );
    spans.push({
      traceId,
      spanId: hex(i * 977 + step * 262 + 5, 16),
      parentSpanId: root,
      name: openInference ? 'search_orders' : 'execute_tool search_orders',
      kind: 1,
      startTimeUnixNano: ns(t),
      endTimeUnixNano: ns(t + 40),
      attributes: openInference
        ? [kv('openinference.span.kind', 'TOOL'), kv('tool.name', 'search_orders'), kv('input.value', args), kv('output.value', result)]
        : [kv('gen_ai.operation.name', 'execute_tool'), kv('gen_ai.tool.name', 'search_orders'), kv('gen_ai.tool.call.id', `call_${i}_${step}`), kv('gen_ai.tool.call.arguments', args), kv('gen_ai.tool.call.result', result)],
    });
    t += 41;
  }
  spans.push({
    traceId,
    spanId: root,
    name: 'invoke_agent support-bot',
    kind: 1,
    startTimeUnixNano: ns(t0 - 1),
    endTimeUnixNano: ns(t + 1),
    attributes: [kv('gen_ai.operation.name', 'invoke_agent'), kv('gen_ai.agent.name', 'support-bot'), kv('gen_ai.prompt.name', `support-v${i % 3}`)],
  });
  return spans;
}

const request0 = (spans: JsonSpan[]) => ({
  resourceSpans: [{ resource: { attributes: [kv('service.name', 'agent-worker')] }, scopeSpans: [{ scope: { name: 'agent' }, spans }] }],
});

/** Export requests of 512 spans, runs interleaved eight at a time as a batch exporter sees them. */
function requests(totalSpans: number, round: number): { json: string[]; protobuf: Uint8Array[]; spans: number } {
  const json: string[] = [];
  const protobuf: Uint8Array[] = [];
  let spans = 0;
  let pending: JsonSpan[] = [];
  const flush = (): void => {
    const text = JSON.stringify(request0(pending));
    json.push(text);
    protobuf.push(encodeTraceRequest(decodeTraceRequest(Buffer.from(text), 'json'), 'protobuf'));
    spans += pending.length;
    pending = [];
  };
  for (let i = 0; spans + pending.length < totalSpans; i += 8) {
    const runs = Array.from({ length: 8 }, (_, k) => agentRun(i + k, round));
    for (let s = 0; s < 13; s++) {
      for (const r of runs) {
        pending.push(r[s] as JsonSpan);
        if (pending.length >= SPANS_PER_REQUEST) flush();
      }
    }
  }
  if (pending.length > 0) flush();
  return { json, protobuf, spans };
}

/** A downstream that takes everything; optionally notes when each trace first arrived. */
async function sink(onTrace?: (traceId: string) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (onTrace && req.url === '/v1/traces') {
        const msg = fromBinary(ExportTraceServiceRequestSchema, Buffer.concat(chunks));
        for (const rs of msg.resourceSpans) for (const ss of rs.scopeSpans) for (const s of ss.spans) onTrace(hexOf(s.traceId));
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('no address');
  return { server, url: `http://127.0.0.1:${address.port}` };
}

async function startServe(forward: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; port: number }> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, [CLI, 'serve', '--port', String(port), '--forward', forward], {
    env: { ...process.env, OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  for (let i = 0; i < 100; i++) {
    if ((await stats(port)) !== undefined) return { child, port };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('loopwatch serve did not start');
}

interface Stats {
  receivedSpans: number;
  forwardedSpans: number;
}
async function stats(port: number): Promise<Stats | undefined> {
  try {
    return (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as Stats;
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of the file: 12 and 13 after the command name
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function post(agent: Agent, port: number, body: Uint8Array | string, contentType: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/v1/traces', method: 'POST', agent, headers: { 'content-type': contentType } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function throughput(encoding: 'protobuf' | 'json', totalSpans: number): Promise<{ spansPerCpuSecond: number; cpu: number; spans: number }> {
  const down = await sink();
  const { child, port } = await startServe(down.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  try {
    // warm-up: JIT, buffers
    const warm = requests(20_000, 1);
    await sendAll(agent, port, encoding === 'json' ? warm.json : warm.protobuf, encoding);
    await waitForwarded(port, warm.spans);
    const load = requests(totalSpans, 2);
    const before = cpuSeconds(child.pid as number);
    await sendAll(agent, port, encoding === 'json' ? load.json : load.protobuf, encoding);
    await waitForwarded(port, warm.spans + load.spans);
    const cpu = cpuSeconds(child.pid as number) - before;
    return { spansPerCpuSecond: load.spans / cpu, cpu, spans: load.spans };
  } finally {
    agent.destroy();
    child.kill('SIGKILL');
    down.server.close();
  }
}

async function sendAll(agent: Agent, port: number, bodies: readonly (string | Uint8Array)[], encoding: 'protobuf' | 'json'): Promise<void> {
  const type = encoding === 'json' ? 'application/json' : 'application/x-protobuf';
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < bodies.length) {
      const body = bodies[next++] as string | Uint8Array;
      for (;;) {
        const status = await post(agent, port, body, type);
        if (status === 200) break;
        if (status !== 429 && status !== 503) throw new Error(`serve answered ${status}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

async function waitForwarded(port: number, spans: number): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    const s = await stats(port);
    if (s && s.forwardedSpans >= spans) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('serve did not forward every span within a minute');
}

/**
 * Heap per held trace: traces whose root arrived but whose quiet period has not ended, in process,
 * after GC; beside it, what serve's own estimate (`heldBytes`, which the memory limit bounds)
 * says they hold.
 */
async function memoryPerHeldTrace(traces: number): Promise<{ heap: number; estimate: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const server = new LoopwatchServer({ forward: 'http://127.0.0.1:9', limits: { traceWait: 600_000, quietAfterRoot: 600_000 }, log: () => undefined });
  const texts = requests(traces * 13, 3).json.map((t) => Buffer.from(t));
  gc();
  const before = process.memoryUsage().heapUsed;
  // decoded one request at a time: what stays is what serve holds (the decoded spans and its trace state)
  for (const t of texts) await server.pipeline.ingest(decodeTraceRequest(t, 'json'));
  texts.length = 0;
  gc();
  const after = process.memoryUsage().heapUsed;
  const held = server.pipeline.stats.openTraces;
  const estimate = server.pipeline.stats.heldBytes / held;
  await server.close(0);
  return { heap: (after - before) / held, estimate };
}

/** Added latency: requests carrying whole traces at a moderate rate; arrival downstream minus the answer to the request. */
async function latency(quietAfterRootMs: number, tracesToSend: number): Promise<number[]> {
  const arrived = new Map<string, number>();
  const down = await sink((id) => {
    if (!arrived.has(id)) arrived.set(id, performance.now());
  });
  const { child, port } = await startServe(down.url, { LOOPWATCH_SERVE_QUIET_AFTER_ROOT_MS: String(quietAfterRootMs) });
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  const sent = new Map<string, number>();
  try {
    for (let i = 0; i < tracesToSend; i++) {
      const spans = agentRun(i, 4);
      await post(agent, port, JSON.stringify(request0(spans)), 'application/json');
      sent.set(spans[0]?.traceId as string, performance.now());
      await new Promise((r) => setTimeout(r, 20));
    }
    await waitForwarded(port, tracesToSend * 13);
    await new Promise((r) => setTimeout(r, 300));
    return [...sent.entries()].map(([id, t]) => (arrived.get(id) ?? Number.NaN) - t);
  } finally {
    agent.destroy();
    child.kill('SIGKILL');
    down.server.close();
  }
}

export async function serveFigures(options: { quick: boolean }): Promise<Figure[]> {
  const total = options.quick ? 20_000 : 200_000;
  const figures: Figure[] = [];
  for (const encoding of ['protobuf', 'json'] as const) {
    const r = await throughput(encoding, total);
    figures.push({
      section: 'serve',
      name: `serve throughput, OTLP/HTTP ${encoding === 'json' ? 'JSON' : 'protobuf'} in, protobuf out`,
      value: `${Math.round(r.spansPerCpuSecond).toLocaleString('en')} spans/s per core`,
      target: `≥ ${TARGET_SPANS_PER_CORE.toLocaleString('en')}`,
      met: r.spansPerCpuSecond >= TARGET_SPANS_PER_CORE,
      note: `${r.spans.toLocaleString('en')} spans (13 a run, gen_ai and OpenInference, 1 run in 8 looping, 512 a request) over ${r.cpu.toFixed(2)} s of the serve process's CPU`,
    });
  }
  const perTrace = await memoryPerHeldTrace(options.quick ? 300 : 3_000);
  figures.push({
    section: 'serve',
    name: 'serve memory per held trace (13 spans, arguments and results captured)',
    value: bytes(perTrace.heap),
    note: `heap after GC while traces wait for their quiet period, in process; serve's estimate (what --max-memory bounds): ${bytes(perTrace.estimate)} (${(perTrace.estimate / perTrace.heap).toFixed(2)}× the heap)`,
  });
  const quiet = 200;
  const lat = (await latency(quiet, options.quick ? 40 : 150)).filter((x) => Number.isFinite(x));
  figures.push({
    section: 'serve',
    name: `serve latency before forwarding (quiet-after-root ${quiet} ms)`,
    value: `p50 ${quantile(lat, 0.5).toFixed(0)} ms, p99 ${quantile(lat, 0.99).toFixed(0)} ms`,
    note: `added beyond the quiet period: p50 ${(quantile(lat, 0.5) - quiet).toFixed(0)} ms (completion check every ${Math.max(10, Math.min(250, Math.floor(quiet / 4)))} ms, batch flush 200 ms); ${lat.length} traces`,
  });
  return figures;
}
