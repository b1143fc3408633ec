/**
 * Issue 19, `scan`: impossible to crash, impossible to fool. Each test reproduces one reported
 * failure (it failed before the fix: the figure is in the test's comment) and checks the fix.
 */
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LoopDetection } from '../../src/index.js';
import { agentTrace, tracesData, type OtlpSpan } from '../support/otlp.js';
import { cli, ensureBuilt, exportLine, FIXTURES, generatedStream, jsonLines, linesStream, rootSpan, runBin, STACK_TRACE, toolSpan } from './support/cli.js';

const temp = (): string => mkdtempSync(join(tmpdir(), 'loopwatch-harden-'));
const line = (spans: OtlpSpan[]): string => `${JSON.stringify(tracesData(spans))}\n`;
const MB = 1024 * 1024;

beforeAll(() => ensureBuilt(), 120_000);

describe('huge input ends in a clear error with bounded memory, never a crash', () => {
  it('one 1 GB line (a generated stream on stdin) stops at the 256 MB limit: exit 2, a message, no stack trace', { timeout: 60_000 }, async () => {
    // Before: readline grew one string until V8 threw an uncaught RangeError ("Invalid string
    // length"), printed a stack trace and exited 1 ("loops found"), at 625 MB RSS.
    const input = generatedStream('{"resourceSpans":[', '{"scopeSpans":[]},', 1024 * MB, '{}]}\n');
    const r = await runBin(['scan', '-'], { stdin: input.stream });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('<stdin>:1: line longer than 256 MB');
    expect(r.stderr).not.toMatch(STACK_TRACE);
    // it stopped reading at the limit instead of reading the whole gigabyte
    expect(input.pulled()).toBeLessThan(400 * MB);
    expect(r.maxRssMb).toBeLessThan(600);
  });

  it('a 1 GB file of zero bytes (sparse; what scan /dev/zero reads) is refused at its first bytes', { timeout: 30_000 }, async () => {
    // Before: the same RangeError after reading 512 MB of zeros, exit 1, 590 MB RSS.
    const file = join(temp(), 'zeros.jsonl');
    writeFileSync(file, '');
    truncateSync(file, 1024 * MB);
    const r = await runBin(['scan', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('zeros.jsonl: not OTLP: a zero-length protobuf message at byte 0');
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(r.maxRssMb).toBeLessThan(200);
    if (existsSync('/dev/zero')) {
      const dev = await runBin(['scan', '/dev/zero']);
      expect([dev.code, dev.stderr.includes('/dev/zero: not OTLP')]).toEqual([2, true]);
    }
  });

  it('one trace of 200 000 tool calls is scanned, and a loop at its end is found', { timeout: 60_000 }, async () => {
    // Before: "Maximum call stack size exceeded" (Math.min over a spread of every call), exit 2, no result.
    const calls = 200_000;
    const perLine = 1_000;
    const input = linesStream((i) => {
      if (i < calls / perLine) {
        return exportLine(Array.from({ length: perLine }, (_, k) => {
          const n = i * perLine + k;
          return toolSpan(7, n, 1_000_000 + n * 10, 'lookup', `{"city":"c${n}"}`, `"weather ${n}"`);
        }));
      }
      if (i === calls / perLine) return exportLine(Array.from({ length: 5 }, (_, k) => toolSpan(7, calls + k, 1_000_000 + (calls + k) * 10, 'lookup', '{"city":"same"}', '"same"')));
      return exportLine([rootSpan(7, 999_000, 1_000_000 + (calls + 10) * 10)]);
    }, calls / perLine + 2);
    const r = await cli(['scan', '--json', '-'], { stdin: input.stream });
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(r.code).toBe(1);
    expect(jsonLines<LoopDetection>(r.stdout).map((d) => [d.level, d.callIndex])).toEqual([
      ['warning', calls + 3],
      ['critical', calls + 5],
    ]);
    expect(r.stderr).toContain(`${(calls + 5).toLocaleString('en-US')} tool calls`);
  });
});

describe('the same spans twice do not make a loop', () => {
  // An honest run: the agent checks a result once more (two identical calls; the rule warns at 3).
  const honest = agentTrace({ label: 'recheck', prompt: 'p', steps: [{ tool: 'search', args: { q: 'x' }, result: 'r' }, { tool: 'search', args: { q: 'x' }, result: 'r' }] });

  it('a batch read twice (an export retry, cat a.jsonl a.jsonl) is deduplicated by span id', async () => {
    // Before: the four copies of two calls were a repeat loop: exit 1 with a warning at call 3.
    const r = await cli(['scan', '--json', '-'], { stdin: line(honest) + line(honest) });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    // root, two model calls, two tool calls
    expect(r.stderr).toContain('loopwatch: warning: 5 spans seen before in the same trace (same span id: an export retried, or a file read twice) were ignored');
    expect(r.stderr).toContain('No loops found (1 trace, 2 tool calls');
    // the same batch in two files (a copy, not a link) is the same spans too
    const dir = temp();
    writeFileSync(join(dir, 'a.jsonl'), line(honest));
    writeFileSync(join(dir, 'b.jsonl'), line(honest));
    expect((await cli(['scan', dir])).code).toBe(0);
  });

  it('control: the same calls made four times (new span ids) are a loop', async () => {
    const four = agentTrace({ label: 'recheck', prompt: 'p', steps: Array.from({ length: 4 }, () => ({ tool: 'search', args: { q: 'x' }, result: 'r' })) });
    const r = await cli(['scan', '--json', '-'], { stdin: line(four) });
    expect(r.code).toBe(1);
    expect(jsonLines<LoopDetection>(r.stdout).map((d) => d.callIndex)).toEqual([3]);
  });

  it('spans of a trace evaluated before (far apart in the input) are said to be late, not silently mixed in', { timeout: 30_000 }, async () => {
    // 26 other traces of 1 000 calls each between the two copies, each call to a tool of its own:
    // no loop in them (the same tool with {"k": k} is one, once its overlapping calls are steps of
    // their own as the processor sees them; a loop there is not what this test is about)
    const others = Array.from({ length: 26 }, (_, i) => exportLine(Array.from({ length: 1_000 }, (_, k) => toolSpan(100 + i, k, 5_000 + k, `t${k}`, `{"k":${k}}`, `"${k}"`))));
    const r = await cli(['scan', '-'], { stdin: [line(honest), ...others.map((l) => `${l}\n`), line(honest)].join('') });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: 5 spans arrived after their trace had been evaluated/);
  });
});

describe('folders: symbolic links are followed, never skipped silently', () => {
  it('a symlinked file inside a scanned folder is scanned', async () => {
    // Before: skipped (Dirent.isFile() is false for a link): exit 0 although the linked run loops.
    const dir = temp();
    symlinkSync(join(FIXTURES, 'looping-support.jsonl'), join(dir, 'linked.jsonl'));
    const r = await cli(['scan', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('in 1 file');
  });

  it('a symlinked folder is walked, a link cycle ends, and a file reached twice is read once', async () => {
    const dir = temp();
    mkdirSync(join(dir, 'real'));
    copyFileSync(join(FIXTURES, 'looping-support.jsonl'), join(dir, 'real', 'run.jsonl'));
    symlinkSync(join(dir, 'real'), join(dir, 'alias'));
    symlinkSync(dir, join(dir, 'real', 'loop'));
    const r = await cli(['scan', '--json', dir]);
    expect(r.code).toBe(1);
    expect(jsonLines(r.stdout)).toHaveLength(2);
    expect(r.stderr).toContain('in 1 file');
    expect(r.stderr).not.toContain('seen before');
  });

  it('a broken link that looks like a trace file is an error that names it', async () => {
    const dir = temp();
    copyFileSync(join(FIXTURES, 'honest-run.json'), join(dir, 'ok.json'));
    symlinkSync(join(dir, 'gone.jsonl'), join(dir, 'dangling.jsonl'));
    const r = await cli(['scan', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(dir, 'dangling.jsonl')}: broken symbolic link`);
    expect(r.stdout).toContain('in what could be read (1 trace');
  });
});

describe('stdin and empty input', () => {
  it('`scan - -` is a usage error: stdin can be read once', async () => {
    // Before: printed nothing and exited 0 (the second read of stdin never settled).
    const r = await cli(['scan', '-', '-'], { stdin: readFileSync(join(FIXTURES, 'looping-support.jsonl'), 'utf8') });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('-: given 2 times; stdin can be read only once');
  });

  it('stdin redirected from a folder is an error, not empty input', async () => {
    // Before: read as empty, "No loops found", exit 0.
    const fd = openSync(temp(), 'r');
    try {
      const r = await runBin(['scan', '-'], { stdin: fd });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('<stdin>: is a folder');
    } finally {
      closeSync(fd);
    }
  });

  it('empty stdin, an empty file and a blank file are errors, not "No loops found"', async () => {
    // Before: "No loops found (0 traces, 0 tool calls, 0 spans in 1 file)", exit 0.
    const empty = await cli(['scan', '-'], { stdin: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('<stdin>: empty input: nothing arrived on stdin');
    expect(empty.stdout).toBe('Nothing scanned: 1 file could not be scanned.\n');
    const dir = temp();
    writeFileSync(join(dir, 'empty.jsonl'), '');
    writeFileSync(join(dir, 'blank.json'), ' \n\r\n\t\n');
    const files = await cli(['scan', join(dir, 'empty.jsonl'), join(dir, 'blank.json')]);
    expect(files.code).toBe(2);
    expect(files.stderr).toContain('empty.jsonl: empty file: no trace data');
    expect(files.stderr).toContain('blank.json: empty file: no trace data');
    expect(files.stdout).not.toContain('No loops found');
  });
});

describe('encodings', () => {
  it('a pretty-printed JSON file with a UTF-8 BOM is read, as JSON Lines with BOMs are', async () => {
    // Before: "bom.json:1:1: invalid JSON: Unexpected token '<the BOM>'", exit 2.
    const dir = temp();
    writeFileSync(join(dir, 'bom.json'), `\uFEFF${readFileSync(join(FIXTURES, 'honest-run.json'), 'utf8')}`);
    const pretty = await cli(['scan', join(dir, 'bom.json')]);
    expect([pretty.code, pretty.stderr]).toEqual([0, '']);
    expect(pretty.stdout).toContain('No loops found (1 trace, 5 tool calls');
    // two BOM-prefixed files concatenated: a BOM at the start of a later line too
    const jsonl = readFileSync(join(FIXTURES, 'looping-support.jsonl'), 'utf8');
    writeFileSync(join(dir, 'boms.jsonl'), `\uFEFF${jsonl}\uFEFF${exportLine([])}\n`);
    expect((await cli(['scan', join(dir, 'boms.jsonl')])).code).toBe(1);
  });

  it('says what a file is when it is compressed or UTF-16', async () => {
    const dir = temp();
    writeFileSync(join(dir, 'a.json'), Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0]));
    writeFileSync(join(dir, 'b.json'), Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0]));
    writeFileSync(join(dir, 'c.json'), Buffer.from('\uFEFF{"resourceSpans":[]}', 'utf16le'));
    const r = await cli(['scan', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('a.json: gzip-compressed: decompress it first');
    expect(r.stderr).toContain('b.json: zstd-compressed');
    expect(r.stderr).toContain('c.json: UTF-16 text: save it as UTF-8');
  });
});

describe('terminal escapes in names are shown, not obeyed', () => {
  const evil = 'search\u001b[2J\u001b[H\nfake line\u009b31m\u202eevil\u0007';
  const prompt = 'tpl\u001b]0;title\u0007';

  it('human output escapes C0, C1, ESC sequences and bidi controls in tool and prompt names', async () => {
    // Before: the ESC [2J (clear screen), the newline (a forged line) and the C1 CSI were printed raw.
    const spans = agentTrace({ label: 'evil', prompt, steps: Array.from({ length: 5 }, () => ({ tool: evil, args: { q: 'x' }, result: 'same' })) });
    const r = await cli(['scan', '-'], { stdin: line(spans) });
    expect(r.code).toBe(1);
    // eslint-disable-next-line no-control-regex -- looking for raw controls is the point
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(r.stdout).toContain('search\\x1b[2J\\x1b[H\\x0afake line\\x9b31m\\u202eevil\\x07');
    expect(r.stdout).toContain('prompt tpl\\x1b]0;title\\x07');
    // header, two detection lines, summary: no forged line
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(4);
  });

  it('--json keeps the exact names (they parse back) with no raw control character in the output', async () => {
    const spans = agentTrace({ label: 'evil', prompt, steps: Array.from({ length: 5 }, () => ({ tool: evil, args: { q: 'x' }, result: 'same' })) });
    const r = await cli(['scan', '--json', '-'], { stdin: line(spans) });
    // eslint-disable-next-line no-control-regex -- looking for raw controls is the point
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(jsonLines<LoopDetection>(r.stdout).map((d) => [d.toolName, d.promptName])).toEqual([
      [evil, prompt],
      [evil, prompt],
    ]);
  });

  it('file names in error messages are escaped too', async () => {
    const dir = temp();
    writeFileSync(join(dir, 'x\u001b[2Jy.jsonl'), 'not json\n');
    const r = await cli(['scan', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('x\\x1b[2Jy.jsonl:1:1: invalid JSON');
    expect(r.stderr).not.toContain('\u001b');
  });
});

describe('no input text on stderr', () => {
  const SECRET = 'sk-live-4f9c1d0e7b';

  it('an invalid JSON line is located and described without quoting it', async () => {
    // Before: "invalid JSON: Unexpected token 'o', "nope-sk-live-..." is not valid JSON" quoted the line.
    const dir = temp();
    writeFileSync(join(dir, 'mid.jsonl'), `${exportLine([])}\n{"resourceSpans":[{"key":"${SECRET}" oops}]}\n`);
    writeFileSync(join(dir, 'first.jsonl'), `nope-${SECRET}\n`);
    const pretty = JSON.stringify(tracesData(agentTrace({ label: 's', steps: [{ tool: 'a', args: { token: SECRET }, result: 'b' }] })), null, 2).split('\n');
    const at = pretty.findIndex((l) => l.includes(SECRET));
    pretty[at] = `${pretty[at]} ${SECRET}`;
    writeFileSync(join(dir, 'pretty.json'), pretty.join('\n'));
    const r = await cli(['scan', join(dir, 'mid.jsonl'), join(dir, 'first.jsonl'), join(dir, 'pretty.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("mid.jsonl:2:47: invalid JSON: expected ',' or '}' after a property value");
    expect(r.stderr).toContain('first.jsonl:1:1: invalid JSON: expected a value');
    expect(r.stderr).toMatch(new RegExp(`pretty\\.json:${at + 1}:\\d+: invalid JSON: expected ',' or '}' after a property value`));
    expect(r.stderr).not.toContain(SECRET);
  });

  it('bad ids and times are described by kind and length, not echoed', async () => {
    const spans = agentTrace({ label: 'ids', steps: [{ tool: 'a', args: {}, result: 'b' }] });
    const badId = spans.map((s) => ({ ...s, traceId: SECRET }));
    const badTime = spans.map((s) => ({ ...s, startTimeUnixNano: SECRET }));
    const r = await cli(['scan', '-'], { stdin: `${line(badId as OtlpSpan[])}` });
    const t = await cli(['scan', '-'], { stdin: `${line(badTime as OtlpSpan[])}` });
    expect(r.stderr).toContain('traceId is neither 32 hex digits nor base64 of 16 bytes (got a string of 18 characters)');
    expect(t.stderr).toContain('startTimeUnixNano must be nanoseconds since the epoch, got a string of 18 characters');
    expect(r.stderr + t.stderr).not.toContain(SECRET);
  });
});

describe('configuration files', () => {
  it('a YAML alias bomb in --config is refused naming the file', async () => {
    // Before: "loopwatch: Excessive alias count indicates a resource exhaustion attack", no file.
    const dir = temp();
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (const [name, prev] of [['b', 'a'], ['c', 'b'], ['d', 'c'], ['e', 'd'], ['f', 'e']]) levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    writeFileSync(join(dir, 'bomb.yaml'), `${levels.join('\n')}\n`);
    const r = await cli(['scan', '--config', join(dir, 'bomb.yaml'), join(FIXTURES, 'honest-run.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(dir, 'bomb.yaml')}: not a usable configuration: Excessive alias count`);
  });
});

describe('help', () => {
  it('--help lists the exit codes', async () => {
    const r = await cli(['scan', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Exit codes:\n\s+0\s+no loop found[^\n]*\n\s+1\s+loops found\n\s+2\s+bad input or usage/);
    expect((await cli(['--help'])).stdout).toContain('Exit codes: loopwatch scan --help lists them');
  });
});
