/** The packaged `loopwatch serve` command: the contract's flags, usage errors, and a SIGTERM that forwards what is held. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../e2e/support/ports.js';
import { FakeDownstream } from '../serve/downstream.js';
import { agentTrace, tracesData } from '../support/otlp.js';
import { LIMITS } from '../../src/serve/limits.js';
import { BIN, ensureBuilt } from './support/built-bin.js';

beforeAll(() => ensureBuilt(), 120_000);

const downs: FakeDownstream[] = [];
afterEach(async () => {
  for (const d of downs.splice(0)) await d.stop();
});

describe('loopwatch serve (the CLI)', () => {
  it('offers the contract flags first, then every limit as a flag and an environment variable', () => {
    const help = spawnSync(process.execPath, [BIN, 'serve', '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    const flags = [...help.stdout.matchAll(/^\s+(--[a-z-]+)/gm)].map((m) => m[1]);
    expect(flags.slice(0, 6)).toEqual(['--host', '--port', '--forward', '--forward-protocol', '--trace-wait', '--config']);
    for (const spec of Object.values(LIMITS)) {
      expect(flags).toContain(spec.flag);
      expect(help.stdout.replace(/\s+/g, ' ')).toContain(spec.env);
    }
    for (const flag of ['--spool', '--log-format', '--tls-cert', '--tls-key', '--bearer-token-file', '--require-header']) expect(flags).toContain(flag);
    expect(help.stdout).toContain('127.0.0.1');
    expect(help.stdout).toContain('4319');
    expect(help.stdout).toContain('http/protobuf');
  });

  it('refuses bad usage with exit 2 and a message that says what', () => {
    const cases: [string[], RegExp][] = [
      [['--forward-protocol', 'grpc'], /--forward-protocol/],
      [['--port', '70000'], /--port must be a whole number from 1 to 65535/],
      [['--trace-wait', 'soon'], /--trace-wait must be a duration/],
      [['--forward', 'not a url'], /--forward must be a URL/],
      [['--max-memory', '12'], /--max-memory must be a size such as 256MiB from 16MiB/],
      [['--tls-cert', 'cert.pem'], /--tls-cert and --tls-key go together/],
    ];
    const envCases: [Record<string, string>, RegExp][] = [
      [{ LOOPWATCH_SERVE_MAX_MEMORY: 'lots' }, /LOOPWATCH_SERVE_MAX_MEMORY must be a size/],
    ];
    for (const [env, message] of envCases) {
      const res = spawnSync(process.execPath, [BIN, 'serve'], { encoding: 'utf8', timeout: 10_000, env: { ...process.env, ...env } });
      expect(res.status, JSON.stringify(env)).toBe(2);
      expect(res.stderr).toMatch(message);
    }
    for (const [args, message] of cases) {
      const res = spawnSync(process.execPath, [BIN, 'serve', ...args], { encoding: 'utf8', timeout: 10_000 });
      expect(res.status, args.join(' ')).toBe(2);
      expect(res.stderr).toMatch(message);
    }
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-serve-'));
    const config = join(dir, 'bad.yaml');
    writeFileSync(config, 'thresholds:\n  repeat: lots\n');
    const bad = spawnSync(process.execPath, [BIN, 'serve', '--config', config], { encoding: 'utf8', timeout: 10_000 });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(`${config}:2`);
    // nine starts of the CLI, each about a second of CPU: on a loaded machine several seconds each
  }, 120_000);

  it('serves, and on SIGTERM forwards the traces it holds (with their events) and exits 0', async () => {
    const down = await new FakeDownstream().start();
    downs.push(down);
    const [port] = (await freePorts(1)) as [number];
    const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port), '--forward', down.url, '--forward-protocol', 'http/json', '--trace-wait', '600000'], {
      // a span-count limit of earlier versions: replaced by --max-memory, and said so
      env: { ...process.env, OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none', LOOPWATCH_SERVE_MAX_HELD_SPANS: '1000' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    for (let i = 0; i < 100 && !stderr.includes('listening'); i++) await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    // no root: held for ten minutes unless the shutdown forwards it
    const spans = agentTrace({ label: 'cli', prompt: 'p', steps: Array.from({ length: 5 }, () => ({ tool: 'search', args: { q: 1 }, result: 'same' })) }).slice(0, -1);
    const res = await fetch(`http://127.0.0.1:${port}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(tracesData(spans)) });
    expect(res.status).toBe(200);
    expect(down.spans).toHaveLength(0);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(down.spans).toHaveLength(spans.length);
    expect(down.requests.every((r) => r.contentType === 'application/json')).toBe(true);
    expect(down.spans.flatMap((s) => s.events).filter((e) => e.name === 'loop.detected')).toHaveLength(2);
    expect(stderr).toMatch(/stopped: 10 spans received, 10 forwarded, 0 not forwarded; 1 traces, 5 tool calls, 2 detections/);
    expect(stderr).toMatch(/LOOPWATCH_SERVE_MAX_HELD_SPANS is no longer read: memory is bounded in bytes by --max-memory/);
    // one human line per detection: level, kind, tool, count and where, never the arguments
    expect(stderr.match(/^loopwatch serve: loop: (warning|critical) repeat of search ×\d+ \(trace [0-9a-f]{32}, span [0-9a-f]{16}, call \d(, prompt \w+)?\): /gm), stderr).toHaveLength(2);
  });
});
