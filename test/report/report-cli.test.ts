/** `scan --report` from the command line, and the report's building blocks, without a browser. */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReportCollector } from '../../src/cli/report/index.js';
import { bucketsFor, bucketIndex } from '../../src/cli/report/time.js';
import type { ReplayedTrace } from '../../src/traces/trace-replay.js';
import type { LoopDetection } from '../../src/index.js';
import { runCli } from './support/render.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/otlp');
const temp = (): string => mkdtempSync(join(tmpdir(), 'loopwatch-report-cli-'));

describe('scan --report', () => {
  it('keeps --json output pure: detections on stdout, the report note on stderr', async () => {
    const out = join(temp(), 'r.html');
    const r = await runCli(['scan', '--json', '--report', out, join(FIXTURES, 'kinds.jsonl')]);
    expect(r.code).toBe(1);
    const lines = r.stdout.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(() => JSON.parse(l) as unknown).not.toThrow();
    expect(r.stderr).toContain(`report written to ${out}`);
    expect(readFileSync(out, 'utf8')).toContain('data-chart="by-kind"');
  });

  it('says there are no loops for honest traces, and exits 0', async () => {
    const out = join(temp(), 'r.html');
    const r = await runCli(['scan', '--report', out, join(FIXTURES, 'honest-run.json')]);
    expect(r.code).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('No loops found');
    expect(html).not.toContain('<svg');
  });

  it('exits 2 with the path when the report cannot be written', async () => {
    const out = join(temp(), 'missing-dir', 'r.html');
    const r = await runCli(['scan', '--report', out, join(FIXTURES, 'kinds.jsonl')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`cannot write the report to ${out}`);
    expect(existsSync(out)).toBe(false);
  });
});

function trace(id: string, criticals: number, warnings: number, calls: number): ReplayedTrace {
  const detection = (level: LoopDetection['level'], i: number): LoopDetection => ({
    kind: 'repeat',
    level,
    toolName: 'search',
    count: 3,
    callIndex: i + 1,
    traceId: id,
    spanId: `s${i}`,
    fingerprint: 'f',
    message: 'm',
    rule: 'identical_calls',
    threshold: 3,
    evidence: 'arguments+result',
    mode: 'enforce',
    evidenceStartTime: 1_000 + i,
    evidenceCalls: 3,
  });
  const detections = [...Array.from({ length: warnings }, (_, i) => detection('warning', i)), ...Array.from({ length: criticals }, (_, i) => detection('critical', warnings + i))];
  return {
    traceId: id,
    toolCalls: calls,
    detections,
    detectionTimes: detections.map((_, i) => 1_000 + i),
    calls: Array.from({ length: calls }, (_, i) => ({ toolName: 'search', callIndex: i + 1, startTime: 100 * i, endTime: 100 * i + 50, ok: true, spanId: `s${i}`, promptName: undefined })),
    promptName: undefined,
    startTime: 0,
    payloads: [],
    continued: false,
  };
}

describe('ReportCollector', () => {
  it('keeps only the worst traces: most critical stops, then detections, then tool calls', () => {
    const c = new ReportCollector(2);
    for (const t of [trace('a', 0, 3, 9), trace('b', 1, 1, 4), trace('c', 1, 1, 6), trace('d', 0, 0, 3), trace('e', 2, 0, 2)]) c.add(t);
    const r = c.result();
    expect(r.worst.map((w) => w.traceId)).toEqual(['e', 'c']);
    expect(r.traces).toBe(5);
    expect(r.tracesWithLoops).toBe(4);
    expect(r.detections.map((d) => d.time)).toEqual([...r.detections.map((d) => d.time)].sort((x, y) => x - y));
    expect(r.templates.get('unknown')).toMatchObject({ traces: 5, tracesWithLoops: 4, toolCalls: 24, detections: 9, criticals: 4 });
  });
});

describe('report time buckets', () => {
  it.each([
    [0, 40 * 60_000, 60_000],
    [0, 3 * 3_600_000, 5 * 60_000],
    [Date.parse('2026-11-21T08:07:00Z'), Date.parse('2026-11-23T08:00:00Z'), 3 * 3_600_000],
  ])('split %i..%i into round, aligned buckets of %i ms, at most 48', (from, to, size) => {
    const b = bucketsFor(from, to);
    expect(b.size).toBe(size);
    expect(b.starts.length).toBeLessThanOrEqual(48);
    expect((b.starts[0] ?? -1) % size).toBe(0);
    expect(bucketIndex(b, from)).toBe(0);
    expect(bucketIndex(b, to)).toBe(b.starts.length - 1);
  });
});
