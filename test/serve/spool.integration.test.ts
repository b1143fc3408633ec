/**
 * Issue 28, Deliver 3: the on-disk spool keeps what was accepted and not yet forwarded, skips and
 * counts what it cannot read, deletes what was settled, and is bounded in bytes.
 */
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { SpoolLedger } from '../../src/serve/ledger.js';
import { ReportingExporter } from '../../src/serve/reporting-exporter.js';
import { Spool, spanKey, type SpooledRequest } from '../../src/serve/spool.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { FakeDownstream } from './downstream.js';
import { json, loopSpans, postJson, rootless, startServe, until } from './support.js';

const ids = (n: number): { traceId: Uint8Array; spanId: Uint8Array } => ({ traceId: new Uint8Array(16).fill(n), spanId: new Uint8Array(8).fill(n) });

async function all(requests: AsyncIterable<SpooledRequest>): Promise<SpooledRequest[]> {
  const out: SpooledRequest[] = [];
  for await (const r of requests) out.push(r);
  return out;
}

describe('the spool', () => {
  it('after a process dies, a new one finds the requests not settled, the keys settled and counted; corrupt files and cut records are skipped and counted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-spool-'));
    const log: string[] = [];
    const first = new Spool(dir, 1 << 30, (level, m) => log.push(`${level}: ${m}`));
    await all(first.open().requests);
    const a = first.received(Buffer.from('request-a'), 'protobuf');
    first.hold(a, 2);
    first.received(Buffer.from('{"request":"b"}'), 'json');
    first.settled([{ ...ids(1), segment: a }]);
    first.counted([ids(7)]);
    // the process is killed here: nothing closed, nothing flushed beyond the writes themselves
    const [file] = readdirSync(dir);
    appendFileSync(join(dir, file as string), Buffer.from([0, 0, 1, 0, 1, 2])); // a record cut short by the kill
    writeFileSync(join(dir, '000000000000.lwspool'), 'not a spool file'); // sorted first
    const second = new Spool(dir, 1 << 30, (level, m) => log.push(`${level}: ${m}`));
    const replay = second.open();
    const requests = await all(replay.requests);
    expect(requests.map((r) => [r.encoding, Buffer.from(r.body).toString()])).toEqual([
      ['protobuf', 'request-a'],
      ['json', '{"request":"b"}'],
    ]);
    expect(replay.settled).toEqual(new Set([spanKey(ids(1).traceId, ids(1).spanId)]));
    expect(replay.counted).toEqual(new Set([spanKey(ids(7).traceId, ids(7).spanId)]));
    expect(second.stats).toMatchObject({ spoolCorruptFiles: 1, spoolCorruptRecords: 1 });
    expect(existsSync(join(dir, '000000000000.lwspool.corrupt'))).toBe(true);
    expect(log.some((l) => /not a spool file; skipped/.test(l))).toBe(true);
    expect(log.some((l) => /a record cut short/.test(l))).toBe(true);
  });

  it('deletes a file once every span written in it is settled, oldest first, and counts its bytes until then', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-spool-'));
    const spool = new Spool(dir, 1 << 30, () => undefined);
    await all(spool.open().requests);
    const seg = spool.received(Buffer.alloc(1000, 1), 'protobuf');
    spool.hold(seg, 2);
    expect(spool.stats.spoolBytes).toBeGreaterThan(1000);
    spool.tick(Date.now() + 60_000); // old enough: sealed
    spool.settled([{ ...ids(1), segment: seg }]);
    // the settled keys go to a new file; the first still holds a span not settled
    expect(readdirSync(dir).sort()).toEqual(['000000000001.lwspool', '000000000002.lwspool']);
    spool.settled([{ ...ids(2), segment: seg }]);
    expect(readdirSync(dir)).toEqual(['000000000002.lwspool']);
    spool.tick(Date.now() + 60_000);
    expect(readdirSync(dir)).toEqual([]);
    expect(spool.stats).toMatchObject({ spoolBytes: 0, spoolFiles: 0 });
  });

  it('serve refuses new data with 429 once the spool reaches --spool-max, and takes it again when the downstream has drained it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-spool-'));
    const down = await new FakeDownstream().start();
    down.status = 503;
    down.retryAfter = '1';
    const { server, base } = await startServe({ spoolDir: dir, limits: { spoolMax: 8 * 1024, quietAfterRoot: 20 } }, down);
    let refused: Response | undefined;
    for (let i = 0; i < 50 && !refused; i++) {
      const res = await postJson(base, json(loopSpans(`spool-full-${i}`)));
      if (res.status !== 200) refused = res;
    }
    expect(refused?.status).toBe(429);
    expect(((await refused?.json()) as { message: string }).message).toMatch(/spool .* is full/);
    expect(server.stats.spoolBytes).toBeGreaterThanOrEqual(8 * 1024);
    down.status = 200;
    await until(() => server.stats.queuedSpans === 0 && server.stats.heldSpans === 0, 'everything forwarded', 15_000);
    server.spool?.tick(Date.now() + 60_000);
    expect(server.stats.spoolBytes).toBeLessThan(8 * 1024);
    expect((await postJson(base, json(loopSpans('spool-again')))).status).toBe(200);
  }, 30_000);

  it('keeps a request written before it is answered: what the server held is in the spool, byte for byte', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-spool-'));
    const { base } = await startServe({ spoolDir: dir, limits: { traceWait: 60_000 } });
    const body = json(rootless(loopSpans('kept')));
    expect((await postJson(base, body)).status).toBe(200);
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(readFileSync(join(dir, files[0] as string)).includes(Buffer.from(body))).toBe(true);
  });

  it('writes a count down as counted only once the metrics holding it were exported (a count that died unexported is made again after a restart)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-spool-'));
    const spool = new Spool(dir, 1 << 30, () => undefined);
    await all(spool.open().requests);
    const ledger = new SpoolLedger(spool, true);
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const exportedAt: number[] = [];
    const reader = new PeriodicExportingMetricReader({ exporter: new ReportingExporter(exporter, (at) => {
      exportedAt.push(at);
      ledger.exported(at);
    }), exportIntervalMillis: 3_600_000 });
    const meter = new MeterProvider({ readers: [reader] }).getMeter('t');
    const counter = meter.createCounter('c');
    counter.add(1);
    ledger.counted([ids(3)]);
    // killed now: nothing was exported, nothing is written down
    let replay = new Spool(dir, 1 << 30, () => undefined).open();
    await all(replay.requests);
    expect(replay.counted.size).toBe(0);
    await reader.forceFlush();
    expect(exportedAt).toHaveLength(1);
    ledger.counted([ids(4)]); // counted after that export: not written yet
    replay = new Spool(dir, 1 << 30, () => undefined).open();
    await all(replay.requests);
    expect(replay.counted).toEqual(new Set([spanKey(ids(3).traceId, ids(3).spanId)]));
  });
});
