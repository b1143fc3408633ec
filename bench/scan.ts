import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bytes, type Figure } from './support/report.js';

/**
 * `loopwatch scan` on generated OTLP/JSON Lines (as the collector's file exporter writes: one
 * export request a line) of two sizes, four times apart: throughput in MB/s and peak resident
 * memory, read by the scanning process itself at exit. Memory is flat when the larger input
 * needs no more than the smaller one (JSON Lines are streamed and traces are evaluated as they
 * complete).
 */

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'cli', 'dist', 'cli.js');

/** Peak RSS growth from the small input to the large one still counted as flat. */
export const FLAT_TOLERANCE = 1.25;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0').slice(-width);
}

const attr = (key: string, value: string | number): string =>
  typeof value === 'number' ? `{"key":${JSON.stringify(key)},"value":{"intValue":"${value}"}}` : `{"key":${JSON.stringify(key)},"value":{"stringValue":${JSON.stringify(value)}}}`;

function span(traceId: string, spanId: string, parent: string | undefined, name: string, startMs: number, endMs: number, attrs: string[]): string {
  return `{"traceId":"${traceId}","spanId":"${spanId}",${parent ? `"parentSpanId":"${parent}",` : ''}"name":${JSON.stringify(name)},"kind":1,"startTimeUnixNano":"${startMs}000000","endTimeUnixNano":"${endMs}000000","attributes":[${attrs.join(',')}],"status":{}}`;
}

/**
 * One agent run as the spans an exporter writes, in end order: per step a chat span and a tool
 * call (arguments and result as JSON strings), the root last. One run in eight loops (the same
 * search again and again), the rest is honest work.
 */
function run(i: number): string[] {
  const traceId = hex(i * 2654435761 + 1, 16) + hex(i + 7, 16);
  const root = hex(i * 40503 + 11, 16);
  const t0 = 1_795_000_000_000 + i * 50;
  const looping = i % 8 === 0;
  const spans: string[] = [];
  let t = t0;
  let s = 0;
  for (let step = 0; step < 6; step++) {
    const chatId = hex(i * 977 + s++ * 131 + 3, 16);
    spans.push(span(traceId, chatId, root, 'chat gpt-4.1-mini', t, t + 700, [attr('gen_ai.operation.name', 'chat'), attr('gen_ai.request.model', 'gpt-4.1-mini'), attr('gen_ai.usage.input_tokens', 1200 + step)]));
    t += 701;
    const toolId = hex(i * 977 + s++ * 131 + 5, 16);
    const args = looping ? { query: 'order 1234 status', limit: 10 } : { query: `order ${i}-${step} status`, limit: 10, filters: { region: 'eu-west' } };
    const result = looping
      ? { orders: [], note: 'no order matches the query' }
      : { orders: [{ id: `o-${i}-${step}`, status: 'shipped', items: 3, total: 42.5 + step }], note: `found 1 order for customer ${i}` };
    spans.push(
      span(traceId, toolId, root, 'execute_tool search_orders', t, t + 40, [
        attr('gen_ai.operation.name', 'execute_tool'),
        attr('gen_ai.tool.name', 'search_orders'),
        attr('gen_ai.tool.call.id', `call_${i}_${step}`),
        attr('gen_ai.tool.call.arguments', JSON.stringify(args)),
        attr('gen_ai.tool.call.result', JSON.stringify(result)),
      ]),
    );
    t += 41;
  }
  spans.push(span(traceId, root, undefined, 'invoke_agent support-bot', t0 - 1, t + 1, [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', 'support-bot'), attr('gen_ai.prompt.name', `support-v${i % 3}`)]));
  return spans;
}

const line = (spans: string[]): string =>
  `{"resourceSpans":[{"resource":{"attributes":[${attr('service.name', 'agent-worker')}]},"scopeSpans":[{"scope":{"name":"agent"},"spans":[${spans.join(',')}]}]}]}\n`;

/** Writes about `targetBytes` of JSON Lines, runs interleaved two at a time, 8 spans a line. */
async function generate(path: string, targetBytes: number): Promise<number> {
  const out = createWriteStream(path);
  let written = 0;
  let pending: string[] = [];
  for (let i = 0; written < targetBytes; i += 2) {
    const a = run(i);
    const b = run(i + 1);
    for (let k = 0; k < Math.max(a.length, b.length); k++) {
      if (a[k]) pending.push(a[k] as string);
      if (b[k]) pending.push(b[k] as string);
      if (pending.length >= 8) {
        const text = line(pending);
        pending = [];
        written += text.length;
        if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      }
    }
  }
  if (pending.length > 0) out.write(line(pending));
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return statSync(path).size;
}

interface ScanRun {
  readonly seconds: number;
  readonly maxRss: number;
  readonly exitCode: number;
  readonly detections: number;
}

async function scan(file: string, dir: string): Promise<ScanRun> {
  // The scanning process reports its own peak RSS when it exits.
  const hook = join(dir, 'max-rss.cjs');
  const rssFile = join(dir, `rss-${Date.now()}.txt`);
  writeFileSync(hook, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(rssFile)}, String(process.resourceUsage().maxRSS * 1024)));\n`);
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, ['--require', hook, CLI, 'scan', '--json', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let detections = 0;
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    for (const b of chunk) if (b === 10) detections++;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 4096) stderr += chunk.toString();
  });
  const exitCode = await new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (exitCode !== 0 && exitCode !== 1) throw new Error(`loopwatch scan exited ${exitCode}: ${stderr}`);
  return { seconds, maxRss: Number(readFileSync(rssFile, 'utf8')), exitCode, detections };
}

export async function scanFigures(options: { quick: boolean }): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'loopwatch-bench-'));
  try {
    const small = options.quick ? 2 << 20 : 100 << 20;
    const large = small * 4;
    const files = [
      { bytes: await generate(join(dir, 'small.jsonl'), small), path: join(dir, 'small.jsonl') },
      { bytes: await generate(join(dir, 'large.jsonl'), large), path: join(dir, 'large.jsonl') },
    ];
    const runs = [];
    for (const f of files) runs.push({ ...f, ...(await scan(f.path, dir)) });
    const [a, b] = runs;
    if (!a || !b) return [];
    const figures: Figure[] = runs.map((r) => ({
      section: 'scan',
      name: `loopwatch scan --json, ${bytes(r.bytes)} of OTLP/JSON Lines`,
      value: `${(r.bytes / 1e6 / r.seconds).toFixed(1)} MB/s, peak RSS ${bytes(r.maxRss)}`,
      note: `${r.detections.toLocaleString('en')} detections, exit ${r.exitCode}`,
    }));
    const growth = b.maxRss / a.maxRss;
    figures.push({
      section: 'scan',
      name: `scan peak memory, ${bytes(b.bytes)} vs ${bytes(a.bytes)} input`,
      value: `${growth.toFixed(2)}× (${bytes(b.maxRss)} vs ${bytes(a.maxRss)})`,
      target: `flat (≤ ${FLAT_TOLERANCE.toFixed(2)}×)`,
      met: growth <= FLAT_TOLERANCE,
      note: 'peak resident memory of the scanning process, 4× the input',
    });
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
