import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { LineSplitter } from '../src/mcp/framing.js';
import { bytes, quantile, type Figure } from './support/report.js';

/**
 * `loopwatch mcp` (issue 31): what the stdio proxy adds to a client's round trips, beside a direct
 * connection to the same server in the same run (both children alive, measured in alternating
 * rounds). The server (support/ndjson-server.mjs) answers at once, so the round trip is the
 * transport's and the proxy's; `tools/call` carries new arguments and a new result each time
 * (honest work: the guard lets it run, as most calls are), other requests are relayed unread.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const SERVER = join(ROOT, 'bench', 'support', 'ndjson-server.mjs');
export const TARGET_ADDED_P99_MS = 1;
export const TARGET_CALLS_PER_SECOND = 500;

type Child = ChildProcessByStdio<Writable, Readable, null>;

/** A byte-level client: one request out, the time until its response line is back. */
class Peer {
  private readonly lines = new LineSplitter();
  private waiting: ((bytes: number) => void) | undefined;
  private nextId = 1;

  constructor(readonly child: Child) {
    child.stdout.on('data', (chunk: Buffer) =>
      this.lines.push(chunk, (_parts, n) => {
        const done = this.waiting;
        this.waiting = undefined;
        done?.(n);
      }),
    );
  }

  static start(args: readonly string[]): Peer {
    return new Peer(spawn(process.execPath, args as string[], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, OTEL_SDK_DISABLED: 'true' } }));
  }

  /** Round trip of one request, in ms; `bytes` of result text. */
  async request(method: string, size: number): Promise<number> {
    const id = this.nextId++;
    const params = method === 'tools/call' ? { name: 'fetch_page', arguments: { page: id, bytes: size } } : { uri: `file:///${id}`, bytes: size };
    const line = `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`;
    const t0 = performance.now();
    const answered = new Promise<number>((resolve) => (this.waiting = resolve));
    this.child.stdin.write(line);
    await answered;
    return performance.now() - t0;
  }

  async initialize(): Promise<void> {
    const answered = new Promise<number>((resolve) => (this.waiting = resolve));
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })}\n`);
    await answered;
  }

  /** Peak resident memory of the process (VmHWM), in bytes; undefined off Linux. */
  peakRss(): number | undefined {
    try {
      const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'))?.[1];
      return kb === undefined ? undefined : Number(kb) * 1024;
    } catch {
      return undefined;
    }
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.child.once('close', () => resolve());
      this.child.stdin.end();
    });
  }
}

export async function mcpFigures(options: { quick: boolean }): Promise<Figure[]> {
  const rounds = options.quick ? 8 : 1_500;
  const sizes = [256, 4 * 1024, 16 * 1024, 64 * 1024];
  const direct = Peer.start([SERVER]);
  const proxied = Peer.start([CLI, 'mcp', '--', process.execPath, SERVER]);
  await Promise.all([direct.initialize(), proxied.initialize()]);
  const figures: Figure[] = [];
  try {
    // warm-up: JIT, buffers
    for (let i = 0; i < (options.quick ? 10 : 50); i++) for (const p of [direct, proxied]) await p.request('tools/call', 1024);

    const times = { direct: new Map<string, number[]>(), proxied: new Map<string, number[]>() };
    for (let r = 0; r < rounds; r++) {
      for (const method of ['tools/call', 'resources/read']) {
        for (const size of sizes) {
          const key = `${method} ${size}`;
          // alternate which goes first, so neither always runs on a warmer machine
          const order = r % 2 === 0 ? (['direct', 'proxied'] as const) : (['proxied', 'direct'] as const);
          for (const which of order) {
            const ms = await (which === 'direct' ? direct : proxied).request(method, size);
            const list = times[which].get(key) ?? [];
            list.push(ms);
            times[which].set(key, list);
          }
        }
      }
    }
    let worst = 0;
    for (const method of ['tools/call', 'resources/read']) {
      for (const size of sizes) {
        const key = `${method} ${size}`;
        const d = times.direct.get(key) ?? [];
        const p = times.proxied.get(key) ?? [];
        const added = quantile(p, 0.99) - quantile(d, 0.99);
        worst = Math.max(worst, added);
        figures.push({
          section: 'mcp',
          name: `${method}, ${bytes(size)} result: p99 round trip, proxied − direct`,
          value: `${added.toFixed(3)} ms`,
          note: `p50 ${quantile(d, 0.5).toFixed(3)} → ${quantile(p, 0.5).toFixed(3)} ms, p99 ${quantile(d, 0.99).toFixed(3)} → ${quantile(p, 0.99).toFixed(3)} ms; ${d.length} round trips each`,
        });
      }
    }
    figures.push({
      section: 'mcp',
      name: 'messages up to 64 KiB, tools/call included: the largest p99 the proxy adds',
      value: `${worst.toFixed(3)} ms`,
      target: `≤ ${TARGET_ADDED_P99_MS} ms`,
      met: worst <= TARGET_ADDED_P99_MS,
    });

    // throughput: one call after another (an agent's pace, at its fastest), 10 KB results
    const calls = options.quick ? 40 : 5_000;
    const rate = async (p: Peer): Promise<number> => {
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) await p.request('tools/call', 10 * 1024);
      return calls / ((performance.now() - t0) / 1000);
    };
    const directRate = await rate(direct);
    const proxiedRate = await rate(proxied);
    figures.push({
      section: 'mcp',
      name: 'tools/call with 10 KB results, one after another, through the proxy',
      value: `${Math.round(proxiedRate).toLocaleString('en-US')} calls/s`,
      target: `≥ ${TARGET_CALLS_PER_SECOND} calls/s`,
      met: proxiedRate >= TARGET_CALLS_PER_SECOND,
      note: `direct ${Math.round(directRate).toLocaleString('en-US')} calls/s; ${calls} calls each`,
    });

    // one huge result: the time it adds and the memory it takes
    const huge = options.quick ? 1024 * 1024 : 50 * 1024 * 1024;
    const before = proxied.peakRss();
    const directHuge = await direct.request('tools/call', huge);
    const proxiedHuge = await proxied.request('tools/call', huge);
    // the proxy relays the bytes before it reads them: one more round trip, and its reading is over
    await proxied.request('tools/call', 16);
    const after = proxied.peakRss();
    figures.push({
      section: 'mcp',
      name: `a ${bytes(huge)} tools/call result: time added, proxied − direct`,
      value: `${(proxiedHuge - directHuge).toFixed(0)} ms`,
      note: `direct ${directHuge.toFixed(0)} ms, proxied ${proxiedHuge.toFixed(0)} ms; the proxy's peak RSS ${before !== undefined ? bytes(before) : '?'} → ${after !== undefined ? bytes(after) : '?'} (${after !== undefined && before !== undefined ? ((after - before) / huge).toFixed(1) : '?'} copies of the result)`,
    });
  } finally {
    await Promise.all([direct.stop(), proxied.stop()]);
  }
  return figures;
}
