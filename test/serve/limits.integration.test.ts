/** Issue 28, Deliver 4: every limit is a flag and an environment variable, parsed with units, and docs/serve.md's table says the same. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, formatLimit, LIMITS, parseLimit, resolveLimits } from '../../src/serve/limits.js';
import { json, loopSpans, postJson, startServe, until } from './support.js';

describe('serve limits', () => {
  it('parse sizes and durations with units, refuse what is out of range naming the flag or variable', () => {
    expect(parseLimit(LIMITS.maxMemory, '512MiB', '--max-memory')).toBe(512 * 1024 * 1024);
    expect(parseLimit(LIMITS.maxMemory, '1g', '--max-memory')).toBe(1024 ** 3);
    expect(parseLimit(LIMITS.maxBody, '4194304', '--max-body')).toBe(4 * 1024 * 1024);
    expect(parseLimit(LIMITS.forwardTimeout, '45s', '--forward-timeout')).toBe(45_000);
    expect(parseLimit(LIMITS.shutdownGrace, '2m', '--shutdown-grace')).toBe(120_000);
    expect(parseLimit(LIMITS.retainTraces, '0', '--retain-traces')).toBe(0);
    expect(() => parseLimit(LIMITS.maxMemory, '1MiB', '--max-memory')).toThrow(/--max-memory must be a size such as 256MiB from 16MiB to 64GiB, got "1MiB"/);
    expect(() => parseLimit(LIMITS.idleTimeout, 'soon', 'LOOPWATCH_SERVE_IDLE_TIMEOUT_MS')).toThrow(/LOOPWATCH_SERVE_IDLE_TIMEOUT_MS must be a duration/);
    expect(() => parseLimit(LIMITS.maxConnections, '10k', '--max-connections')).toThrow(/a whole number/);
  });

  it('take a flag over its variable over the default', () => {
    const limits = resolveLimits({ forwardTimeout: 5_000 }, { LOOPWATCH_SERVE_FORWARD_TIMEOUT_MS: '9000', LOOPWATCH_SERVE_MAX_MEMORY: '1GiB', LOOPWATCH_SERVE_IDLE_TIMEOUT_MS: '' });
    expect(limits.forwardTimeout).toBe(5_000);
    expect(limits.maxMemory).toBe(1024 ** 3);
    expect(limits.idleTimeout).toBe(DEFAULT_LIMITS.idleTimeout);
    // a quiet period longer than the trace wait is the trace wait
    expect(resolveLimits({ traceWait: 500 }, {}).quietAfterRoot).toBe(500);
  });

  it("docs/serve.md's table lists every limit with its flag, variable and default", () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/serve.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| [^|]+ \| `(--[a-z-]+)` \| `(LOOPWATCH_SERVE_[A-Z_]+)` \| ([^|]+) \|$/gm)].map((m) => [m[1], m[2], (m[3] ?? '').trim()]);
    expect(rows).toEqual(Object.values(LIMITS).map((spec) => [spec.flag, spec.env, formatLimit(spec.unit, spec.default)]));
  });

  it("serve's own metrics: memory by state against its limit, spans by outcome, traces cut, connections", async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const { base, server } = await startServe({ meterProvider, spoolDir: mkdtempSync(join(tmpdir(), 'loopwatch-spool-')), limits: { maxMemory: 1024 * 1024 } });
    const spans = loopSpans('metrics');
    expect((await postJson(base, json(spans))).status).toBe(200);
    await until(() => server.stats.forwardedSpans === spans.length, 'forwarded');
    await reader.forceFlush();
    const points: Record<string, number> = {};
    for (const sm of exporter.getMetrics().at(-1)?.scopeMetrics ?? []) {
      for (const m of sm.metrics) {
        if (!m.descriptor.name.startsWith('loopwatch.serve.')) continue;
        for (const p of m.dataPoints) points[`${m.descriptor.name}${Object.values(p.attributes).map((v) => `:${String(v)}`).join('')}`] = p.value as number;
      }
    }
    expect(points).toMatchObject({
      'loopwatch.serve.memory.limit': 1024 * 1024,
      'loopwatch.serve.memory.usage:held': 0,
      'loopwatch.serve.memory.usage:queued': 0,
      'loopwatch.serve.spans:received': spans.length,
      'loopwatch.serve.spans:forwarded': spans.length,
      'loopwatch.serve.spans:dropped': 0,
      'loopwatch.serve.traces.cut:bound': 0,
      'loopwatch.serve.traces.cut:cut': 0,
    });
    expect(points['loopwatch.serve.memory.usage:retained']).toBeGreaterThan(0);
    // the request is in the spool until its spans are written down as settled (the next metrics export)
    expect(points['loopwatch.serve.spool.usage']).toBeGreaterThan(0);
    expect(points['loopwatch.serve.connections']).toBeGreaterThanOrEqual(0);
    await meterProvider.shutdown();
  });
});
