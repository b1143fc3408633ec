/**
 * Where scan's output goes: `| head` (issue 18: no EPIPE stack trace) and a slow reader of
 * `--json` (issue 19: backpressure, memory held flat while the reader is behind).
 */
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, cli, ensureBuilt, exportLine, linesStream, rootSpan, STACK_TRACE, toolSpan } from './support/cli.js';

/** Trace `t` of an endless input: five identical calls (a warning and a critical) and its root. */
const loopingTrace = (t: number): string =>
  exportLine([...Array.from({ length: 5 }, (_, k) => toolSpan(t + 1, k, 1_000 + k * 1_000, 'search', '{"q":"x"}', '"same"')), rootSpan(t + 1, 900, 7_000)]);

beforeAll(() => ensureBuilt(), 120_000);

describe('scan | head', () => {
  it.each([['human output', []], ['--json', ['--json']]])(
    '%s: head exits, scan stops reading an endless input and exits 1 without an EPIPE stack trace',
    { timeout: 30_000 },
    async (_, flags) => {
      // Before: "Error: write EPIPE ... Unhandled 'error' event" with a stack trace (human output).
      const input = linesStream(loopingTrace);
      const shell = spawn('bash', ['-c', `"${process.execPath}" "${BIN}" scan ${flags.join(' ')} - | head -n 3; echo "scan-exit=\${PIPESTATUS[0]}" >&2`], { stdio: ['pipe', 'pipe', 'pipe'] });
      shell.stdin.on('error', () => undefined);
      input.stream.pipe(shell.stdin);
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      shell.stdout.on('data', (c: Buffer) => out.push(c));
      shell.stderr.on('data', (c: Buffer) => err.push(c));
      await new Promise((resolve) => shell.on('close', resolve));
      input.stream.unpipe();
      input.stream.destroy();
      const stderr = Buffer.concat(err).toString();
      expect(Buffer.concat(out).toString().trimEnd().split('\n')).toHaveLength(3);
      expect(stderr).toContain('scan-exit=1');
      expect(stderr).not.toMatch(STACK_TRACE);
      expect(stderr).not.toContain('EPIPE');
    },
  );
});

describe('--json into a slow reader', () => {
  it('stops reading input while the output is full, and resumes when it drains', { timeout: 30_000 }, async () => {
    // Before: the scan wrote on regardless and read the whole input; with a reader that did not
    // keep up, every detection was held in memory (418 MB RSS for 200 000 detections; killed by
    // the heap limit at --max-old-space-size=64 after 4 185 lines).
    const waiting: Array<() => void> = [];
    let flowing = false;
    let written = 0;
    const slow = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _encoding, callback) {
        written += chunk.toString().split('\n').length - 1;
        if (flowing) callback();
        else waiting.push(callback);
      },
    });
    const traces = 20_000;
    const input = linesStream(loopingTrace, traces);
    const run = cli(['scan', '--json', '-'], { stdin: input.stream, stdout: slow });
    for (let i = 0; i < 100 && waiting.length === 0; i++) await sleep(20);
    await sleep(300);
    const pulled = input.pulled();
    await sleep(300);
    // blocked: nothing more was read while the reader was behind
    expect(input.pulled()).toBe(pulled);
    // what was read: about the 20 000 spans a trace lingers for before it is evaluated (10 MB of
    // this input), far from the whole input (60 MB)
    expect(pulled).toBeLessThan(16 * 1024 * 1024);
    expect(pulled).toBeLessThan(traces * loopingTrace(0).length / 3);
    expect(written).toBeLessThan(200);
    flowing = true;
    for (const callback of waiting.splice(0)) callback();
    const r = await run;
    expect(r.code).toBe(1);
    expect(written).toBe(traces * 2);
    expect(r.stderr).toContain(`Found ${(traces * 2).toLocaleString('en-US')} loop detections`);
  });
});
