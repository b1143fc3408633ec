import { describe, expect, it } from 'vitest';
import { fingerprint, volatileKeySet, MAX_DEPTH, NOTE_MALFORMED_JSON } from '../../src/fingerprint/canonical.js';
import { DEFAULT_VOLATILE_ARGUMENT_KEYS, DEFAULT_VOLATILE_RESULT_KEYS } from '../../src/fingerprint/volatile.js';
import { toHex } from '../../src/fingerprint/hash.js';

const now = Date.parse('2026-11-21T10:00:00Z');
const args = (v: unknown) => fingerprint(v, { side: 'arguments', volatileKeys: volatileKeySet(DEFAULT_VOLATILE_ARGUMENT_KEYS), now });
const result = (v: unknown) => fingerprint(v, { side: 'result', volatileKeys: volatileKeySet(DEFAULT_VOLATILE_RESULT_KEYS) });

describe('fingerprints', () => {
  it('ignore key order, JSON whitespace and nesting order of keys, not array order', () => {
    const a = args({ q: 'x', opts: { deep: true, n: [1, 2, { z: 1, a: 2 }] } }).hash;
    expect(args('{"opts":{"n":[1,2,{"a":2,"z":1}],"deep":true},"q":"x"}').hash).toBe(a);
    expect(args('  {\n "q" : "x",\n "opts": {"deep": true, "n": [ 1, 2, {"z":1,"a":2} ] } }\n').hash).toBe(a);
    expect(args({ q: 'x', opts: { deep: true, n: [2, 1, { z: 1, a: 2 }] } }).hash).not.toBe(a);
  });

  it('treat a string holding JSON like the structure it holds (SDK 2.x strings vs 3.x objects)', () => {
    expect(result('{"a":[1,"b"]}').hash).toBe(result({ a: [1, 'b'] }).hash);
    expect(result('[1,2]').hash).toBe(result([1, 2]).hash);
  });

  it('keep types apart: "1" is not 1, null is not "null", [] is not {}', () => {
    expect(args({ a: '1' }).hash).not.toBe(args({ a: 1 }).hash);
    expect(args({ a: null }).hash).not.toBe(args({ a: 'null' }).hash);
    expect(args([]).hash).not.toBe(args({}).hash);
    expect(args({ a: 1.0 }).hash).toBe(args('{"a":1e0}').hash);
  });

  it('distinguish different values, including near misses', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) seen.add(args({ q: `query ${i}`, page: i % 7 }).hash);
    expect(seen.size).toBe(2000);
    expect(args({ a: 'ab', b: 'c' }).hash).not.toBe(args({ a: 'a', b: 'bc' }).hash);
    expect(args({ a: { b: 1 } }).hash).not.toBe(args({ a: { c: 1 } }).hash);
  });

  it('are fixed size and printable as 14 hex digits', () => {
    expect(toHex(args({ big: 'x'.repeat(1_000_000) }).hash)).toMatch(/^[0-9a-f]{14}$/);
    expect(toHex(args({}).hash)).toMatch(/^[0-9a-f]{14}$/);
  });

  it('strip volatile argument keys and "now" timestamps, but keep ids, dates and far times', () => {
    expect(args({ q: 'x', request_id: 'r-1', nonce: 5 }).hash).toBe(args({ q: 'x', requestId: 'r-2', nonce: 9 }).hash);
    expect(args({ q: 'x', since: '2026-11-21T10:00:03Z' }).hash).toBe(args({ q: 'x', since: '2026-11-21T09:59:31.123Z' }).hash);
    expect(args({ q: 'x', at: now + 2000 }).hash).toBe(args({ q: 'x', at: now - 5000 }).hash);
    // what the agent asks about is never volatile
    expect(args({ id: 'ord-1' }).hash).not.toBe(args({ id: 'ord-2' }).hash);
    expect(args({ id: '550e8400-e29b-41d4-a716-446655440000' }).hash).not.toBe(args({ id: '550e8400-e29b-41d4-a716-446655440001' }).hash);
    expect(args({ date: '2026-12-01' }).hash).not.toBe(args({ date: '2026-12-02' }).hash);
    expect(args({ at: '2026-12-01T10:00:00Z' }).hash).not.toBe(args({ at: '2026-12-02T10:00:00Z' }).hash);
  });

  it('strip ids, uuids, timestamps, epochs, pids and durations from results', () => {
    const a = result({ id: 17, ok: true, text: 'created 550e8400-e29b-41d4-a716-446655440000 at 2026-11-21T10:00:00Z (pid 4242) in 12ms' });
    const b = result({ id: 18, ok: true, text: 'created 7c9e6679-7425-40de-944b-e07fc1f90ae7 at 2026-11-21T10:07:13.5Z (pid 77) in 3.5 s' });
    expect(a.hash).toBe(b.hash);
    expect(result('[10:00:01] build failed, trace 4bf92f3577b34da6a3ce929d0e0e4736, epoch 1795240204296').hash).toBe(
      result('[11:42:59] build failed, trace 00f067aa0ba902b7a3ce929d0e0e4736, epoch 1795240299000').hash,
    );
    expect(result({ msg_id: 'msg_01HXYZ8K2P3QRS', body: 'hi' }).hash).toBe(result({ msg_id: 'msg_01HXYZ9ZZZ3QRT', body: 'hi' }).hash);
    // information is not volatile
    expect(result('3 results').hash).not.toBe(result('4 results').hash);
    expect(result('next slot 2026-11-23').hash).not.toBe(result('next slot 2026-11-24').hash);
    expect(result('main.c:41: x = 1').hash).not.toBe(result('main.c:42: x = 1').hash);
  });

  it("strip the figures of a call's own execution (bytes processed, slot ms, elapsed) after their label, and keep other labelled numbers", () => {
    // BigQuery's MCP server: a cache's rerun of the same query reports 0 bytes where the first read 32 480
    const answer = (bytes: number, ms: number): string => `Query executed successfully.\nTotal rows: 30, Returned: 30\nBytes processed: ${bytes}, Execution time: ${ms}ms\n\nRow 1: {'student_id': 'S060'}`;
    expect(result({ type: 'text', text: answer(32480, 696) }).hash).toBe(result({ type: 'text', text: answer(0, 506) }).hash);
    expect(result('total_bytes_billed=10485760; slot_ms=1234; rows=3').hash).toBe(result('total_bytes_billed=0; slot_ms=99; rows=3').hash);
    expect(result({ rows: 3, stats: { totalBytesProcessed: 100, totalSlotMs: 7 } }).hash).toBe(result({ rows: 3, stats: { totalBytesProcessed: 200, totalSlotMs: 9 } }).hash);
    expect(result('Elapsed: 12.5').hash).toBe(result('Elapsed: 3.25').hash);
    // what the query found is information, as are numbers under other labels
    expect(result(answer(32480, 696).replace('Total rows: 30', 'Total rows: 31')).hash).not.toBe(result(answer(32480, 696)).hash);
    expect(result('Departure time: 1430').hash).not.toBe(result('Departure time: 1530').hash);
    expect(result('Bytes: 1430').hash).not.toBe(result('Bytes: 1530').hash);
  });

  it('say when a result answers with an error member holding text, whatever its form; not for arguments, nested members or empty ones', () => {
    expect(result({ error: 'Key name must be unique.' }).saysError).toBe(true);
    expect(result('{"status": "refused", "error": "Key name must be unique."}').saysError).toBe(true);
    expect(result({ error: null }).saysError).toBe(false);
    expect(result('{"error": "  "}').saysError).toBe(false);
    expect(result({ data: { error: 'x' } }).saysError).toBe(false);
    expect(result('error: Key name must be unique.').saysError).toBe(false);
    expect(args({ error: 'Key name must be unique.' }).saysError).toBe(false);
  });

  it('collapse whitespace in result text, keep it exact in arguments', () => {
    expect(result('Error:  file   not found\n').hash).toBe(result('Error: file not found').hash);
    expect(args({ code: 'if x:\n    y = 1' }).hash).not.toBe(args({ code: 'if x:\n  y = 1' }).hash);
    expect(args({ q: '  spaced  ' }).hash).toBe(args({ q: 'spaced' }).hash);
  });

  it('count informative leaves: status words and volatile values are not information', () => {
    expect(result('OK').informative).toBe(0);
    expect(result({ status: 'ok', success: true }).informative).toBe(0);
    expect(result({ id: 'abc', created_at: '2026-11-21T10:00:00Z' }).informative).toBe(0);
    expect(result('Done!').informative).toBe(0);
    expect(result([]).informative).toBe(0);
    expect(result('No results found.').informative).toBe(1);
    expect(result({ total: 0, items: [] }).informative).toBe(1);
  });

  it('read the member names of deep, wide JSON text as its structure, repeated names in an inner object included', () => {
    // 40 levels of 20 members: the text hasher's name stack grows past its first size, then goes back to it
    const wide = (level: number): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      for (let k = 0; k < 20; k++) o[`m${k}`] = level > 0 && k === 19 ? wide(level - 1) : `${level}.${k}`;
      return o;
    };
    const deepWide = wide(40);
    expect(result(JSON.stringify(deepWide)).hash).toBe(result(deepWide).hash);
    // an inner object's names are told apart from its outer object's: the same names inside are no repeat
    expect(result('{"a":1,"b":{"a":2,"b":3}}').hash).toBe(result({ a: 1, b: { a: 2, b: 3 } }).hash);
    // a name repeated inside the inner object: JSON.parse keeps the last, and so does the fingerprint
    expect(result('{"a":1,"b":{"c":2,"c":3}}').hash).toBe(result({ a: 1, b: { c: 3 } }).hash);
    expect(result('{"a":1,"b":{"c":2,"c":3}}').hash).not.toBe(result({ a: 1, b: { c: 2 } }).hash);
    // after a deep text the next one reads as before
    expect(result('{"x":[1,{"y":2}]}').hash).toBe(result({ x: [1, { y: 2 }] }).hash);
  });

  it('handle cycles, deep nesting, huge values and odd types without throwing', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(args(cyclic).hash).toBe(args(cyclic).hash);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    expect(() => args(deep)).not.toThrow();
    // beyond MAX_DEPTH the rest of the structure is one marker
    let a: unknown = 1;
    let b: unknown = 2;
    for (let i = 0; i < MAX_DEPTH + 5; i++) {
      a = [a];
      b = [b];
    }
    expect(args(a).hash).toBe(args(b).hash);
    const deepText = '['.repeat(5000) + ']'.repeat(5000);
    expect(() => args(deepText)).not.toThrow();
    expect(() => args({ n: NaN, i: Infinity, b: 10n, u: undefined, f: () => 1, s: Symbol('x'), bytes: new Uint8Array([1, 2]), d: new Date(0), m: new Map([[1, 'x']]), set: new Set([1]) })).not.toThrow();
    expect(args({ n: NaN }).hash).not.toBe(args({ n: Infinity }).hash);
    expect(args({ b: new Uint8Array([1, 2]) }).hash).not.toBe(args({ b: new Uint8Array([2, 1]) }).hash);
    expect(args(new Map([['a', 1], ['b', 2]])).hash).toBe(args({ b: 2, a: 1 }).hash);
  });

  it('treats truncated JSON (attribute length limits) as text instead of failing', () => {
    const full = JSON.stringify({ q: 'x'.repeat(100) });
    const cut = full.slice(0, 50);
    expect(() => args(cut)).not.toThrow();
    expect(args(cut).hash).toBe(args(cut).hash);
  });

  it('notes malformed JSON only for the whole value, not for a string inside that has braces at both ends', () => {
    const malformed = (fp: { notes: number }): boolean => (fp.notes & NOTE_MALFORMED_JSON) !== 0;
    expect(malformed(args('{"q": "abc}'))).toBe(true);
    expect(malformed(args('[1, 2'.concat(']]')))).toBe(true);
    // a template and a pattern: text, not broken JSON (found by the JSON-text property test)
    for (const v of ['{"template":"{name}"}', '[["{!}"]]', { pattern: '[a-z]' }]) {
      expect(malformed(args(v)), JSON.stringify(v)).toBe(false);
      expect(malformed(result(v)), JSON.stringify(v)).toBe(false);
    }
    expect(args('{"template":"{name}"}').hash).toBe(args({ template: '{name}' }).hash);
  });

  it('is stable across runs (golden value)', () => {
    // If this changes, fingerprints on exported events change meaning: bump deliberately.
    // Bumped in issue 7 (06a27175e04049 before): hashes are now computed on 32-bit lanes read
    // from code-unit arrays, with numbers hashed from their IEEE-754 bits; equality between
    // values is unchanged (same detections), only the printed fingerprints differ.
    expect(toHex(args({ q: 'weather paris', limit: 5 }).hash)).toBe(toHex(args('{"limit":5,"q":"weather paris"}').hash));
    expect(toHex(args({ q: 'weather paris', limit: 5 }).hash)).toBe('0f741cb56a25f3');
  });
});
