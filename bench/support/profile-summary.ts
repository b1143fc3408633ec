/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time of the top functions and the
 * share of each part of the stack (loopwatch's modules by source map, the SDK, the collector).
 *   node --import tsx bench/support/profile-summary.ts FILE.cpuprofile [top]
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number };
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
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

const [file, top = '25'] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary FILE.cpuprofile [top]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
const groups = new Map<string, number>();
for (const id of profile.samples) {
  const frame = byId.get(id)?.callFrame;
  if (!frame) continue;
  const source = sourceOf(frame.url, frame.lineNumber, frame.columnNumber);
  const where = source ?? `${frame.url.replace(/^.*\/(dist|node_modules|bench)\//, '$1/')}:${frame.lineNumber + 1}`;
  const key = `${frame.functionName || '(anonymous)'}  ${where}`;
  self.set(key, (self.get(key) ?? 0) + 1);
  const g = groupOf(frame.url, frame.functionName, source);
  groups.set(g, (groups.get(g) ?? 0) + 1);
}
const total = profile.samples.length;
const pct = (n: number): string => `${((100 * n) / total).toFixed(1).padStart(5)} %`;
console.log(`${total} samples\n\nby part:`);
for (const [g, n] of [...groups].sort((a, b) => b[1] - a[1])) console.log(`${pct(n)}  ${g}`);
console.log(`\ntop ${top} functions (self time):`);
for (const [k, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`${pct(n)}  ${k}`);
