import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LoopEngine } from '../src/detector/engine.js';
import { McpCallGuard, type McpSession } from '../src/mcp/call-guard.js';
import { LineSplitter } from '../src/mcp/framing.js';
import { McpTelemetry } from '../src/mcp/telemetry.js';
import { allocated } from './support/allocation.js';
import { proseResult } from './support/payloads.js';
import { bytes, median, quantile, type Figure } from './support/report.js';

/**
 * `loopwatch mcp` (issue 31): what the stdio proxy adds to a client's round trips, beside a direct
 * connection to the same server in the same run (both children alive, measured in alternating
 * rounds; see `mcpFigures`). The server (support/ndjson-server.mjs) answers at once, so the round trip is the
 * transport's and the proxy's; `tools/call` carries new arguments and a new result each time
 * (honest work: the guard lets it run, as most calls are), other requests are relayed unread.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The CLI measured: this build's, or the one BENCH_MCP_CLI names (another build's, for a before and after). */
const CLI = process.env.BENCH_MCP_CLI ?? join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
/** Another build proxied beside it in the same rounds (main's, for a before and after side by side), when named. */
const BASELINE_CLI = process.env.BENCH_MCP_BASELINE_CLI;
const SERVER = join(ROOT, 'bench', 'support', 'ndjson-server.mjs');
/** The least any stdio proxy adds: a process that copies bytes both ways, nothing else. */
const BARE_RELAY = join(ROOT, 'bench', 'support', 'bare-relay.mjs');
/** Preloaded into the relays: their garbage collections, on the clock the bench stamps requests with. */
const GC_RECORD = pathToFileURL(join(ROOT, 'bench', 'support', 'gc-record.mjs')).href;
export const TARGET_ADDED_P99_MS = 1;
export const TARGET_CALLS_PER_SECOND = 500;
/** Between two requests of the latency rounds (see `mcpFigures`). */
const PACE_MS = 2;
/** Latency rounds, and the blocks they are cut into for the spread (see `mcpFigures`). */
const ROUNDS = 3000;
const BLOCKS = 10;
/** Bootstrap draws for the spread of a p99 difference. */
const DRAWS = 400;

type Child = ChildProcessByStdio<Writable, Readable, null>;

const hr = (): number => Number(process.hrtime.bigint()) / 1e6;

/** A byte-level client: one request out, the time until its response line is back. */
class Peer {
  private readonly lines = new LineSplitter();
  private waiting: ((bytes: number) => void) | undefined;
  private nextId = 1;
  /** While `recording`, each request's send and receive (CLOCK_MONOTONIC ms) are kept here. */
  readonly trips: [number, number][] = [];
  recording = false;

  constructor(readonly child: Child) {
    child.stdout.on('data', (chunk: Buffer) =>
      this.lines.push(chunk, (_parts, n) => {
        const done = this.waiting;
        this.waiting = undefined;
        done?.(n);
      }),
    );
  }

  /** `gcDir`: record the process's garbage collections there (gc-record.mjs). */
  static start(args: readonly string[], gcDir?: string): Peer {
    const flags = gcDir === undefined ? [] : ['--import', GC_RECORD];
    const env = { ...process.env, OTEL_SDK_DISABLED: 'true', ...(gcDir === undefined ? {} : { BENCH_GC_DIR: gcDir }) };
    return new Peer(spawn(process.execPath, [...flags, ...args], { stdio: ['pipe', 'pipe', 'inherit'], env }));
  }

  /** Its garbage collections, once it has exited: [start (CLOCK_MONOTONIC ms), duration ms, kind (1: scavenge)]. */
  collections(gcDir: string): [number, number, number][] | undefined {
    try {
      return JSON.parse(readFileSync(join(gcDir, `${this.child.pid}.json`), 'utf8')) as [number, number, number][];
    } catch {
      return undefined;
    }
  }

  /** Round trip of one request, in ms; `bytes` of result text. */
  async request(method: string, size: number): Promise<number> {
    const id = this.nextId++;
    const params = method === 'tools/call' ? { name: 'fetch_page', arguments: { page: id, bytes: size } } : { uri: `file:///${id}`, bytes: size };
    const line = `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`;
    const t0 = hr();
    const answered = new Promise<number>((resolve) => (this.waiting = resolve));
    this.child.stdin.write(line);
    await answered;
    const t1 = hr();
    if (this.recording) this.trips.push([t0, t1]);
    return t1 - t0;
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

/** CPU time (user + system) a process has used, in ms; undefined off Linux. Ticks of 10 ms: meaningful summed over many requests. */
function cpuMs(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

const ms = (x: number): string => `${x.toFixed(3)} ms`;

/**
 * The 5th and 95th percentiles of `q`(proxied) − `q`(direct) over samples redrawn block by block
 * (the same blocks for both sides, as they were measured together), a deterministic draw.
 */
function blockBootstrap(direct: readonly number[][], proxied: readonly number[][], q: number): [number, number] {
  let seed = 0x2545f491;
  const next = (n: number): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const n = Math.min(direct.length, proxied.length);
  const estimates: number[] = [];
  for (let i = 0; i < DRAWS; i++) {
    const d: number[] = [];
    const p: number[] = [];
    for (let b = 0; b < n; b++) {
      const pick = next(n);
      d.push(...(direct[pick] ?? []));
      p.push(...(proxied[pick] ?? []));
    }
    estimates.push(quantile(p, q) - quantile(d, q));
  }
  return [quantile(estimates, 0.05), quantile(estimates, 0.95)];
}

/** Every order of `items`. */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((first, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [first, ...rest]));
}

/**
 * Latency is measured in interleaved rounds: each round sends every kind of message once to each
 * connection, the connections in every order in turn, call after call, so the direct, the
 * bare-relayed and the proxied samples of a round see the same machine. The figure is what the
 * proxy adds at the 99th percentile: the p99 of all the proxied samples of a kind less the p99 of
 * all its direct ones (`ROUNDS` rounds, so the p99 is an order statistic deep in the samples, not
 * the 3rd largest of a few hundred). Its spread is a bootstrap over the rounds' blocks (`BLOCKS`,
 * contiguous: a burst of load elsewhere on the machine stays in its block): the same estimate from
 * blocks drawn with replacement, its 5th to 95th percentile. The older estimate (the median of the
 * blocks' own p99 differences) is printed beside it. The bare relay (bare-relay.mjs) is the floor
 * of any stdio proxy on this machine (one more process, two more pipe hops): its own p99 added is
 * printed beside the proxy's, and the proxy's p99 above it is what the proxy's work adds. The
 * relays' CPU time per request (from /proc) is the part that does not depend on the machine's
 * load; their young-generation collections (scavenges) are counted per 1 000 requests, and those
 * that fell inside a request's round trip. Requests are `PACE_MS` apart, as an agent's are (a
 * model turn between two calls): the proxy reads a result after relaying it, and a request sent
 * at once would wait for that reading, which is the previous message's cost (the throughput
 * figure sends them back to back).
 */
export async function mcpFigures(options: { quick: boolean }): Promise<Figure[]> {
  const blocks = options.quick ? 2 : BLOCKS;
  const roundsPerBlock = options.quick ? 8 : ROUNDS / BLOCKS;
  const sizes = [1024, 4 * 1024, 16 * 1024, 64 * 1024];
  const methods = ['tools/call', 'resources/read'];
  const gcDir = mkdtempSync(join(tmpdir(), 'bench-mcp-gc-'));
  const direct = Peer.start([SERVER]);
  const bare = Peer.start([BARE_RELAY, process.execPath, SERVER], gcDir);
  const proxied = Peer.start([CLI, 'mcp', '--', process.execPath, SERVER], gcDir);
  const baseline = BASELINE_CLI === undefined ? undefined : Peer.start([BASELINE_CLI, 'mcp', '--', process.execPath, SERVER], gcDir);
  const relays = baseline ? { bare, proxied, baseline } : { bare, proxied };
  type Relay = keyof typeof relays;
  const peers = [direct, ...Object.values(relays)];
  await Promise.all(peers.map((p) => p.initialize()));
  const figures: Figure[] = [];
  /** The latency rounds' first and last stamps, to count the collections that fell in them. */
  let window: [number, number] = [0, 0];
  try {
    // warm-up: JIT, buffers
    for (let i = 0; i < (options.quick ? 10 : 200); i++) for (const p of peers) for (const m of methods) await p.request(m, 4 * 1024);

    type Which = 'direct' | Relay;
    type Samples = Record<Which, number[][]> & { cpu: Partial<Record<Which, number>> };
    const connections: Which[] = ['direct', ...(Object.keys(relays) as Relay[])];
    const orders = permutations(connections);
    const samples = new Map<string, Samples>();
    for (const method of methods) for (const size of sizes) samples.set(`${method} ${size}`, { direct: [], bare: [], proxied: [], baseline: [], cpu: {} });
    for (const p of peers) p.recording = true;
    window = [hr(), 0];
    for (let b = 0; b < blocks; b++) {
      for (const s of samples.values()) for (const which of connections) s[which].push([]);
      for (let r = 0; r < roundsPerBlock; r++) {
        for (const method of methods) {
          for (const size of sizes) {
            const s = samples.get(`${method} ${size}`) as Samples;
            // every order in turn, so none always runs first, or always right after another one's turn
            const order = orders[r % orders.length] as Which[];
            for (const which of order) {
              const peer = which === 'direct' ? direct : (relays[which] as Peer);
              const before = which === 'direct' ? undefined : cpuMs(peer.child.pid);
              s[which][b]?.push(await peer.request(method, size));
              await sleep(PACE_MS);
              const after = cpuMs(peer.child.pid);
              if (before !== undefined && after !== undefined) s.cpu[which] = (s.cpu[which] ?? 0) + after - before;
            }
          }
        }
      }
    }
    window[1] = hr();
    for (const p of peers) p.recording = false;
    let worst = 0;
    let worstSpread = '';
    let worstAboveBare = 0;
    let worstAboveBareAt = '';
    const requests = blocks * roundsPerBlock;
    for (const method of methods) {
      for (const size of sizes) {
        const s = samples.get(`${method} ${size}`) as Samples;
        const p99Added = (which: Relay, reference: 'direct' | 'bare' = 'direct'): { mid: number; spread: string; note: string } => {
          const d = s[reference].flat();
          const mid = quantile(s[which].flat(), 0.99) - quantile(d, 0.99);
          const [lo, hi] = blockBootstrap(s[reference], s[which], 0.99);
          const spread = `${ms(lo)} to ${ms(hi)}`;
          if (reference === 'bare') return { mid, spread, note: `pooled ${requests} each; 90 % of block bootstraps ${spread}` };
          const byBlock = s[which].map((p, b) => quantile(p, 0.99) - quantile(s.direct[b] ?? [], 0.99));
          const note = [
            `pooled ${requests} each; 90 % of block bootstraps ${spread}`,
            `p99 ${ms(quantile(d, 0.99))} → ${ms(quantile(s[which].flat(), 0.99))}`,
            `p50 ${ms(quantile(d, 0.5))} → ${ms(quantile(s[which].flat(), 0.5))}`,
            `its CPU ${ms((s.cpu[which] ?? 0) / requests)} a request`,
            `old estimate (median of ${blocks} blocks' p99 differences) ${ms(median(byBlock))}, blocks ${ms(Math.min(...byBlock))} to ${ms(Math.max(...byBlock))}`,
          ].join('; ');
          return { mid, spread, note };
        };
        const kind = `${method}, ${bytes(size)} result`;
        const own = p99Added('proxied');
        if (own.mid > worst) [worst, worstSpread] = [own.mid, `${method}, ${bytes(size)}; 90 % of block bootstraps ${own.spread}`];
        figures.push({ section: 'mcp', name: `${kind}: p99 round trip, proxied − direct, ${PACE_MS} ms apart`, value: ms(own.mid), note: own.note });
        const floor = p99Added('bare');
        figures.push({ section: 'mcp', name: `  the same through the bare relay (the floor of any stdio proxy)`, value: ms(floor.mid), note: floor.note });
        const above = p99Added('proxied', 'bare');
        if (above.mid > worstAboveBare) [worstAboveBare, worstAboveBareAt] = [above.mid, `${method}, ${bytes(size)}; 90 % of block bootstraps ${above.spread}`];
        figures.push({ section: 'mcp', name: `  p99 proxied − bare relay`, value: ms(above.mid), note: above.note });
        if (baseline) {
          const other = p99Added('baseline');
          figures.push({ section: 'mcp', name: `  the same through the baseline build (BENCH_MCP_BASELINE_CLI)`, value: ms(other.mid), note: other.note });
          const otherAbove = p99Added('baseline', 'bare');
          figures.push({ section: 'mcp', name: `  p99 baseline − bare relay`, value: ms(otherAbove.mid), note: otherAbove.note });
        }
      }
    }
    figures.push({
      section: 'mcp',
      name: 'messages up to 64 KiB, tools/call included: the largest p99 the proxy adds',
      value: ms(worst),
      target: `≤ ${TARGET_ADDED_P99_MS} ms`,
      met: worst <= TARGET_ADDED_P99_MS,
      note: `pooled p99 difference (${worstSpread})`,
    });
    figures.push({
      section: 'mcp',
      name: '  of it, the largest p99 the proxy adds above the bare relay',
      value: ms(worstAboveBare),
      note: `pooled p99 difference (${worstAboveBareAt})`,
    });

    // throughput: one call after another (an agent's pace, at its fastest), 10 KB results, in alternating rounds
    const calls = options.quick ? 40 : 1_000;
    const rates = { direct: [] as number[], proxied: [] as number[], baseline: [] as number[] };
    let proxyCpu = 0;
    const rate = async (p: Peer): Promise<number> => {
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) await p.request('tools/call', 10 * 1024);
      return calls / ((performance.now() - t0) / 1000);
    };
    for (let r = 0; r < blocks; r++) {
      rates.direct.push(await rate(direct));
      if (baseline && r % 2 === 1) rates.baseline.push(await rate(baseline));
      const before = cpuMs(proxied.child.pid) ?? 0;
      rates.proxied.push(await rate(proxied));
      proxyCpu += (cpuMs(proxied.child.pid) ?? 0) - before;
      if (baseline && r % 2 === 0) rates.baseline.push(await rate(baseline));
    }
    const proxiedRate = median(rates.proxied);
    const cpuPerCall = proxyCpu / (blocks * calls);
    const perSecond = (x: number): string => `${Math.round(x).toLocaleString('en-US')} calls/s`;
    figures.push({
      section: 'mcp',
      name: 'tools/call with 10 KB results, one after another, through the proxy',
      value: perSecond(proxiedRate),
      target: `≥ ${TARGET_CALLS_PER_SECOND} calls/s`,
      met: proxiedRate >= TARGET_CALLS_PER_SECOND,
      note: `median of ${blocks} rounds of ${calls} (${perSecond(Math.min(...rates.proxied))} to ${perSecond(Math.max(...rates.proxied))}); direct ${perSecond(median(rates.direct))}; the proxy's CPU ${ms(cpuPerCall)} a call (${cpuPerCall > 0 ? perSecond(1000 / cpuPerCall) : '?'} on one core)${baseline ? `; the baseline build ${perSecond(median(rates.baseline))} (${perSecond(Math.min(...rates.baseline))} to ${perSecond(Math.max(...rates.baseline))})` : ''}`,
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
    await Promise.all(peers.map((p) => p.stop()));
  }
  figures.push(...scavengeFigures(relays, gcDir, window));
  rmSync(gcDir, { recursive: true, force: true });
  figures.push(...(await guardFigures(options.quick)));
  return figures;
}

/** NODE_PERFORMANCE_GC_MINOR: a young-generation collection. */
const SCAVENGE = 1;

/**
 * Each relay's scavenges during the latency rounds (`window`): per 1 000 requests, and those
 * that fell inside one of its own requests' round trips (a pause on the message's path).
 */
function scavengeFigures(relays: Record<string, Peer>, gcDir: string, window: [number, number]): Figure[] {
  return Object.entries(relays).map(([which, peer]) => {
    const all = peer.collections(gcDir);
    if (all === undefined) return { section: 'mcp', name: `${which}: scavenges per 1 000 requests`, value: '?', note: 'no record of its collections' };
    const scavenges = all.filter(([at, , kind]) => kind === SCAVENGE && at >= window[0] && at <= window[1]);
    const onPath = scavenges.filter(([at, dur]) => peer.trips.some(([t0, t1]) => at < t1 && at + dur > t0));
    const per1000 = (n: number): string => ((n / Math.max(1, peer.trips.length)) * 1000).toFixed(2);
    const pauses = scavenges.map(([, dur]) => dur);
    return {
      section: 'mcp',
      name: `${which}: scavenges per 1 000 requests (latency rounds), and inside a round trip`,
      value: `${per1000(scavenges.length)} / ${per1000(onPath.length)}`,
      note: `${scavenges.length} scavenges in ${peer.trips.length} requests, ${onPath.length} inside one; pause p50 ${ms(median(pauses))}, max ${ms(Math.max(0, ...pauses))}`,
    };
  });
}

/**
 * The guard's own CPU per `tools/call`, in this process (no transport, no parse): the call
 * judged, its result read back into the engine, the run's history full (past the engine's
 * `historySize`), every call new work as an honest session's are. With a 16-byte result the
 * figure is the guard's bookkeeping; with 10 KB of prose, the result's fingerprint besides. Beside
 * it, the bytes the guard allocates per call (V8's sampling heap profiler, freed objects counted:
 * what the young generation must collect).
 */
export async function guardFigures(quick: boolean): Promise<Figure[]> {
  const telemetry = await McpTelemetry.fromEnv({ OTEL_SDK_DISABLED: 'true' }, 'bench', () => undefined);
  const session: McpSession = { key: 'bench', sessionId: 'bench' };
  const calls = quick ? 300 : 3_000;
  const rounds = quick ? 3 : 9;
  const figures: Figure[] = [];
  for (const size of [16, 10 * 1024]) {
    const texts = Array.from({ length: 64 }, (_, i) => proseResult(size, i));
    const perCall: number[] = [];
    let heapPerCall = 0;
    for (let r = 0; r < rounds; r++) {
      const guard = new McpCallGuard({ engine: new LoopEngine(), action: 'graduated', idleGapMs: 60_000, telemetry, transport: 'pipe', say: () => undefined });
      let id = 0;
      const call = (): void => {
        id++;
        const verdict = guard.fromClient(session, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: `tool_${id % 6}`, arguments: { page: id, q: `query ${id}` } } });
        if (verdict.relay) guard.fromServer(session, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `${id}:${texts[id % texts.length] ?? ''}` }] } });
      };
      for (let i = 0; i < 200; i++) call(); // the history full
      const t0 = process.cpuUsage();
      for (let i = 0; i < calls; i++) call();
      const used = process.cpuUsage(t0);
      perCall.push((used.user + used.system) / 1000 / calls);
      if (r === rounds - 1) {
        heapPerCall =
          (await allocated(async () => {
            for (let i = 0; i < calls; i++) call();
          }, 1024)) / calls;
      }
    }
    figures.push({
      section: 'mcp',
      name: `the guard alone (in process), a tools/call with a ${bytes(size)} result: CPU per call`,
      value: ms(median(perCall)),
      note: `median of ${rounds} rounds of ${calls} calls (${ms(Math.min(...perCall))} to ${ms(Math.max(...perCall))}), history full`,
    });
    figures.push({
      section: 'mcp',
      name: `  the heap it allocates per call`,
      value: bytes(heapPerCall),
      note: `${calls} calls after the CPU rounds, sampled every 1 KiB, freed objects counted`,
    });
  }
  return figures;
}
