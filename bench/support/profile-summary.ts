/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`) or a sampling `.heapprofile` (from
 * `bench/profile.ts --heap=FILE`): the self time (or bytes allocated) of the top functions and
 * the share of each part of the stack (loopwatch's modules by source map, the SDK, the collector).
 *   node --import tsx bench/support/profile-summary.ts FILE [top] [--per=N]
 * `--per=N` also prints each part's bytes divided by N (traces, for a heap profile).
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
  readonly columnNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
}
interface HeapNode {
  readonly callFrame: CallFrame;
  readonly selfSize: number;
  readonly children: readonly HeapNode[];
}
interface HeapProfile {
  readonly head: HeapNode;
}

const maps = new Map<string, SourceMap | undefined>();

/** The source file (`src/...`) of a frame in the built package, from its source map. */
function sourceOf(url: string, line: number, column: number): string | undefined {
  if (!url.includes('/dist/')) return undefined;
  if (!maps.has(url)) {
    const path = `${fileURLToPath(url)}.map`;
    maps.set(url, existsSync(path) ? new SourceMap(JSON.parse(readFileSync(path, 'utf8')) as never) : undefined);
  }
  const entry = maps.get(url)?.findEntry(line, column) as { originalSource?: string } | undefined;
  return entry?.originalSource?.replace(/^.*\/src\//, 'src/');
}

/** Which part of the stack a frame belongs to. */
function groupOf(url: string, fn: string, source: string | undefined): string {
  if (fn === '(garbage collector)') return 'garbage collector';
  if (fn === '(idle)' || fn === '(program)' || fn === '(root)') return fn;
  if (source !== undefined) return `loopwatch ${source.split('/').slice(0, 2).join('/').replace(/\.ts$/, '')}`;
  if (url.includes('/dist/')) return 'loopwatch';
  if (url.includes('@opentelemetry')) return 'OpenTelemetry SDK';
  if (url.includes('/bench/')) return 'bench (trace shapes)';
  return 'node and other';
}

const args = process.argv.slice(2);
const per = Number(args.find((a) => a.startsWith('--per='))?.slice('--per='.length) ?? NaN);
const [file, top = '25'] = args.filter((a) => !a.startsWith('--'));
if (!file) throw new Error('usage: profile-summary FILE.cpuprofile|FILE.heapprofile [top] [--per=N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile | HeapProfile;

/** Weight (samples or bytes) by frame. */
const weights: Array<[CallFrame, number]> = [];
if ('head' in profile) {
  const stack: HeapNode[] = [profile.head];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.selfSize > 0) weights.push([node.callFrame, node.selfSize]);
    stack.push(...node.children);
  }
} else {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const id of profile.samples) {
    const frame = byId.get(id)?.callFrame;
    if (frame) weights.push([frame, 1]);
  }
}
const self = new Map<string, number>();
const groups = new Map<string, number>();
let total = 0;
for (const [frame, weight] of weights) {
  const source = sourceOf(frame.url, frame.lineNumber, frame.columnNumber);
  const where = source ?? `${frame.url.replace(/^.*\/(dist|node_modules|bench)\//, '$1/')}:${frame.lineNumber + 1}`;
  const key = `${frame.functionName || '(anonymous)'}  ${where}`;
  self.set(key, (self.get(key) ?? 0) + weight);
  const g = groupOf(frame.url, frame.functionName, source);
  groups.set(g, (groups.get(g) ?? 0) + weight);
  total += weight;
}
const heap = 'head' in profile;
const pct = (n: number): string => `${((100 * n) / total).toFixed(1).padStart(5)} %` + (Number.isFinite(per) ? `  ${(n / per / 1024).toFixed(2).padStart(8)} KiB` : '');
console.log(heap ? `${(total / 1024 / 1024).toFixed(1)} MiB allocated${Number.isFinite(per) ? ` (${(total / per / 1024).toFixed(1)} KiB per ${per === 1 ? 'run' : 'trace'})` : ''}` : `${total} samples`);
console.log('\nby part:');
for (const [g, n] of [...groups].sort((a, b) => b[1] - a[1])) console.log(`${pct(n)}  ${g}`);
console.log(`\ntop ${top} functions (self ${heap ? 'bytes allocated' : 'time'}):`);
for (const [k, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`${pct(n)}  ${k}`);
