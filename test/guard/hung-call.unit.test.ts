/**
 * Issue 19: a call that hangs (the app times it out and never settles it) must not gather every
 * later call into its batch: a batch takes new calls only until one of its calls has finished.
 */
import { describe, expect, it } from 'vitest';
import { ToolLoopError } from '../../src/errors.js';
import { isLoopHint, ToolLoopGuard } from '../../src/guard/index.js';

describe('the guard with a hung call', () => {
  it('stops ten identical calls made after a call that never settles', async () => {
    const guard = new ToolLoopGuard();
    // the app gives up on it after a timeout; the promise itself never settles
    void guard.run('export_report', { id: 7 }, () => new Promise(() => undefined));
    await new Promise((r) => setTimeout(r, 5));
    let executed = 0;
    const outcomes: string[] = [];
    for (let i = 0; i < 10; i++) {
      try {
        const r = await guard.run('search', { q: 'order 1234' }, () => (executed++, { hits: [] }));
        outcomes.push(isLoopHint(r) ? 'hint' : 'ran');
      } catch (e) {
        outcomes.push(e instanceof ToolLoopError ? 'stopped' : 'error');
        break;
      }
    }
    expect(outcomes).toEqual(['ran', 'ran', 'hint', 'stopped']);
    expect(executed).toBe(2);
  });

  it('calls started together are still one batch: parallel duplicates are not repeats', async () => {
    const guard = new ToolLoopGuard();
    let executed = 0;
    const results = await Promise.all(Array.from({ length: 6 }, () => guard.run('search', { q: 'x' }, async () => (executed++, { hits: [] }))));
    expect(results.some(isLoopHint)).toBe(false);
    expect(executed).toBe(6);
  });
});
