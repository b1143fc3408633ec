/**
 * `defaultKeyMask` writes the default adapters' gate keys out as code. It must answer exactly as
 * their declarations do: the gate built from the declarations is the reference.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultAdapters, defaultKeyMask, gateFor, gateOf } from '../../src/conventions/index.js';
import type { SpanView } from '../../src/conventions/types.js';

const declared = gateOf(defaultAdapters);
const written = gateFor(defaultAdapters);

const declaredKeys = [...new Set(defaultAdapters.flatMap((a) => [...(a.gate?.keys ?? []), ...Object.keys(a.gate?.values ?? {})]))];
const declaredValues = [...new Set(defaultAdapters.flatMap((a) => Object.values(a.gate?.values ?? {}).flat()))];

/** Keys of the same length one character off, one shorter, one longer, and in another case. */
function nearMisses(k: string): string[] {
  const swap = (c: string): string => (c === 'x' ? 'y' : 'x');
  return [swap(k[0] ?? '') + k.slice(1), k.slice(0, -1) + swap(k.at(-1) ?? ''), k.slice(0, -1), `${k}x`, k.toUpperCase()];
}

const keys = [...declaredKeys, ...declaredKeys.flatMap(nearMisses), 'http.request.method', 'gen_ai.request.model', 'url.full', ''];
const values: unknown[] = [...declaredValues, 'x', 'TOOL', '', 0, 1, true, null, ['tool'], { kind: 'tool' }];

function span(attributes: Record<string, unknown>, name = 'POST'): SpanView {
  return { name, attributes };
}

describe('the default adapters\' gate keys, written out', () => {
  it('lets through every key the default adapters declare', () => {
    expect(declaredKeys.length).toBeGreaterThan(20);
    for (const k of declaredKeys) expect(Math.max(...values.map((v) => defaultKeyMask({ [k]: v }))), k).toBeGreaterThan(0);
  });

  it('answers as the declarations do for each key and value alone, near misses included', () => {
    expect(written).toBeDefined();
    for (const k of keys) {
      for (const v of values) {
        const s = span({ [k]: v });
        expect(written?.test(s), `${JSON.stringify(k)} = ${JSON.stringify(v)}`).toBe(declared?.test(s));
      }
    }
  });

  it('answers as the declarations do for spans mixing keys, values and names', () => {
    const attributes = fc.dictionary(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...keys) }, fc.string({ maxLength: 40 })), fc.constantFrom(...values), {
      maxKeys: 10,
    });
    const name = fc.constantFrom('POST', 'execute_tool search', 'ai.toolCall', 'invoke_agent support', '');
    fc.assert(
      fc.property(attributes, name, (a, n) => {
        const s = span(a, n);
        expect(written?.test(s)).toBe(declared?.test(s));
      }),
      { numRuns: 2000 },
    );
  });

  it('is used only for the default list itself: another list is read from its declarations', () => {
    const reordered = [...defaultAdapters].reverse();
    const s = span({ 'gen_ai.operation.name': 'execute_tool' });
    // gen_ai is the last default adapter, and the first of the reversed list
    expect(gateFor(defaultAdapters)?.test(s)).toBe(1 << (defaultAdapters.length - 1));
    expect(gateFor(reordered)?.test(s)).toBe(1);
  });
});
