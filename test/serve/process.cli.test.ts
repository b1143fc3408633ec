/**
 * Issue 28, points 2 and 7, with real processes (the built CLI): SIGTERM drains for the grace
 * period whatever the downstream does and exits 1 with the count; `kill -9` and a restart with
 * the spool loses nothing and counts no detection twice; one log line per detection; the forward
 * target is reported at start with whether it answered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../e2e/support/ports.js';
import { agentTrace, type OtlpSpan } from '../support/otlp.js';
import { BIN, ensureBuilt } from '../cli/support/built-bin.js';
import { FakeDownstream } from './downstream.js';
import { json, loopSpans, rootless, sleep, until } from './support.js';

beforeAll(() => ensureBuilt(), 120_000);

interface ServeProcess {
  readonly child: ChildProcess;
  readonly base: string;
  stderr(): string;
  readonly exited: Promise<{ code: number | null; at: number }>;
  stats(): Promise<Record<string, number>>;
}

const children: ChildProcess[] = [];
const downs: FakeDownstream[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of downs.splice(0)) await d.stop();
});

async function serve(args: string[]): Promise<ServeProcess> {
  const [port] = (await freePorts(1)) as [number];
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port), ...args], {
    env: { ...process.env, OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.on('exit', (code) => resolve({ code, at: performance.now() })));
  const base = `http://127.0.0.1:${port}`;
  // started once it has said whether the forward target answered
  await until(() => /forwarding to .*(answered|did not answer)/.test(stderr) || child.exitCode !== null, 'serve started', 20_000);
  return { child, base, stderr: () => stderr, exited, stats: async () => (await (await fetch(`${base}/livez`)).json()) as Record<string, number> };
}

const post = (base: string, spans: OtlpSpan[]): Promise<Response> => fetch(`${base}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: json(spans) });
const detectionLines = (stderr: string): Record<string, unknown>[] =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'loop.detected');

describe('loopwatch serve as a process', () => {
  it('kill -9 and a restart with --spool: every accepted span is forwarded, and no detection is counted twice', async () => {
    const spool = mkdtempSync(join(tmpdir(), 'loopwatch-spool-'));
    const down = await new FakeDownstream().start();
    downs.push(down);
    await down.stop(); // refused: completed traces wait in the queue
    const args = ['--forward', down.url, '--spool', spool, '--log-format', 'json', '--quiet-after-root', '50', '--trace-wait', '60000'];
    const first = await serve(args);
    expect(first.stderr()).toMatch(/"level":"warn","msg":"forwarding to .*did not answer/);
    const counted = loopSpans('kill-counted'); // complete: evaluated and counted before the kill
    const honest = agentTrace({ label: 'kill-honest', steps: [{ tool: 'a', args: { n: 1 }, result: 1 }, { tool: 'a', args: { n: 2 }, result: 2 }] });
    const held = loopSpans('kill-held'); // its root comes after the restart: held at the kill
    for (const spans of [counted, honest, rootless(held)]) expect((await post(first.base, spans)).status).toBe(200);
    await until(() => detectionLines(first.stderr()).length === 2, 'the first trace evaluated');
    let before = await first.stats();
    for (let i = 0; i < 100 && before.queuedSpans !== counted.length + honest.length; i++) {
      await sleep(50);
      before = await first.stats();
    }
    expect(before).toMatchObject({ detections: 2, queuedSpans: counted.length + honest.length, heldSpans: held.length - 1 });
    // one log line per detection, with the contract's attributes and never the arguments
    expect(detectionLines(first.stderr()).map((l) => [l['loop.level'], l['gen_ai.tool.name'], l.trace_id])).toEqual([
      ['warning', 'search', counted[0]?.traceId],
      ['critical', 'search', counted[0]?.traceId],
    ]);
    expect(first.stderr()).not.toContain('weather');
    first.child.kill('SIGKILL');
    await first.exited;

    await down.start();
    const second = await serve(args);
    expect(second.stderr()).toMatch(/forwarding to .*it answered in \d+ ms/);
    await until(() => down.spans.length >= counted.length + honest.length, 'the queued traces forwarded after the restart', 10_000);
    expect((await post(second.base, held.slice(-1))).status).toBe(200);
    await until(() => down.spans.length >= counted.length + honest.length + held.length, 'everything forwarded', 10_000);
    const all = [...counted, ...honest, ...held];
    expect(new Set(down.spans.map((s) => s.spanId))).toEqual(new Set(all.map((s) => s.spanId)));
    // the replayed trace carries its events again, but only the held trace is counted now
    expect(down.spans.filter((s) => s.traceId === counted[0]?.traceId).flatMap((s) => s.events.filter((e) => e.name === 'loop.detected'))).toHaveLength(2);
    const after = await second.stats();
    expect(after.detections).toBe(2);
    expect(detectionLines(second.stderr()).map((l) => l.trace_id)).toEqual([held[0]?.traceId, held[0]?.traceId]);
    expect(second.stderr()).toMatch(/replayed \d+ spans not forwarded before the restart/);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    // everything settled: the spool is empty
    expect(readdirSync(spool)).toEqual([]);
  }, 90_000);

  it('SIGTERM with the downstream down: answers 503 for the grace period, keeps trying, then exits 1 with the count', async () => {
    const down = await new FakeDownstream().start();
    downs.push(down);
    await down.stop();
    const s = await serve(['--forward', down.url, '--quiet-after-root', '50', '--shutdown-grace', '1500']);
    const spans = [...loopSpans('term-a'), ...rootless(loopSpans('term-b'))];
    expect((await post(s.base, spans)).status).toBe(200);
    const t0 = performance.now();
    s.child.kill('SIGTERM');
    await until(() => s.stderr().includes('SIGTERM'), 'the shutdown began');
    // still listening: new connections get the documented answers, not ECONNREFUSED
    const refused = await post(s.base, loopSpans('term-late'));
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await fetch(`${s.base}/healthz`)).status).toBe(503);
    expect((await fetch(`${s.base}/livez`)).status).toBe(200);
    const end = await s.exited;
    expect(end.code).toBe(1);
    expect(end.at - t0).toBeGreaterThanOrEqual(1_400);
    expect(s.stderr()).toMatch(new RegExp(`stopped: ${spans.length} spans received, 0 forwarded, ${spans.length} not forwarded`));
  }, 60_000);

  it('SIGTERM with a downstream that takes requests and never answers: exits at the end of the grace period', async () => {
    const down = await new FakeDownstream().start();
    downs.push(down);
    down.hang = true;
    const s = await serve(['--forward', down.url, '--quiet-after-root', '50', '--shutdown-grace', '1000']);
    expect((await post(s.base, loopSpans('hang'))).status).toBe(200);
    await sleep(300);
    const t0 = performance.now();
    s.child.kill('SIGTERM');
    const end = await s.exited;
    expect(end.code).toBe(1);
    expect(end.at - t0).toBeLessThan(5_000);
    expect(s.stderr()).toMatch(/stopped: .* \d+ not forwarded/);
  }, 60_000);
});
