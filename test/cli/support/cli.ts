/** Runs `loopwatch` in process (main) or as the packaged bin, and the inputs the CLI tests feed it. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PassThrough, Readable, type Writable } from 'node:stream';
import { main } from '../../../src/cli/main.js';
import { BIN, ROOT } from './built-bin.js';

export { BIN, ensureBuilt, ROOT } from './built-bin.js';
export const FIXTURES = join(ROOT, 'test/fixtures/otlp');

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  /** stdin: text, bytes, or a stream (a generated one for inputs too large to hold). */
  readonly stdin?: string | Uint8Array | Readable;
  readonly env?: Record<string, string>;
  /** Where stdout goes instead of a collecting stream (its text is then not returned). */
  readonly stdout?: Writable;
}

/** `main` with collected stdout and stderr. */
export async function cli(args: readonly string[], options: CliOptions = {}): Promise<CliRun> {
  const stdout = options.stdout ?? new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  if (!options.stdout) stdout.on('data', (c: Buffer) => void out.push(c.toString()));
  stderr.on('data', (c: Buffer) => void err.push(c.toString()));
  const input = options.stdin;
  const stdin = input instanceof Readable ? input : Readable.from(input !== undefined ? [typeof input === 'string' ? input : Buffer.from(input)] : []);
  const code = await main(args, { stdout, stderr, stdin, env: options.env ?? {}, interactive: false });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

export interface BinRun extends CliRun {
  readonly signal: NodeJS.Signals | null;
  /** Peak resident memory of the child (MB), reported by the child itself as it exits. */
  readonly maxRssMb: number | undefined;
}

/** Makes the child print its peak RSS on stderr as it exits (no tool outside Node needed). */
const REPORT_RSS = 'data:text/javascript,process.on("exit",()=>process.stderr.write("\\nloopwatch-test-max-rss-kb="+process.resourceUsage().maxRSS+"\\n"))';
const RSS_LINE = /\n?loopwatch-test-max-rss-kb=(\d+)\n/;

/** The packaged bin as a child process; `stdin` may be a file descriptor (a folder, a device). */
export function runBin(args: readonly string[], options: { readonly stdin?: Readable | number; readonly nodeArgs?: readonly string[] } = {}): Promise<BinRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', REPORT_RSS, ...(options.nodeArgs ?? []), BIN, ...args], {
      stdio: [typeof options.stdin === 'number' ? options.stdin : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    child.stderr?.on('data', (c: Buffer) => err.push(c));
    if (options.stdin instanceof Readable && child.stdin) {
      child.stdin.on('error', () => undefined); // the child may stop reading early
      options.stdin.pipe(child.stdin);
    } else child.stdin?.end();
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const stderr = Buffer.concat(err).toString();
      const rss = RSS_LINE.exec(stderr);
      resolve({ code: code ?? -1, signal, stdout: Buffer.concat(out).toString(), stderr: stderr.replace(RSS_LINE, ''), maxRssMb: rss ? Number(rss[1]) / 1024 : undefined });
    });
  });
}

/** A stack trace or a raw Node.js error report: never acceptable on the CLI's stderr. */
export const STACK_TRACE = /\n\s+at |node:internal|Node\.js v\d|FATAL ERROR|Error: /;

/**
 * A readable stream of `bytes` bytes made by repeating `unit` (after `head`), produced lazily in
 * 1 MB chunks: inputs far larger than the test should hold. `pulled()` says how much was read.
 */
export function generatedStream(head: string, unit: string, bytes: number, tail = ''): { stream: Readable; pulled: () => number } {
  const chunk = Buffer.from(unit.repeat(Math.max(1, Math.floor((1 << 20) / unit.length))));
  let sent = 0;
  const stream = new Readable({
    read() {
      if (sent === 0 && head) {
        sent += head.length;
        this.push(head);
        return;
      }
      if (sent >= bytes) {
        if (tail) this.push(tail);
        this.push(null);
        return;
      }
      sent += chunk.length;
      this.push(chunk);
    },
  });
  return { stream, pulled: () => sent };
}

/** An endless (or `count`-long) stream of JSON lines, one per call of `line(i)`. */
export function linesStream(line: (i: number) => string, count = Number.POSITIVE_INFINITY): { stream: Readable; pulled: () => number } {
  let i = 0;
  let sent = 0;
  const stream = new Readable({
    read() {
      if (i >= count) {
        this.push(null);
        return;
      }
      const text = `${line(i++)}\n`;
      sent += text.length;
      this.push(text);
    },
  });
  return { stream, pulled: () => sent };
}

export const jsonLines = <T = Record<string, unknown>>(text: string): T[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');
const nanos = (ms: number): string => `${BigInt(Math.round(ms * 1000)) * 1000n}`;
const str = (key: string, value: string): { key: string; value: { stringValue: string } } => ({ key, value: { stringValue: value } });

/** A gen_ai execute_tool span in OTLP/JSON form, cheap enough to make by the hundred thousand. */
export function toolSpan(trace: number, span: number, startMs: number, tool: string, args: string, result: string): object {
  return {
    traceId: hex(trace, 32),
    spanId: hex(span + 2, 16),
    parentSpanId: hex(1, 16),
    name: `execute_tool ${tool}`,
    kind: 1,
    startTimeUnixNano: nanos(startMs),
    endTimeUnixNano: nanos(startMs + 5),
    attributes: [str('gen_ai.operation.name', 'execute_tool'), str('gen_ai.tool.name', tool), str('gen_ai.tool.call.arguments', args), str('gen_ai.tool.call.result', result)],
  };
}

/** The root span of trace `trace` (span id 1), covering [startMs, endMs]. */
export function rootSpan(trace: number, startMs: number, endMs: number): object {
  return { traceId: hex(trace, 32), spanId: hex(1, 16), name: 'invoke_agent', kind: 1, startTimeUnixNano: nanos(startMs), endTimeUnixNano: nanos(endMs), attributes: [str('gen_ai.operation.name', 'invoke_agent')] };
}

/** One export request line holding `spans`. */
export const exportLine = (spans: readonly object[]): string => JSON.stringify({ resourceSpans: [{ resource: { attributes: [str('service.name', 'agent')] }, scopeSpans: [{ scope: { name: 'agent' }, spans }] }] });
