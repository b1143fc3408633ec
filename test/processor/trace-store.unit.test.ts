import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TraceStore, type StoreLinks } from '../../src/processor/trace-store.js';

interface State extends StoreLinks<State> {
  id: string;
}

function store(maxTraces = 3, idleMs = 60_000): { traces: TraceStore<State>; clock: { now: number } } {
  const clock = { now: 1_000_000 };
  return { traces: new TraceStore<State>({ maxTraces, idleMs, now: () => clock.now }), clock };
}

const make = (id: string) => (): State => ({ touched: 0, storeId: '', older: undefined, newer: undefined, id });

describe('TraceStore', () => {
  it('finds, counts and forgets the newest trace (held beside the map) like any other', () => {
    const { traces } = store();
    const a = traces.getOrCreate('a', make('a'));
    expect(traces.peek('a')).toBe(a);
    expect(traces.size).toBe(1);
    const b = traces.getOrCreate('b', make('b'));
    expect([traces.peek('a'), traces.get('b'), traces.size]).toEqual([a, b, 2]);
    expect(traces.getOrCreate('a', make('again'))).toBe(a);
    traces.delete('b');
    expect([traces.peek('b'), traces.size]).toEqual([undefined, 1]);
    traces.delete('a');
    expect([traces.peek('a'), traces.size]).toEqual([undefined, 0]);
  });

  it('forgets its last lookup when a trace is deleted or created', () => {
    const { traces } = store();
    expect(traces.peek('a')).toBeUndefined();
    const a = traces.getOrCreate('a', make('a'));
    expect(traces.peek('a')).toBe(a);
    traces.delete('a');
    expect(traces.peek('a')).toBeUndefined();
  });

  it('drops the least recently used beyond maxTraces, counting the newest', () => {
    const { traces, clock } = store(3);
    for (const id of ['a', 'b', 'c']) {
      traces.getOrCreate(id, make(id));
      clock.now += 2_000;
    }
    traces.get('a'); // used again: b is now the least recently used
    clock.now += 2_000;
    traces.getOrCreate('d', make('d'));
    expect(['a', 'b', 'c', 'd'].map((id) => traces.peek(id)?.id)).toEqual(['a', undefined, 'c', 'd']);
    expect([traces.size, traces.evicted]).toEqual([3, 1]);
  });

  it('with maxTraces 1 keeps only the newest trace', () => {
    const { traces } = store(1);
    traces.getOrCreate('a', make('a'));
    traces.getOrCreate('b', make('b'));
    expect([traces.peek('a'), traces.peek('b')?.id, traces.size, traces.evicted]).toEqual([undefined, 'b', 1, 1]);
  });

  it('sweeps idle traces, the newest too', () => {
    const { traces, clock } = store(10, 60_000);
    traces.getOrCreate('old', make('old'));
    clock.now += 30_000;
    traces.getOrCreate('newest', make('newest'));
    clock.now += 45_000; // old idle for 75 s, newest for 45 s
    traces.getOrCreate('x', make('x'));
    expect(['old', 'newest', 'x'].map((id) => traces.peek(id)?.id)).toEqual([undefined, 'newest', 'x']);
    clock.now += 61_000;
    traces.getOrCreate('y', make('y'));
    expect(['newest', 'x', 'y'].map((id) => traces.peek(id)?.id)).toEqual([undefined, undefined, 'y']);
    expect(traces.evicted).toBe(3);
  });

  it('clear empties both', () => {
    const { traces } = store();
    traces.getOrCreate('a', make('a'));
    traces.getOrCreate('b', make('b'));
    traces.clear();
    expect([traces.size, traces.peek('a'), traces.peek('b')]).toEqual([0, undefined, undefined]);
  });

  it('behaves as a least-recently-used table with idle expiry, whatever the operations (reference model)', () => {
    type Op = { kind: 'create' | 'get' | 'peek' | 'delete'; id: number } | { kind: 'wait'; ms: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constantFrom('create', 'get', 'peek', 'delete'), id: fc.integer({ min: 0, max: 12 }) }) as fc.Arbitrary<Op>,
      fc.record({ kind: fc.constant('wait'), ms: fc.constantFrom(10, 700, 1_500, 20_000) }) as fc.Arbitrary<Op>,
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op, { maxLength: 120 }), (maxTraces, ops) => {
        const idleMs = 30_000;
        const { traces, clock } = store(maxTraces, idleMs);
        // the model: ids in order of use (oldest first) with their last use; a sweep at most once a second
        let model: Array<{ id: string; touched: number }> = [];
        let lastSweep = 0;
        let evicted = 0;
        const sweep = (): void => {
          if (clock.now - lastSweep < 1_000) return;
          lastSweep = clock.now;
          const kept = model.filter((e) => e.touched > clock.now - idleMs);
          evicted += model.length - kept.length;
          model = kept;
        };
        const use = (id: string): void => {
          model = [...model.filter((e) => e.id !== id), { id, touched: clock.now }];
        };
        for (const o of ops) {
          if (o.kind === 'wait') {
            clock.now += o.ms;
            continue;
          }
          const id = `t${o.id}`;
          const known = model.some((e) => e.id === id);
          if (o.kind === 'create') {
            traces.getOrCreate(id, make(id));
            use(id);
            if (!known) {
              while (model.length > maxTraces) {
                model.shift();
                evicted++;
              }
            }
            sweep();
          } else if (o.kind === 'get') {
            expect(traces.get(id)?.id).toBe(known ? id : undefined);
            if (known) {
              use(id);
              sweep();
            }
          } else if (o.kind === 'peek') {
            expect(traces.peek(id)?.id).toBe(known ? id : undefined);
          } else {
            traces.delete(id);
            model = model.filter((e) => e.id !== id);
          }
          expect(traces.size).toBe(model.length);
          expect(traces.evicted).toBe(evicted);
        }
        for (let k = 0; k <= 12; k++) expect(traces.peek(`t${k}`)?.id).toBe(model.some((e) => e.id === `t${k}`) ? `t${k}` : undefined);
      }),
      { numRuns: 1_000 },
    );
  });
});
