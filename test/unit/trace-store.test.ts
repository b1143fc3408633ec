import { describe, expect, it } from 'vitest';
import { TraceStore } from '../../src/processor/trace-store.js';

interface State {
  touched: number;
  id: string;
}

function store(maxTraces = 3, idleMs = 60_000): { traces: TraceStore<State>; clock: { now: number } } {
  const clock = { now: 1_000_000 };
  return { traces: new TraceStore<State>({ maxTraces, idleMs, now: () => clock.now }), clock };
}

const make = (id: string) => (): State => ({ touched: 0, id });

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
});
