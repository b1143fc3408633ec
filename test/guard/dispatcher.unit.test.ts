import { describe, expect, it } from 'vitest';
import { ToolLoopError } from '../../src/errors.js';
import { isLoopHint, ToolLoopGuard, type LoopHint } from '../../src/guard/index.js';

interface Ctx {
  readonly user: string;
}

/** A hand-written agent's dispatcher: name, arguments and a context argument the guard must pass through. */
function makeDispatcher(log: string[]) {
  return async (name: string, _args: Record<string, unknown>, ctx: Ctx): Promise<{ ok: boolean; data: string }> => {
    log.push(`${ctx.user}:${name}`);
    if (name === 'explode') throw new RangeError('tool bug');
    return { ok: true, data: `${name} result` };
  };
}

describe('guardDispatcher', () => {
  it('passes arguments and extra parameters through, and returns results unchanged', async () => {
    const log: string[] = [];
    const guard = new ToolLoopGuard();
    const dispatch = guard.wrapDispatcher(makeDispatcher(log));
    const r: { ok: boolean; data: string } | LoopHint = await dispatch('lookup', { id: 1 }, { user: 'u1' });
    expect(r).toEqual({ ok: true, data: 'lookup result' });
    expect(log).toEqual(['u1:lookup']);
    const err = await dispatch('explode', {}, { user: 'u1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RangeError);
  });

  it('an agent loop stuck on one call: hint instead of the 3rd call, ToolLoopError on the 4th', async () => {
    const log: string[] = [];
    const guard = new ToolLoopGuard();
    const dispatch = guard.wrapDispatcher(makeDispatcher(log));
    const seen: unknown[] = [];
    let stoppedBy: unknown;
    for (let step = 0; step < 20; step++) {
      try {
        seen.push(await dispatch('lookup', { id: 1 }, { user: 'u1' }));
      } catch (e) {
        stoppedBy = e;
        break;
      }
    }
    expect(log).toHaveLength(2);
    expect(seen.map(isLoopHint)).toEqual([false, false, true]);
    expect(stoppedBy).toBeInstanceOf(ToolLoopError);
    expect(stoppedBy).toMatchObject({ toolName: 'lookup', count: 4, kind: 'repeat' });
  });

  it('calls dispatched together (overlapping in time) are one step: parallel duplicates are one strike', async () => {
    const guard = new ToolLoopGuard();
    const slow = guard.wrapDispatcher(async (_name: string, _args: unknown) => {
      await new Promise((r) => setTimeout(r, 5));
      return 'same';
    });
    await slow('read', { p: 'a' });
    await slow('read', { p: 'a' });
    const third = await Promise.all([slow('read', { p: 'a' }), slow('read', { p: 'a' }), slow('read', { p: 'a' })]);
    expect(third.every(isLoopHint)).toBe(true);
    expect(guard.stopped).toBeUndefined();
    // fan-out over different arguments in one step is not a loop
    const guard2 = new ToolLoopGuard();
    const fan = guard2.wrapDispatcher(async (_n: string, a: { city: string }) => `no hotels in ${a.city.length > 0 ? 'town' : ''}`);
    const out = await Promise.all(['Paris', 'Rome', 'Oslo', 'Lima', 'Kyiv'].map((city) => fan('search', { city })));
    expect(out.some(isLoopHint)).toBe(false);
  });

  it('takes an explicit step key and a cancel signal from the call', async () => {
    const guard = new ToolLoopGuard({ backoff: { baseMs: 10_000 } });
    const controller = new AbortController();
    let failures = 0;
    const dispatch = guard.wrapDispatcher(
      async (_name: string, _args: unknown, _step: number) => {
        failures++;
        throw Object.assign(new Error('upstream'), { status: 503 });
      },
      { batch: (_n, _a, step) => `step-${step}`, signal: () => controller.signal },
    );
    await expect(dispatch('fetch', { u: 1 }, 1)).rejects.toThrow('upstream');
    const retry = dispatch('fetch', { u: 1 }, 2); // waits 10 s before the retry...
    controller.abort(new Error('run cancelled')); // ...unless the run is cancelled
    await expect(retry).rejects.toThrow('run cancelled');
    expect(failures).toBe(1);
    expect(guard.recentCalls().map((r) => r.delayMs ?? 0)).toEqual([0, 10_000]);
  });
});
