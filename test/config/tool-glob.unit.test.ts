import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/detector/config/index.js';
import { LoopEngine } from '../../src/detector/engine.js';
import { buildToolCall } from '../../src/detector/tool-call.js';
import { compileToolGlob } from '../../src/detector/tool-glob.js';

/** The semantics the glob had as a regular expression (fine for the short inputs of the property). */
function reference(pattern: string, name: string): boolean {
  const body = pattern
    .split('*')
    .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 's').test(name);
}

describe('tool-name globs', () => {
  it('match exactly what the anchored regular expression matched', () => {
    const alphabet = fc.constantFrom('a', 'b', '_', '.', '*', '(', '\n');
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 10 }), fc.string({ unit: fc.constantFrom('a', 'b', '_', '.', '(', '\n'), maxLength: 14 }), (pattern, name) => {
        const glob = compileToolGlob(pattern);
        if (!pattern.includes('*')) expect(glob).toBeUndefined();
        else expect(glob?.test(name), `${JSON.stringify(pattern)} vs ${JSON.stringify(name)}`).toBe(reference(pattern, name));
      }),
      { numRuns: 3000 },
    );
  });

  it('a pattern full of stars against a long name answers at once (issue 19: a regex backtracked for minutes)', { timeout: 5_000 }, () => {
    // As a regex: 10 stars against 100 characters took 137 s, and it grows as n^k.
    const glob = compileToolGlob(`${'a*'.repeat(40)}b`);
    expect(glob?.test('a'.repeat(100_000))).toBe(false);
    expect(glob?.test(`${'a'.repeat(100_000)}b`)).toBe(true);
    // the same through a configuration and the engine's tool policy: the exempt glob does not
    // match (no trailing b), so the identical calls are flagged as usual
    const engine = new LoopEngine({ tools: { [`${'a*'.repeat(40)}b`]: { role: 'exempt' } } });
    const trace = engine.createTrace('t');
    const levels: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const call = buildToolCall(engine, { toolName: 'a'.repeat(5_000), arguments: '{}', result: 'same', startTime: i * 1000, endTime: i * 1000 + 5, batch: `b${i}`, callIndex: i });
      levels.push(...trace.record(call, true).map((d) => `${i}:${d.level}`));
    }
    expect(levels).toEqual(['3:warning', '5:critical']);
  });

  it('keeps the configuration semantics: plain names are exact, globs are anchored', () => {
    const config = resolveConfig({ tools: { 'get_*_status': { role: 'poller' }, search: { role: 'exempt' } } });
    const [glob, plain] = config.tools;
    expect(glob?.matcher?.test('get_job_status')).toBe(true);
    expect(glob?.matcher?.test('xget_job_status')).toBe(false);
    expect(glob?.matcher?.test('get__status')).toBe(true);
    expect(glob?.matcher?.test('get_status')).toBe(false);
    expect(plain?.matcher).toBeUndefined();
  });
});
