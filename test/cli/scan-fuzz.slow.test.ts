/**
 * Issue 19: a fuzz test of `scan` over mutated real trace files: the OTLP fixtures, and what the
 * real SDK exports (OTLP/JSON, OTLP protobuf bare and framed, and the same data as Tempo and
 * Jaeger write it). Each case mutates one file (bytes flipped, cut, repeated or inserted; JSON
 * values replaced, removed or repeated) and scans it. Whatever the input: exit code 0, 1 or 2
 * only, no stack trace or internal error, no input text on stderr (the mutations plant a canary
 * that must never appear there), and memory under a bound.
 *
 * Bounded by count, not time: FUZZ_RUNS cases (default 400, about 4 s on two idle cores) from a fixed
 * seed, so the cases, and the outcomes they reach, are the same however loaded the machine is (a
 * time bound ran a fifth of them under load and missed the rare clean scans). A failure prints the
 * seed and the shrunk case; `LOOPWATCH_FUZZ_SEED=<seed>` replays it; `LOOPWATCH_FUZZ_MS` adds a
 * time bound for long runs with a large `LOOPWATCH_FUZZ_RUNS`.
 */
import fc from 'fast-check';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, FIXTURES, STACK_TRACE } from './support/cli.js';
import { framed, sdkTraces } from './support/sdk-traces.js';
import { toJaeger, toTempo, type OtlpJson } from './support/trace-shapes.js';

const FUZZ_MS = process.env.LOOPWATCH_FUZZ_MS !== undefined ? Number(process.env.LOOPWATCH_FUZZ_MS) : undefined;
const FUZZ_RUNS = Number(process.env.LOOPWATCH_FUZZ_RUNS ?? 400);
const SEED = Number(process.env.LOOPWATCH_FUZZ_SEED ?? 19_2026);
/** Text planted by the mutations: finding it on stderr means input leaked into a message. */
const CANARY = 'C4NARY';
const HEAP_BOUND_MB = 512;

interface Seed {
  readonly name: string;
  readonly bytes: Buffer;
  /** Parsed, for structural mutations (JSON seeds; JSON Lines as their first line). */
  readonly json: unknown;
  readonly jsonl: boolean;
}

const seeds: Seed[] = [];

function jsonSeed(name: string, text: string): Seed {
  const jsonl = name.endsWith('.jsonl');
  const first = jsonl ? (text.split('\n').find((l) => l.trim() !== '') ?? '{}') : text;
  return { name, bytes: Buffer.from(text), json: JSON.parse(first) as unknown, jsonl };
}

beforeAll(async () => {
  for (const f of readdirSync(FIXTURES)) {
    if (/\.jsonl?$/.test(f)) seeds.push(jsonSeed(f, readFileSync(join(FIXTURES, f), 'utf8')));
  }
  const sdk = await sdkTraces();
  const otlp = JSON.parse(sdk.json) as OtlpJson;
  seeds.push(jsonSeed('sdk.json', sdk.json));
  seeds.push(jsonSeed('sdk-pretty.json', JSON.stringify(otlp, null, 2)));
  seeds.push(jsonSeed('tempo.json', JSON.stringify(toTempo(otlp))));
  seeds.push(jsonSeed('tempo-v2.json', JSON.stringify({ trace: { resourceSpans: (toTempo(otlp) as { batches: unknown }).batches } })));
  seeds.push(jsonSeed('jaeger.json', JSON.stringify(toJaeger(otlp), null, 1)));
  seeds.push({ name: 'sdk.pb', bytes: Buffer.from(sdk.protobuf), json: undefined, jsonl: false });
  seeds.push({ name: 'sdk.binpb', bytes: framed(sdk.protobuf, sdk.protobuf), json: undefined, jsonl: false });
}, 60_000);

/** Every path to a value inside `v` (objects and arrays), in a stable order; bounded. */
function paths(v: unknown, out: Array<Array<string | number>> = [], at: Array<string | number> = []): Array<Array<string | number>> {
  if (out.length > 5_000) return out;
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, out, [...at, i]));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, out, [...at, k]);
  return out;
}

type Replacement = (canary: string) => unknown;
const REPLACEMENTS: Replacement[] = [
  (c) => c,
  (c) => `${c}\u001b[2J\n\u009b${c}`,
  (c) => c.repeat(2_000),
  () => null,
  () => [],
  () => ({}),
  () => 1e308,
  () => -1,
  () => 0,
  () => '0',
  () => 'NaN',
  () => true,
  (c) => ({ stringValue: c }),
  (c) => ({ kvlistValue: { values: [{ key: c, value: { stringValue: c } }] } }),
  (c) => `${'['.repeat(3_000)}"${c}"${']'.repeat(3_000)}`,
  () => '0'.repeat(32),
  () => 'AAAAAAAAAAAAAAAAAAAAAA==',
];

type Mutation =
  | { readonly op: 'flip'; readonly at: number; readonly byte: number }
  | { readonly op: 'cut'; readonly at: number }
  | { readonly op: 'delete'; readonly at: number; readonly length: number }
  | { readonly op: 'repeat'; readonly at: number; readonly length: number; readonly times: number }
  | { readonly op: 'insert'; readonly at: number; readonly text: string }
  /** A bare token after a `,` `:` `[` or `{`: invalid JSON whose error is at the canary itself. */
  | { readonly op: 'inject'; readonly at: number }
  | { readonly op: 'replace'; readonly path: number; readonly with: number }
  | { readonly op: 'remove'; readonly path: number }
  | { readonly op: 'duplicate'; readonly path: number; readonly times: number };

const INSERTS = ['\u0000', '\uFEFF', '\n', '\r\n', '{', '}', '"', '\\', ',', '\u001b[31m', '\u00ff', '\ud800', `"${CANARY}"`, CANARY, '{"resourceSpans":[', '\u0000\u0000\u0000\u0001'];

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('flip' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ op: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 200 }) }),
  fc.record({ op: fc.constant('repeat' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 400 }), times: fc.integer({ min: 1, max: 5 }) }),
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), text: fc.constantFrom(...INSERTS) }),
  fc.record({ op: fc.constant('inject' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('replace' as const), path: fc.nat(), with: fc.nat({ max: REPLACEMENTS.length - 1 }) }),
  fc.record({ op: fc.constant('remove' as const), path: fc.nat() }),
  fc.record({ op: fc.constant('duplicate' as const), path: fc.nat(), times: fc.integer({ min: 1, max: 20 }) }),
);

function applyToJson(doc: unknown, m: Extract<Mutation, { path: number }>, canary: string): unknown {
  const all = paths(doc).filter((p) => p.length > 0);
  const target = all[m.path % Math.max(1, all.length)];
  if (!target) return doc;
  const parentPath = target.slice(0, -1);
  const last = target[target.length - 1] as string | number;
  let parent = doc as Record<string | number, unknown>;
  for (const k of parentPath) parent = parent[k] as Record<string | number, unknown>;
  if (m.op === 'replace') parent[last] = (REPLACEMENTS[m.with] as Replacement)(canary);
  else if (m.op === 'remove') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else Reflect.deleteProperty(parent, last);
  } else if (Array.isArray(parent)) parent.splice(last as number, 0, ...Array.from({ length: m.times }, () => structuredClone(parent[last])));
  return doc;
}

function mutate(seed: Seed, mutations: readonly Mutation[], pretty: boolean): Buffer {
  const canary = `${CANARY}-${mutations.length}`;
  let bytes = seed.bytes;
  let json = seed.json === undefined ? undefined : structuredClone(seed.json);
  const structural = mutations.filter((m): m is Extract<Mutation, { path: number }> => 'path' in m);
  if (json !== undefined && structural.length > 0) {
    for (const m of structural) json = applyToJson(json, m, canary);
    bytes = Buffer.from(seed.jsonl ? `${JSON.stringify(json)}\n${seed.bytes.toString()}` : JSON.stringify(json, null, pretty ? 2 : undefined));
  }
  for (const m of mutations) {
    const at = 'at' in m ? m.at % (bytes.length + 1) : 0;
    if (m.op === 'flip' && bytes.length > 0) {
      bytes = Buffer.from(bytes);
      bytes[at % bytes.length] = m.byte;
    } else if (m.op === 'cut') bytes = bytes.subarray(0, at);
    else if (m.op === 'delete') bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.length)]);
    else if (m.op === 'repeat') bytes = Buffer.concat([bytes.subarray(0, at + m.length), ...Array.from({ length: m.times }, () => bytes.subarray(at, at + m.length)), bytes.subarray(at + m.length)]);
    else if (m.op === 'insert') bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(m.text), bytes.subarray(at)]);
    else if (m.op === 'inject') {
      const boundaries: number[] = [];
      for (let i = 0; i < bytes.length && boundaries.length < 10_000; i++) if ([0x2c, 0x3a, 0x5b, 0x7b].includes(bytes[i] as number)) boundaries.push(i + 1);
      const where = boundaries.length > 0 ? (boundaries[m.at % boundaries.length] as number) : at;
      bytes = Buffer.concat([bytes.subarray(0, where), Buffer.from(canary), bytes.subarray(where)]);
    }
  }
  return bytes;
}

describe('scan fuzz over mutated real trace files', () => {
  it(`exit 0, 1 or 2, no stack trace, no input text on stderr, heap under ${HEAP_BOUND_MB} MB (seed ${SEED}, ${FUZZ_RUNS} cases)`, { timeout: (FUZZ_MS ?? 0) + 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-fuzz-'));
    let cases = 0;
    const codes = new Map<number, number>();
    const result = await fc.check(
      fc.asyncProperty(fc.nat({ max: seeds.length - 1 }), fc.array(mutation, { minLength: 1, maxLength: 4 }), fc.boolean(), fc.boolean(), async (index, mutations, pretty, json) => {
        const seed = seeds[index] as Seed;
        const file = join(dir, `case${seed.name.slice(seed.name.lastIndexOf('.'))}`);
        writeFileSync(file, mutate(seed, mutations, pretty));
        const r = await cli(['scan', ...(json ? ['--json'] : []), file]);
        cases++;
        codes.set(r.code, (codes.get(r.code) ?? 0) + 1);
        expect([0, 1, 2]).toContain(r.code);
        expect(r.stderr).not.toMatch(STACK_TRACE);
        expect(r.stderr).not.toContain('internal error');
        expect(r.stderr).not.toContain(CANARY);
        expect(process.memoryUsage().heapUsed / 2 ** 20).toBeLessThan(HEAP_BOUND_MB);
      }),
      { seed: SEED, numRuns: FUZZ_RUNS, ...(FUZZ_MS !== undefined ? { interruptAfterTimeLimit: FUZZ_MS, markInterruptAsFailure: false } : {}) },
    );
    if (result.failed) throw new Error(fc.defaultReportMessage(result) ?? 'fuzz case failed');
    if (process.env.LOOPWATCH_FUZZ_VERBOSE) console.log(`fuzz: ${cases} cases, exit codes ${JSON.stringify([...codes])}`);
    // the mutations reach every outcome: clean scans, loops found, and bad input
    expect(cases).toBeGreaterThan(50);
    expect([...codes.keys()].sort()).toEqual([0, 1, 2]);
  });
});
