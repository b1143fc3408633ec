import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { LoopDetection } from '../../src/index.js';
import { agentTrace, hexId, tracesData } from '../support/otlp.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/otlp');

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (c: Buffer) => out.push(c.toString()));
  stderr.on('data', (c: Buffer) => err.push(c.toString()));
  const code = await main(args, {
    stdout,
    stderr,
    stdin: Readable.from(options.stdin !== undefined ? [options.stdin] : []),
    env: options.env ?? {},
    interactive: false,
  });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

const jsonLines = (text: string): LoopDetection[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LoopDetection);

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'loopwatch-scan-'));
}

describe('loopwatch scan', () => {
  it('exits 0 and says so when there is no loop (a pretty-printed single document)', async () => {
    const r = await cli(['scan', join(FIXTURES, 'honest-run.json')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('No loops found (1 trace, 5 tool calls');
    expect(r.stderr).toBe('');
  });

  it('exits 1 and prints each looping trace with its prompt, call indexes and levels', async () => {
    const r = await cli(['scan', join(FIXTURES, 'looping-support.jsonl')]);
    expect(r.code).toBe(1);
    const loopingTrace = hexId('trace:support-loop', 16);
    expect(r.stdout).toContain(`trace ${loopingTrace}  prompt support-v2  (6 tool calls)`);
    expect(r.stdout).toMatch(/call 3\s+warning\s+repeat\s+search/);
    expect(r.stdout).toMatch(/call 5\s+CRITICAL\s+repeat\s+search/);
    expect(r.stdout).not.toContain(hexId('trace:billing-honest', 16));
    expect(r.stdout).toContain('in 1 of 2 traces');
  });

  it('--json writes one LoopDetection object per line on stdout, summary on stderr', async () => {
    const r = await cli(['scan', '--json', join(FIXTURES, 'looping-support.jsonl'), join(FIXTURES, 'kinds.jsonl')]);
    expect(r.code).toBe(1);
    const detections = jsonLines(r.stdout);
    expect(detections.map((d) => [d.promptName, d.kind, d.level, d.callIndex])).toEqual([
      ['support-v2', 'repeat', 'warning', 3],
      ['support-v2', 'repeat', 'critical', 5],
      ['browse-v1', 'cycle', 'warning', 6],
      ['browse-v1', 'cycle', 'critical', 8],
      ['fetch-v1', 'error_pattern', 'warning', 3],
      ['fetch-v1', 'error_pattern', 'critical', 5],
    ]);
    for (const d of detections) {
      for (const key of ['kind', 'level', 'toolName', 'count', 'callIndex', 'traceId', 'spanId', 'fingerprint', 'message'] as const) {
        expect(d[key], key).toBeDefined();
      }
      expect(d.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(d.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(d.fingerprint).toMatch(/^[0-9a-f]{14}$/);
    }
    // the span the detection points at is the tool span that completed the evidence
    expect(detections[0]?.spanId).toBe(hexId('tool:support-loop:2:0', 8));
    expect(detections[2]).toMatchObject({ cycleLength: 2, cycleTools: ['open_page', 'open_page'] });
    expect(detections[2]).not.toHaveProperty('agentName');
    expect(r.stderr).toContain('Found 6 loop detections');
  });

  it('reads structured (kvlist) arguments as SDK 3.x exports them', async () => {
    const r = await cli(['scan', '--json', join(FIXTURES, 'kinds.jsonl')]);
    expect(jsonLines(r.stdout).filter((d) => d.kind === 'cycle')).toHaveLength(2);
  });

  it('scans folders recursively and reads stdin with -', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'nested'));
    copyFileSync(join(FIXTURES, 'looping-support.jsonl'), join(dir, 'nested', 'a.jsonl'));
    copyFileSync(join(FIXTURES, 'honest-run.json'), join(dir, 'b.json'));
    writeFileSync(join(dir, 'notes.txt'), 'not a trace file');
    const fromDir = await cli(['scan', dir]);
    expect(fromDir.code).toBe(1);
    expect(fromDir.stdout).toContain('in 2 files');

    const fromStdin = await cli(['scan', '--json', '-'], { stdin: readFileSync(join(FIXTURES, 'looping-support.jsonl'), 'utf8') });
    expect(fromStdin.code).toBe(1);
    expect(jsonLines(fromStdin.stdout)).toHaveLength(2);
  });

  it('exit 2 with file and line for invalid JSON, non-OTLP objects and bad ids', async () => {
    const bad = join(FIXTURES, 'bad');
    const invalid = await cli(['scan', join(bad, 'invalid-line.jsonl')]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/invalid-line\.jsonl:3:\d+: invalid JSON/);
    const notOtlp = await cli(['scan', join(bad, 'not-otlp.json')]);
    expect(notOtlp.code).toBe(2);
    expect(notOtlp.stderr).toContain('not-otlp.json:1: expected OTLP/JSON ({"resourceSpans":[...]}), a Tempo trace');
    const badId = await cli(['scan', join(bad, 'bad-id.jsonl')]);
    // what is wrong, never the value itself (input text stays off stderr)
    expect(badId.stderr).toContain('bad-id.jsonl:1: traceId is neither 32 hex digits nor base64 of 16 bytes (got a string of 14 characters)');
    expect(badId.stderr).not.toContain('not-a-trace-id');
    // the readable files are still scanned, and a bad file wins over "loops found"
    const mixed = await cli(['scan', join(FIXTURES, 'looping-support.jsonl'), join(bad, 'not-otlp.json')]);
    expect(mixed.code).toBe(2);
    expect(mixed.stdout).toContain('CRITICAL');
  });

  it('names the line of a syntax error deep inside a pretty-printed document', async () => {
    const dir = tempDir();
    const text = JSON.stringify(tracesData(agentTrace({ label: 'x', steps: [{ tool: 'a', args: {}, result: 'b' }] })), null, 2).split('\n');
    text[17] = `${text[17]},,`; // corrupt line 18
    writeFileSync(join(dir, 'broken.json'), text.join('\n'));
    const r = await cli(['scan', join(dir, 'broken.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/broken\.json:18:\d+: invalid JSON/);
  });

  it('usage errors exit 2: no path, missing path, unknown option, unknown command', async () => {
    expect((await cli(['scan'])).code).toBe(2);
    const missing = await cli(['scan', '/nonexistent/traces.json']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('/nonexistent/traces.json: no such file or folder');
    expect((await cli(['scan', '--frobnicate', 'x'])).code).toBe(2);
    expect((await cli(['frobnicate'])).code).toBe(2);
    expect((await cli(['scan', '--fail-on', 'sometimes', 'x'])).code).toBe(2);
    const help = await cli(['scan', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--json');
  });

  it('--config changes thresholds; a bad config names file, line and key', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'strict.yaml'), 'thresholds:\n  repeat:\n    warning: 2\n    critical: 3\n');
    const strict = await cli(['scan', '--json', '--config', join(dir, 'strict.yaml'), join(FIXTURES, 'looping-support.jsonl')]);
    expect(jsonLines(strict.stdout).map((d) => [d.level, d.callIndex])).toEqual([
      ['warning', 2],
      ['critical', 3],
    ]);
    writeFileSync(join(dir, 'bad.yaml'), 'mode: enforce\nthresholds:\n  repeat:\n    warning: 6\n    critical: 4\n  repaet:\n    warning: 1\ntools:\n  search:\n    role: pollster\n');
    const bad = await cli(['scan', '--config', join(dir, 'bad.yaml'), join(FIXTURES, 'honest-run.json')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bad.yaml:3: thresholds.repeat: warning (6) must not be above critical (4)');
    expect(bad.stderr).toContain('bad.yaml:6: thresholds.repaet: unknown key');
    expect(bad.stderr).toContain('bad.yaml:10: tools.search.role: expected one of normal, poller, wait, writer, exempt, got "pollster"');
    writeFileSync(join(dir, 'syntax.yaml'), 'thresholds:\n  repeat: [1,\n');
    const syntax = await cli(['scan', '--config', join(dir, 'syntax.yaml'), join(FIXTURES, 'honest-run.json')]);
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toMatch(/syntax\.yaml:\d+:\d+: /);
  });

  it('--fail-on critical ignores warnings for the exit code', async () => {
    const dir = tempDir();
    const spans = agentTrace({ label: 'warn-only', steps: Array.from({ length: 3 }, () => ({ tool: 'search', args: { q: 'x' }, result: 'y' })) });
    writeFileSync(join(dir, 't.jsonl'), `${JSON.stringify(tracesData(spans))}\n`);
    expect((await cli(['scan', join(dir, 't.jsonl')])).code).toBe(1);
    expect((await cli(['scan', '--fail-on', 'critical', join(dir, 't.jsonl')])).code).toBe(0);
  });

  it('parallel calls (overlapping, same parent) are one batch; the same calls in sequence are a loop', async () => {
    const dir = tempDir();
    const read = { tool: 'read_file', args: { path: 'a.ts' }, result: 'A' };
    const parallel = agentTrace({ label: 'par', steps: [[read, read, read, read, read]] });
    const sequential = agentTrace({ label: 'seq', steps: [read, read, read, read, read] });
    writeFileSync(join(dir, 'p.jsonl'), `${JSON.stringify(tracesData(parallel))}\n`);
    writeFileSync(join(dir, 's.jsonl'), `${JSON.stringify(tracesData(sequential))}\n`);
    expect((await cli(['scan', join(dir, 'p.jsonl')])).code).toBe(0);
    expect(jsonLines((await cli(['scan', '--json', join(dir, 's.jsonl')])).stdout).map((d) => d.level)).toEqual(['warning', 'critical']);
  });

  it('numbers calls by start time even when they end in another order, and splits traces across lines', async () => {
    const dir = tempDir();
    const spans = agentTrace({
      label: 'order',
      steps: [
        [
          { tool: 'slow_lookup', args: { id: 1 }, result: 'r' },
          { tool: 'fast_lookup', args: { id: 2 }, result: 'q' },
        ],
        ...Array.from({ length: 4 }, () => ({ tool: 'search', args: { q: 'z' }, result: 'same' })),
      ],
    });
    // one span per line, as a simple exporter would write it
    writeFileSync(join(dir, 'order.jsonl'), spans.map((s) => JSON.stringify(tracesData([s]))).join('\n'));
    const detections = jsonLines((await cli(['scan', '--json', join(dir, 'order.jsonl')])).stdout);
    expect(detections[0]).toMatchObject({ toolName: 'search', level: 'warning', callIndex: 5 });
  });

  it('prints progress on stderr for large inputs', async () => {
    const dir = tempDir();
    const lines: string[] = [];
    for (let t = 0; t < 400; t++) {
      lines.push(JSON.stringify(tracesData(agentTrace({ label: `bulk-${t}`, steps: Array.from({ length: 4 }, (_, i) => ({ tool: 'lookup', args: { id: i }, result: { value: `v${i}`, padding: 'x'.repeat(600) } })) }))));
    }
    writeFileSync(join(dir, 'bulk.jsonl'), lines.join('\n'));
    const quiet = await cli(['scan', join(dir, 'bulk.jsonl')]);
    expect(quiet.stderr).toBe('');
    const loud = await cli(['scan', join(dir, 'bulk.jsonl')], { env: { LOOPWATCH_PROGRESS_MIN_BYTES: '1000' } });
    expect(loud.code).toBe(0);
    expect(loud.stderr).toMatch(/loopwatch: read \d+(\.\d)? (KB|MB) \(\d+%\), [\d,]+ spans/);
    expect(loud.stdout).toContain('No loops found (400 traces, 1,600 tool calls');
  });
});
