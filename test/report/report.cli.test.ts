/** `scan --report` from the command line, and the report's building blocks, without a browser. */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReportCollector } from '../../src/report/index.js';
import { bucketsFor, bucketIndex } from '../../src/report/time.js';
import type { ReplayedTrace } from '../../src/replay/types.js';
import type { LoopDetection } from '../../src/index.js';
import { writeReportFixture } from './support/fixture.js';
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

describe('scan --report: colours, paths and files that failed (issue 18)', () => {
  /** Every coloured mark of the page: which chart or strip, which thing, which colour. */
  function marks(html: string): Array<{ readonly where: string; readonly dimension: string; readonly name: string; readonly color: string }> {
    const out: Array<{ where: string; dimension: string; name: string; color: string }> = [];
    const dimensionOf: Record<string, string> = { 'by-template': 'template', 'by-tool': 'tool', 'by-kind': 'kind' };
    for (const chart of html.matchAll(/<svg class="chart" id="([^"]+)"[\s\S]*?<\/svg>\s*<ul class="legend">([\s\S]*?)<\/ul>/g)) {
      const [whole, id = '', legendItems = ''] = chart;
      for (const bar of whole.matchAll(/<rect class="bar" data-series="([^"]*)"[^>]*fill="([^"]+)"/g)) out.push({ where: `${id} bar`, dimension: dimensionOf[id] ?? id, name: bar[1] ?? '', color: bar[2] ?? '' });
      for (const item of legendItems.matchAll(/<li data-series="([^"]*)"><span class="swatch" style="background:([^"]+)">/g)) out.push({ where: `${id} legend`, dimension: dimensionOf[id] ?? id, name: item[1] ?? '', color: item[2] ?? '' });
    }
    for (const cell of html.matchAll(/<rect class="call[^"]*" data-call="\d+" data-tool="([^"]*)"[^>]*fill="([^"]+)"/g)) out.push({ where: 'strip', dimension: 'tool', name: cell[1] ?? '', color: cell[2] ?? '' });
    for (const item of html.matchAll(/<li data-tool="([^"]*)"><span class="swatch" style="background:([^"]+)">/g)) out.push({ where: 'strip legend', dimension: 'tool', name: item[1] ?? '', color: item[2] ?? '' });
    return out;
  }

  it('gives every thing one colour across all charts and call strips, distinct from other things and from the level colours', async () => {
    const dir = temp();
    const fixture = writeReportFixture(dir);
    const out = join(dir, 'r.html');
    expect((await runCli(['scan', '--report', out, fixture])).code).toBe(1);
    const all = marks(readFileSync(out, 'utf8')).filter((m) => m.name !== 'other');
    expect(new Set(all.map((m) => m.where))).toEqual(new Set(['by-template bar', 'by-template legend', 'by-tool bar', 'by-tool legend', 'by-kind bar', 'by-kind legend', 'strip', 'strip legend']));
    const colorOf = new Map<string, Set<string>>();
    for (const m of all) colorOf.set(`${m.dimension}:${m.name}`, (colorOf.get(`${m.dimension}:${m.name}`) ?? new Set()).add(m.color));
    // one colour per thing, wherever it is drawn
    for (const [thing, colors] of colorOf) expect([thing, [...colors]]).toEqual([thing, [...colors].slice(0, 1)]);
    // no two things share a colour (the fixture has fewer things than the palette has colours)
    const things = [...colorOf].map(([thing, colors]) => [thing, [...colors][0]] as const);
    expect(things.length).toBeGreaterThan(10);
    expect(new Set(things.map(([, c]) => c)).size).toBe(things.length);
    // a tool never takes the colour of a warning or critical marker
    for (const [, color] of things) expect(['#E69F00', '#C0392B']).not.toContain(color);
  });

  it('lists files that could not be scanned (not counted as scanned) and shows no absolute path', async () => {
    const dir = temp();
    writeFileSync(join(dir, 'good.jsonl'), readFileSync(join(FIXTURES, 'looping-support.jsonl')));
    writeFileSync(join(dir, 'broken.jsonl'), '{"resourceSpans": nope}\n');
    writeFileSync(join(dir, 'empty.json'), '');
    const out = join(dir, 'r.html');
    const r = await runCli(['scan', '--report', out, dir]);
    expect(r.code).toBe(2);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('2 files could not be scanned');
    expect(html).toMatch(/<tr data-failed-file="broken\.jsonl"><td><code>broken\.jsonl<\/code><\/td><td>invalid JSON: expected a value \(line 1, column 19\)<\/td><\/tr>/);
    expect(html).toContain('<tr data-failed-file="empty.json">');
    // the header counts the file that was scanned only
    expect(html).toMatch(/spans in 1 file ·/);
    expect(html).not.toContain(dir);
    expect(html).not.toContain(tmpdir());
    expect(html).toContain(`scanned <code>${basename(dir)}</code>`);
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
    // critical stops are runs: 'e' had two criticals and counts once
    expect(r.tracesStopped).toBe(3);
    expect(r.templates.get('unknown')).toMatchObject({ traces: 5, tracesWithLoops: 4, toolCalls: 24, detections: 9, criticals: 3 });
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
