/**
 * Properties of fingerprints over generated values (fast-check): what must not matter (key
 * order, whitespace, JSON text vs structure) does not, what must matter (any other difference)
 * does, JSON text is accepted exactly when JSON.parse accepts it, and the hashes are the same in
 * another process.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fingerprint, NOTE_MALFORMED_JSON, volatileKeySet, type FingerprintOptions } from '../../src/fingerprint/canonical.js';
import { fmix } from '../../src/fingerprint/hash.js';
import { similarWording } from '../../src/fingerprint/wording.js';
import { DEFAULT_VOLATILE_ARGUMENT_KEYS, DEFAULT_VOLATILE_RESULT_KEYS, mayHoldVolatile, normalizeKey, resultTextPattern, toUnits } from '../../src/fingerprint/volatile.js';

const argumentKeys = volatileKeySet(DEFAULT_VOLATILE_ARGUMENT_KEYS);
const resultKeys = volatileKeySet(DEFAULT_VOLATILE_RESULT_KEYS);
const ARGS: FingerprintOptions = { side: 'arguments', volatileKeys: argumentKeys };
const RESULT: FingerprintOptions = { side: 'result', volatileKeys: resultKeys };
const hash = (v: unknown, o: FingerprintOptions = ARGS): number => fingerprint(v, o).hash;

// Member names and text that are plain data: no volatile names, no text that trims, collapses or
// holds JSON, so that two values differ as data exactly when they differ as JSON.
const plainKey = fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !argumentKeys.has(normalizeKey(k)) && !resultKeys.has(normalizeKey(k)));
const plainText = fc.stringMatching(/^[a-z][a-z ,.!é]{0,14}[a-z]$/).filter((s) => !s.includes('  '));
const plainJson = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, plainText, fc.integer({ min: -1e6, max: 1e6 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(plainKey, tie('value'), { maxKeys: 4 }),
})).value;
// Any JSON value: strings that hold JSON, volatile names, whitespace and numbers of every kind.
const anyJson = fc.jsonValue({ maxDepth: 4 });
// Text is read as structure when it holds an object or an array (a string holding `"x"` is text).
const anyContainer = fc.oneof(fc.dictionary(fc.string(), anyJson, { maxKeys: 5 }), fc.array(anyJson, { maxLength: 5 }));

const SPACES = [' ', '\n', '\t', '\r\n', '  '] as const;

/** JSON text of `v` with members in a shuffled order and whitespace between tokens. */
function reformat(v: unknown, rnd: () => number): string {
  const ws = (): string => (rnd() < 0.5 ? '' : (SPACES[Math.floor(rnd() * SPACES.length)] ?? ' '));
  if (Array.isArray(v)) return `[${ws()}${v.map((x) => reformat(x, rnd)).join(`${ws()},${ws()}`)}${ws()}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).sort(() => rnd() - 0.5);
    return `{${ws()}${entries.map(([k, x]) => `${JSON.stringify(k)}${ws()}:${ws()}${reformat(x, rnd)}`).join(`${ws()},${ws()}`)}${ws()}}`;
  }
  return JSON.stringify(v);
}

function seeded(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

/** Equal as data: same structure and leaves, member order aside (-0 and 0 are one number). */
function sameData(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameData(x, b[i]));
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

describe('fingerprint properties', () => {
  it('are invariant under key order and JSON whitespace, and a JSON string equals its structure', () => {
    fc.assert(
      fc.property(anyContainer, fc.integer(), (v, seed) => {
        const rnd = seeded(seed);
        for (const o of [ARGS, RESULT]) {
          const h = hash(v, o);
          expect(hash(JSON.stringify(v), o)).toBe(h);
          expect(hash(reformat(v, rnd), o)).toBe(h);
          expect(hash(`  ${reformat(v, rnd)}\n`, o)).toBe(h);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("find an argument's targets whatever its key order, layout or form (JSON text or structure)", () => {
    fc.assert(
      fc.property(anyContainer, fc.integer(), (v, seed) => {
        const rnd = seeded(seed);
        const t = fingerprint(v, ARGS).targets;
        expect(fingerprint(JSON.stringify(v), ARGS).targets).toBe(t);
        expect(fingerprint(reformat(v, rnd), ARGS).targets).toBe(t);
      }),
      { numRuns: 400 },
    );
  });

  it('take a value without whitespace (an id, a path, a number) as a target, and wording never', () => {
    const token = fc.stringMatching(/^[A-Za-z0-9_./:-]{1,24}$/);
    const words = fc.array(fc.stringMatching(/^[a-z]{1,8}$/), { minLength: 2, maxLength: 5 }).map((w) => w.join(' '));
    fc.assert(
      fc.property(token, token, words, words, (a, b, q1, q2) => {
        // wording alone: no targets, whatever it says
        expect(fingerprint({ q: q1 }, ARGS).targets).toBeUndefined();
        // the same target, reworded: the same targets
        expect(fingerprint({ id: a, q: q1 }, ARGS).targets).toBe(fingerprint({ id: a, q: q2 }, ARGS).targets);
        // another target: other targets
        if (a !== b) expect(fingerprint({ id: a, q: q1 }, ARGS).targets).not.toBe(fingerprint({ id: b, q: q1 }, ARGS).targets);
      }),
      { numRuns: 400 },
    );
    // results have none: a call's targets are what its arguments name
    expect(fingerprint({ id: 'blk_1' }, RESULT).targets).toBeUndefined();
  });

  it("take the operands of a top-level command line (paths, URLs, files) as targets, not its options or words", () => {
    const targets = (v: unknown): number | undefined => fingerprint(v, ARGS).targets;
    const curl = targets({ command: 'curl -s https://api.github.com/repositories/1001' });
    expect(curl).toBeDefined();
    // another repository: another target; the same one with other options or spacing: the same
    expect(targets({ command: 'curl -s https://api.github.com/repositories/1002' })).not.toBe(curl);
    expect(targets('{"command":"curl  -sL   https://api.github.com/repositories/1001"}')).toBe(curl);
    // quoted file names, spaces inside quotes included, and escapes in JSON text
    const mv = targets({ command: 'mv "my notes.c" "hw3/my notes.c"' });
    expect(targets('{"command":"mv \\"my notes.c\\" \\"hw3/my notes.c\\""}')).toBe(mv);
    expect(targets({ command: 'mv "other notes.c" "hw3/other notes.c"' })).not.toBe(mv);
    expect(targets({ command: 'mv   "my notes.c"  "hw3/my notes.c" ' })).toBe(mv);
    // a command line whose words name no path, URL or file has no targets; nor has wording under another name, nor a nested command
    expect(targets({ command: 'git status --short' })).toBeUndefined();
    expect(targets({ query: 'curl -s https://api.github.com/repositories/1001' })).toBeUndefined();
    expect(targets({ params: { command: 'cat a.txt b.txt' } })).toBeUndefined();
  });

  it("find a generic tool's action in its top-level members, whatever the form; wording and nested members are no action", () => {
    const action = (v: unknown): number | undefined => fingerprint(v, ARGS).action;
    const a = action({ server_name: 'github', tool_name: 'create_issue', params: { title: 'x y' } });
    expect(a).toBeDefined();
    expect(action('{"params":{"title":"z"},"tool_name":"create_issue","server_name":"github"}')).toBe(a);
    expect(action({ server_name: 'github', tool_name: 'list_issues', params: {} })).not.toBe(a);
    expect(action({ command: 'grep -rn foo src' })).toBeUndefined();
    expect(action({ params: { tool_name: 'create_issue' } })).toBeUndefined();
    expect(fingerprint({ tool_name: 'create_issue' }, RESULT).action).toBeUndefined();
  });

  it('sketch the wording of arguments: one request reworded agrees, different content does not, case and form aside', () => {
    const wording = (v: unknown): number => fingerprint(v, ARGS).wording ?? Number.NaN;
    const a = wording({ q: 'refund policy for damaged items in the spring sale' });
    expect(wording('{"q":"Refund policy for damaged items in the spring sale"}')).toBe(a);
    expect(similarWording(a, wording({ q: 'the refund policy for damaged items of the spring sale' }))).toBe(true);
    expect(similarWording(a, wording({ q: 'shipping times to Seattle for kitchen appliances and grinders' }))).toBe(false);
    // keys are not words of the request, and results are not sketched
    expect(fingerprint({ refund: 1, policy: 2 }, ARGS).wording).toBeUndefined();
    expect(fingerprint('refund policy', RESULT).wording).toBeUndefined();
    // over many draws, rewordings that share most words agree and unrelated texts do not
    const words = fc.array(fc.stringMatching(/^[a-z]{3,9}$/), { minLength: 12, maxLength: 30 });
    let agreed = 0;
    let apart = 0;
    fc.assert(
      fc.property(words, words, (mine, other) => {
        const reworded = [...mine.slice(1), 'please', 'again'];
        if (similarWording(wording({ t: mine.join(' ') }), wording({ t: reworded.join(' ') }))) agreed++;
        if (similarWording(wording({ t: mine.join(' ') }), wording({ t: other.join(' ') }))) apart++;
      }),
      { numRuns: 300, seed: 11 },
    );
    expect(agreed).toBeGreaterThan(270);
    expect(apart).toBeLessThan(15);
  });

  it("keep the wording sketch's values: each word FNV-1a over its units, capitals as small letters, then fmix, a bin and its least value", () => {
    // `same_result` decides some of the corpus's runs at the sketch's margin: another word hash,
    // however good, moved `npm run eval` (bench/NOTES.md, issue 30 session 6). This is the
    // sketch as those verdicts were set, written plainly.
    const reference = (text: string): number | undefined => {
      const mins = new Array<number>(12).fill(0x10000);
      const words = (text.match(/[A-Za-z0-9\u0080-\uffff]{2,}/g) ?? []).slice(0, 64);
      for (const word of words) {
        let h = 0x811c9dc5 | 0;
        for (const unit of word.split('')) h = Math.imul(h ^ (/[A-Z]/.test(unit) ? unit.toLowerCase() : unit).charCodeAt(0), 0x01000193);
        const v = fmix(h ^ word.length);
        const bin = ((v >>> 16) * 12) >>> 16;
        mins[bin] = Math.min(mins[bin] ?? 0x10000, v & 0xffff);
      }
      if (words.length === 0) return undefined;
      return mins.reduceRight((packed, m) => packed * 16 + (m === 0x10000 ? 0 : 1 + (m % 15)), 0);
    };
    const word = fc.stringMatching(/^[A-Za-z0-9éßЖ日本-]{1,12}$/);
    fc.assert(
      fc.property(fc.array(word, { minLength: 2, maxLength: 90 }), (words) => {
        const text = words.join(' ');
        expect(fingerprint({ t: text }, ARGS).wording).toBe(reference(text));
      }),
      { numRuns: 400, seed: 30 },
    );
  });

  it('differ for values that differ as data', () => {
    fc.assert(
      fc.property(plainJson, plainJson, (a, b) => {
        fc.pre(!sameData(a, b));
        expect(hash(a)).not.toBe(hash(b));
        expect(hash(JSON.stringify(a))).not.toBe(hash(JSON.stringify(b)));
        expect(hash(a, RESULT)).not.toBe(hash(b, RESULT));
      }),
      { numRuns: 1500 },
    );
    // and one small change anywhere in a larger value
    fc.assert(
      fc.property(fc.array(plainText, { minLength: 2, maxLength: 30 }), fc.nat(), (words, at) => {
        const i = at % words.length;
        const changed = [...words];
        changed[i] = `${changed[i] ?? ''}x`;
        expect(hash({ words })).not.toBe(hash({ words: changed }));
      }),
    );
  });

  it('read JSON text exactly when JSON.parse accepts it, and as text otherwise', () => {
    const damaged = fc.tuple(anyJson, fc.nat(), fc.constantFrom('cut', 'raw-control', 'comma', 'quote', 'none')).map(([v, at, how]) => {
      const t = JSON.stringify(v);
      const i = t.length > 0 ? at % t.length : 0;
      if (how === 'cut') return t.slice(0, i);
      if (how === 'raw-control') return `${t.slice(0, i)}\u0001${t.slice(i)}`;
      if (how === 'comma') return `${t.slice(0, i)},${t.slice(i)}`;
      if (how === 'quote') return `${t.slice(0, i)}"${t.slice(i)}`;
      return t;
    });
    fc.assert(
      fc.property(damaged, (text) => {
        const trimmed = text.trim();
        const looksLikeJson = /^\{[\s\S]*\}$|^\[[\s\S]*\]$/.test(trimmed);
        let parsed: { value: unknown } | undefined;
        try {
          parsed = { value: JSON.parse(text) as unknown };
        } catch {
          parsed = undefined;
        }
        for (const o of [ARGS, RESULT]) {
          const fp = fingerprint(text, o);
          if (looksLikeJson) expect((fp.notes & NOTE_MALFORMED_JSON) !== 0).toBe(parsed === undefined);
          if (parsed !== undefined && looksLikeJson) expect(fp.hash).toBe(hash(parsed.value, o));
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('never skip the volatile-value pattern where it would match (the cheap pre-check is sound)', () => {
    const bits = ['a', 'B', 'F', 'Z', 'x', '9', '5', '0', '1', ' ', '\t', '-', '_', ':', '.', 'ms', 's', 'sec', 'seconds', 'µs', 'pi', 'd', 'pid=', 'deadbeef', '12:30:45',
      '2026-11-21T10:00:00Z', '550e8400-e29b-41d4-a716-446655440000', 'msg_01HXYZ8K2P3QRS', '01ARZ3NDEKTSV4RRFFQ69G5FAV', '1795240204296',
      'Bytes processed', 'bytes_billed', 'Slot', 'ms', 'elapsed', 'Took', 'time', '=', '"', "'", ': ', 'KB', 'bytes'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...bits), { maxLength: 24 }), (parts) => {
        const s = parts.join('');
        const pattern = resultTextPattern();
        if (pattern.exec(s) !== null) expect(mayHoldVolatile(toUnits(s), 0, s.length)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('find a run of id units wherever it starts (the cheap pre-check looks at every tenth unit)', () => {
    // an epoch, a long hex id, a ULID of capitals only; a digit elsewhere makes the text searched
    for (const run of ['1712345678', 'deadbeef0badcafe', 'ABCDEFGHJKMNPQRSTVWXYZABCD']) {
      for (let offset = 0; offset < 24; offset++) {
        const s = `${'q'.repeat(offset)} ${run} 7 items`;
        expect(resultTextPattern().exec(s), s).not.toBeNull();
        expect(mayHoldVolatile(toUnits(s), 0, s.length), s).toBe(true);
      }
    }
  });

  it('are the same in another process (stable across runs)', () => {
    const inputs = fc.sample(anyJson, { numRuns: 200, seed: 7 }).flatMap((v) => [v, JSON.stringify(v)]);
    const here = inputs.map((v) => {
      const a = fingerprint(v, ARGS);
      const r = fingerprint(v, RESULT);
      return `${a.hash} ${a.informative} ${r.hash} ${r.informative}`;
    });
    const child = join(__dirname, '..', 'support', 'fingerprint-child.ts');
    const out = execFileSync(process.execPath, ['--import', 'tsx', child], { input: JSON.stringify(inputs), encoding: 'utf8', cwd: join(__dirname, '..', '..') });
    expect(out.trim().split('\n')).toEqual(here);
  });
});
