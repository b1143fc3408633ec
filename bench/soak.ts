/**
 * The serve soak (issue 28, Deliver 5): the built CLI, as deployed (default memory limit, a
 * spool), under ten minutes of mixed traffic: agent runs from several clients that follow
 * Retry-After, a slow client trickling its bodies, a flood of 2 MB-attribute spans every minute
 * (300 MB, more than the memory limit), and a downstream that flaps (up, refusing connections,
 * answering 503, answering slowly, answering after serve's forward timeout).
 * Recorded: serve's RSS over time, request and delivery latency, and spans in against spans out:
 * every span answered 200 must arrive at least once; copies are counted.
 *   npm run bench -- --only=soak [--soak-minutes=10]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyValue } from '../src/formats/protobuf/span-view.js';
import { bytes, quantile, type Figure } from './support/report.js';
import { agentRun, CountingSink, memoryOf, postUntilTaken, protobufOf, randomId, sleep, span, spanKey, spawnServe, type SinkMode } from './support/serve-harness.js';

const SECTION = 'soak';
const log = (text: string): void => console.log(`  [${SECTION}] ${text}`);

/**
 * The downstream's cycle: what it does, for how long (seconds). `slow` answers after 2 s;
 * `stall` after 40 s, past serve's forward timeout (30 s): serve sends those batches again, and
 * the downstream gets them twice (at least once).
 */
const FLAPS: readonly [SinkMode | 'slow' | 'stall', number][] = [
  ['up', 40],
  ['refuse', 15],
  ['up', 20],
  ['503', 10],
  ['slow', 15],
  ['up', 20],
  ['stall', 10],
];
const FLAP_DELAY: Readonly<Record<string, number>> = { slow: 2_000, stall: 40_000 };

export async function soakFigures(options: { quick: boolean; minutes: number }): Promise<Figure[]> {
  const minutes = options.quick ? 0.5 : options.minutes;
  const spool = mkdtempSync(join(tmpdir(), 'loopwatch-soak-spool-'));
  const sink = await new CountingSink().start();
  const serve = await spawnServe({ forward: sink.url, args: ['--spool', spool] });
  const pid = serve.child.pid as number;
  const t0 = performance.now();
  const end = t0 + minutes * 60_000;
  const elapsed = (): number => (performance.now() - t0) / 1000;
  const accepted = new Set<string>();
  const acceptedAt = new Map<string, number>();
  const requestMs: number[] = [];
  let refusals = 0;
  let failures = 0;
  const rss: { t: number; rss: number; held: number; queued: number; spool: number }[] = [];

  // the downstream flaps
  const flapping = (async () => {
    for (let i = 0; performance.now() < end; i++) {
      const [mode, seconds] = FLAPS[i % FLAPS.length] as [SinkMode | 'slow' | 'stall', number];
      if (mode === 'refuse') await sink.down();
      else {
        await sink.up();
        sink.mode = mode === 'slow' || mode === 'stall' ? 'up' : mode;
        sink.delayMs = FLAP_DELAY[mode] ?? 0;
      }
      log(`${elapsed().toFixed(0)} s: downstream ${mode} for ${seconds} s`);
      await sleep(Math.min(seconds * 1000, Math.max(0, end - performance.now())));
    }
    await sink.up();
    sink.mode = 'up';
    sink.delayMs = 0;
  })();

  // agent runs, in three requests each, from six clients
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const client = async (c: number): Promise<void> => {
    for (let i = c; performance.now() < end; i += 6) {
      const spans = agentRun(i);
      for (const part of [spans.slice(0, 6), spans.slice(6, 12), spans.slice(12)]) {
        const r = await postUntilTaken(serve.port, protobufOf(part), end + 120_000, { agent, onRefused: () => refusals++ });
        if (r.status === 200) {
          requestMs.push(r.ms);
          const now = performance.now();
          for (const s of part) {
            accepted.add(spanKey(s));
            acceptedAt.set(spanKey(s), now);
          }
        } else failures++;
      }
      await sleep(200);
    }
  };

  // a slow client: a 100 KB body in 1 KB pieces, 50 ms apart (5 s a request)
  let slowAnswers = 0;
  const slowClient = async (): Promise<void> => {
    while (performance.now() < end) {
      const s = span(randomId(16), { attributes: [keyValue('payload', 'z'.repeat(100_000))] });
      const body = protobufOf([s]);
      const status = await new Promise<number>((resolve) => {
        const socket = connect(serve.port, '127.0.0.1');
        let answer = '';
        socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
        socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(answer)?.[1] ?? 0)));
        socket.on('error', () => undefined);
        socket.write(`POST /v1/traces HTTP/1.1\r\nHost: soak\r\nContent-Type: application/x-protobuf\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
        let off = 0;
        const trickle = (): void => {
          if (off >= body.length || socket.destroyed) return;
          socket.write(body.subarray(off, off + 1024));
          off += 1024;
          setTimeout(trickle, 50);
        };
        trickle();
      });
      if (status === 200) {
        accepted.add(spanKey(s));
        acceptedAt.set(spanKey(s), performance.now());
        slowAnswers++;
      }
    }
  };

  // a flood of 2 MB-attribute spans every minute: 150 of them (more than the memory limit), 4 at a time
  const flood = async (): Promise<void> => {
    const blob = 'f'.repeat(2_000_000);
    while (performance.now() < end) {
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next++ < 150 && performance.now() < end) {
          const s = span(randomId(16), { parent: randomId(8), attributes: [keyValue('payload', blob)] });
          const r = await postUntilTaken(serve.port, protobufOf([s]), end + 120_000, { onRefused: () => refusals++ });
          if (r.status === 200) {
            accepted.add(spanKey(s));
            acceptedAt.set(spanKey(s), performance.now());
          } else failures++;
        }
      };
      log(`${elapsed().toFixed(0)} s: flood of 2 MB spans`);
      await Promise.all([worker(), worker(), worker(), worker()]);
      await sleep(Math.min(60_000, Math.max(0, end - performance.now())));
    }
  };

  const sampling = setInterval(() => {
    const m = memoryOf(pid);
    if (!m) return;
    void serve.stats().then((s) =>
      rss.push({ t: elapsed(), rss: m.rss, held: s?.heldBytes ?? 0, queued: s?.queuedBytes ?? 0, spool: s?.spoolBytes ?? 0 }),
    );
  }, 5_000);

  await Promise.all([flapping, ...Array.from({ length: 6 }, (_, c) => client(c)), slowClient(), flood()]);
  log(`${elapsed().toFixed(0)} s: traffic stopped; waiting for delivery`);
  const drainStart = performance.now();
  while (performance.now() - drainStart < 180_000 && [...accepted].some((k) => !sink.arrivals.has(k))) await sleep(500);
  clearInterval(sampling);
  const stats = await serve.stats();
  serve.child.kill('SIGTERM');
  const exit = await serve.exited;
  await sink.stop();
  agent.destroy();
  rmSync(spool, { recursive: true, force: true });

  const lost = [...accepted].filter((k) => !sink.arrivals.has(k)).length;
  const dup = sink.duplicates();
  const delivery = [...accepted].flatMap((k) => {
    const a = sink.arrivalTimes.get(k);
    const t = acceptedAt.get(k);
    return a !== undefined && t !== undefined ? [Math.max(0, a - t)] : [];
  });
  const perMinute = new Map<number, { min: number; max: number }>();
  for (const r of rss) {
    const minute = Math.floor(r.t / 60);
    const m = perMinute.get(minute) ?? { min: Number.POSITIVE_INFINITY, max: 0 };
    perMinute.set(minute, { min: Math.min(m.min, r.rss), max: Math.max(m.max, r.rss) });
  }
  const timeline = [...perMinute.entries()].map(([m, v]) => `${m}′ ${bytes(v.min)}–${bytes(v.max)}`).join(', ');
  log(`RSS by minute (min–max): ${timeline}`);
  log(`samples (t s, RSS, held, queued, spool): ${rss.map((r) => `${r.t.toFixed(0)}:${(r.rss / 2 ** 20).toFixed(0)}M/${(r.held / 2 ** 20).toFixed(0)}/${(r.queued / 2 ** 20).toFixed(0)}/${(r.spool / 2 ** 20).toFixed(0)}`).join(' ')}`);
  const peak = Math.max(...rss.map((r) => r.rss));
  return [
    {
      section: SECTION,
      name: `${minutes} min of mixed traffic, flapping downstream: RSS`,
      value: `peak ${bytes(peak)}, last ${bytes(rss.at(-1)?.rss ?? 0)}`,
      note: `by minute (min–max): ${timeline}`,
    },
    {
      section: SECTION,
      name: 'request latency (agent requests answered 200)',
      value: `p50 ${quantile(requestMs, 0.5).toFixed(0)} ms, p99 ${quantile(requestMs, 0.99).toFixed(0)} ms`,
      note: `${requestMs.length} requests; ${refusals} refusals (429/503) retried as Retry-After says; ${failures} given up`,
    },
    {
      section: SECTION,
      name: 'delivery latency (accepted → first arrival downstream)',
      value: `p50 ${(quantile(delivery, 0.5) / 1000).toFixed(1)} s, p99 ${(quantile(delivery, 0.99) / 1000).toFixed(1)} s`,
      note: 'includes the quiet period (1 s), the trace wait of rootless spans (30 s) and the downstream outages',
    },
    {
      section: SECTION,
      name: 'spans in vs out',
      value: `${accepted.size.toLocaleString('en')} accepted, ${(accepted.size - lost).toLocaleString('en')} arrived, ${lost} lost; ${dup.spans} arrived more than once (${dup.copies} extra copies)`,
      note: `slow client: ${slowAnswers} bodies taken; serve at the end: ${stats?.forwardedSpans} forwarded, ${stats?.droppedSpans} dropped, ${stats?.tracesCut} cut, ${stats?.tracesCutByBound} completed early, ${stats?.forwardTimeouts} forward timeouts; exit ${exit.code}`,
    },
  ];
}
