/**
 * One digest of the fingerprints of a fixed, large set of inputs, to show that a change to
 * `src/fingerprint` left every hash as it was (`npm run fingerprint:digest`; compare the line
 * with the one main prints). The inputs: every tool argument, result and error message of the real
 * corpus (test/fixtures/real), the bench's payloads, and seeded random text made of the units the
 * fingerprint treats specially (whitespace of every kind, digits, ids, durations, JSON
 * punctuation, escapes). Each is fingerprinted as arguments and as a result, as a string and,
 * when it is JSON, as the parsed value; every field of every fingerprint goes into the digest.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fingerprint, volatileKeySet, type Fingerprint, type FingerprintOptions } from '../src/fingerprint/canonical.js';
import { DEFAULT_VOLATILE_ARGUMENT_KEYS, DEFAULT_VOLATILE_RESULT_KEYS } from '../src/fingerprint/volatile.js';
import { argumentsOfSize, jsonOfSize, proseResult } from '../bench/support/payloads.js';
import { CORPUS_DIR, readLines } from './corpus/files.js';

interface Input {
  readonly text: string;
  /** Epoch ms of the call's start (arguments: timestamps near it are "now"). */
  readonly now: number;
}

const ARGUMENT_KEYS = volatileKeySet(DEFAULT_VOLATILE_ARGUMENT_KEYS);
const RESULT_KEYS = volatileKeySet(DEFAULT_VOLATILE_RESULT_KEYS);
const TOOL_TEXT_KEYS = new Set(['gen_ai.tool.call.arguments', 'gen_ai.tool.call.result']);
const BENCH_NOW = Date.parse('2026-11-21T10:00:00Z');

interface OtlpSpan {
  startTimeUnixNano?: string;
  attributes?: Array<{ key: string; value?: { stringValue?: string } }>;
  status?: { message?: string };
}

function corpusInputs(): Input[] {
  const inputs: Input[] = [];
  const files = readdirSync(CORPUS_DIR).filter((f) => f.endsWith('.otlp.jsonl.br')).sort();
  for (const file of files) {
    for (const line of readLines(join(CORPUS_DIR, file))) {
      const doc = JSON.parse(line) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      for (const rs of doc.resourceSpans) {
        for (const ss of rs.scopeSpans) {
          for (const span of ss.spans) {
            const now = Number(BigInt(span.startTimeUnixNano ?? '0') / 1_000_000n);
            let tool = false;
            for (const a of span.attributes ?? []) {
              const text = a.value?.stringValue;
              if (!TOOL_TEXT_KEYS.has(a.key) || text === undefined) continue;
              tool = true;
              inputs.push({ text, now });
            }
            const message = span.status?.message;
            if (tool && message !== undefined && message !== '') inputs.push({ text: message, now });
          }
        }
      }
    }
  }
  return inputs;
}

function benchInputs(): Input[] {
  const texts: string[] = [];
  for (let k = 0; k < 64; k++) {
    for (const size of [64, 1024, 10 * 1024]) texts.push(jsonOfSize(size, k, 'args'), jsonOfSize(size, k, 'result'));
    texts.push(argumentsOfSize(1024, k), proseResult(1024, k), proseResult(10 * 1024, k));
  }
  for (let k = 0; k < 4; k++) texts.push(jsonOfSize(100 * 1024, k, 'args'), jsonOfSize(100 * 1024, k, 'result'));
  return texts.map((text) => ({ text, now: BENCH_NOW }));
}

/** Pieces random text is made of: what the fingerprint's readers branch on. */
const PIECES = [
  ' ', '  ', '\t', '\n', '\r\n', '\u00a0', '\u2028', '\u3000', '\ufeff', '\u0001',
  'a', 'Z', 'é', '日本', '😀', 'ok', 'done', 'File written', 'the', 'pid ', 'pid=', ':', '-', '_', '.', ',', '/',
  '0', '7', '42', '2026', '12:30:05', '2026-11-21T10:00:00Z', '1763719200', '1763719200000', '550e8400-e29b-41d4-a716-446655440000',
  'deadbeefcafe1234', 'msg_01HXABCDEF12', '01ARZ3NDEKTSV4RRFFQ69G5FAV', '15ms', '3 s', '2.5 seconds', '10µs', '9us',
  '{', '}', '[', ']', '"', '\\', '\\"', '\\n', '\\u00e9', ':', 'true', 'null', '-0', '1e3', '0.1', '1.0', '12345678901234567890',
  '{"a":1}', '[1, 2]', '{"id":"x","q":"y"}', '"tool_name":"run"',
];

function randomInputs(count: number): Input[] {
  let seed = 0x2545f491;
  const next = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const inputs: Input[] = [];
  for (let k = 0; k < count; k++) {
    let text = '';
    const pieces = 1 + next(k % 10 === 0 ? 200 : 24);
    for (let p = 0; p < pieces; p++) text += PIECES[next(PIECES.length)];
    inputs.push({ text, now: BENCH_NOW });
    // the same pieces as JSON: a string member, an array, a nested JSON string
    if (k % 3 === 0) inputs.push({ text: JSON.stringify({ q: text, n: k, nested: JSON.stringify([text, k]) }), now: BENCH_NOW });
  }
  return inputs;
}

function line(fp: Fingerprint): string {
  return `${fp.hash}|${fp.informative}|${fp.notes}|${fp.action ?? '-'}|${fp.targets ?? '-'}|${fp.wording ?? '-'}|${fp.wordingLength}`;
}

function parsed(text: string): { value: unknown } | undefined {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

const sets: ReadonlyArray<readonly [string, Input[]]> = [
  ['corpus', corpusInputs()],
  ['bench', benchInputs()],
  ['random', randomInputs(20_000)],
];
const all = createHash('sha256');
let fingerprints = 0;
/**
 * Distinct values of each side's `hash` and of `wording` over every input: a new hash design must
 * not tell fewer apart (a collision rate no worse); `targets` and `action` likewise.
 */
const distinct = { arguments: new Set<number>(), result: new Set<number>(), wording: new Set<number>(), targets: new Set<number>(), action: new Set<number>() };
const counts: string[] = [];
for (const [name, inputs] of sets) {
  const digest = createHash('sha256');
  let n = 0;
  for (const { text, now } of inputs) {
    const value = parsed(text);
    const sides: FingerprintOptions[] = [
      { side: 'arguments', volatileKeys: ARGUMENT_KEYS, now },
      { side: 'result', volatileKeys: RESULT_KEYS },
    ];
    for (const options of sides) {
      const fp = fingerprint(text, options);
      digest.update(line(fp) + '\n');
      n++;
      distinct[options.side].add(fp.hash);
      if (fp.wording !== undefined) distinct.wording.add(fp.wording);
      if (fp.targets !== undefined) distinct.targets.add(fp.targets);
      if (fp.action !== undefined) distinct.action.add(fp.action);
      if (value !== undefined) {
        digest.update(line(fingerprint(value.value, options)) + '\n');
        n++;
      }
    }
  }
  const hex = digest.digest('hex');
  all.update(hex);
  fingerprints += n;
  counts.push(`${name} ${inputs.length} inputs, ${n} fingerprints, ${hex.slice(0, 16)}`);
}
for (const c of counts) console.log(c);
console.log(`distinct ${Object.entries(distinct).map(([k, v]) => `${k} ${v.size}`).join(', ')} (of the texts; a parsed value hashes as its text)`);
console.log(`digest ${all.digest('hex').slice(0, 32)} (${fingerprints} fingerprints)`);
