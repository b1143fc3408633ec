/**
 * What the store keeps in each trace's state: when it was last used, and its place in the order of
 * use (a list through the states themselves: no entry object per trace).
 */
export interface StoreLinks<T> {
  touched: number;
  /** The trace id it is stored under (set by the store). */
  storeId: string;
  /** The next less and more recently used states (set by the store). */
  older: T | undefined;
  newer: T | undefined;
}

export interface TraceStoreOptions {
  /** Most traces kept at once; the least recently used is dropped beyond it. */
  readonly maxTraces: number;
  /** A trace not touched for this long is dropped (its root span may never end here). */
  readonly idleMs: number;
  readonly now?: () => number;
}

const SWEEP_EVERY_MS = 1_000;

/**
 * Per-trace state with bounded memory however many traces pass: a Map from trace id to state, and
 * the states in a list from the least to the most recently used. A use moves a state to the
 * recent end; beyond `maxTraces` the least recently used goes, and a sweep (at most once a second)
 * drops the idle ones from the old end, so each costs only what it removes. Idle times are read
 * from the monotonic clock: a change of the wall clock cannot stretch or shrink them.
 *
 * The list, not the Map's insertion order, says which trace is oldest (bench/NOTES.md: one tool call
 * per trace, the root never ended).
 *
 * The newest trace is held beside the Map until a newer one comes, so that an app running one
 * agent at a time never inserts into or deletes from the Map (bench/NOTES.md, single-tool mix).
 */
export class TraceStore<T extends StoreLinks<T>> {
  private readonly map = new Map<string, T>();
  /** The newest trace, not in `map` (in the list like any other). */
  private hotId: string | undefined;
  private hot: T | undefined;
  /** The ends of the list of use. */
  private oldest: T | undefined;
  private newest: T | undefined;
  private count = 0;
  private lastSweep = 0;
  private readonly now: () => number;
  /** Traces dropped because of `maxTraces` or `idleMs` (not by a root span ending). */
  evicted = 0;

  constructor(private readonly options: TraceStoreOptions) {
    // Whole milliseconds: idle times need no finer grain, and a small integer is stored in the
    // state itself (bench/NOTES.md, memory per active trace, with the packings of history.ts).
    this.now = options.now ?? (() => Math.floor(performance.now()));
  }

  get size(): number {
    return this.count;
  }

  /** Looks up without touching. */
  peek(traceId: string): T | undefined {
    return traceId === this.hotId ? this.hot : this.map.get(traceId);
  }

  /** Looks up and marks as used. */
  get(traceId: string): T | undefined {
    const state = this.peek(traceId);
    if (state) this.touch(state);
    return state;
  }

  getOrCreate(traceId: string, create: () => T): T {
    const existing = this.peek(traceId);
    if (existing) {
      this.touch(existing);
      return existing;
    }
    return this.add(traceId, create());
  }

  /** Adds the state of a trace that has none (`peek` said so). */
  add(traceId: string, state: T): T {
    const now = this.now();
    state.touched = now;
    state.storeId = traceId;
    if (this.hotId !== undefined && this.hot !== undefined) this.map.set(this.hotId, this.hot);
    this.hotId = traceId;
    this.hot = state;
    this.link(state);
    this.count++;
    while (this.count > this.options.maxTraces && this.oldest !== undefined) {
      this.remove(this.oldest);
      this.evicted++;
    }
    this.maybeSweep(now);
    return state;
  }

  delete(traceId: string): void {
    const state = this.peek(traceId);
    if (state !== undefined) this.remove(state);
  }

  clear(): void {
    for (let s = this.oldest; s !== undefined; ) {
      const next = s.newer;
      s.older = s.newer = undefined;
      s = next;
    }
    this.map.clear();
    this.oldest = this.newest = undefined;
    this.hotId = this.hot = undefined;
    this.count = 0;
  }

  /** Appends at the most recently used end. */
  private link(state: T): void {
    state.newer = undefined;
    state.older = this.newest;
    if (this.newest !== undefined) this.newest.newer = state;
    else this.oldest = state;
    this.newest = state;
  }

  private unlink(state: T): void {
    const { older, newer } = state;
    if (older !== undefined) older.newer = newer;
    else this.oldest = newer;
    if (newer !== undefined) newer.older = older;
    else this.newest = older;
    state.older = state.newer = undefined;
  }

  private remove(state: T): void {
    this.unlink(state);
    if (state === this.hot) this.hotId = this.hot = undefined;
    else this.map.delete(state.storeId);
    this.count--;
  }

  private touch(state: T): void {
    const now = this.now();
    state.touched = now;
    if (state !== this.newest) {
      this.unlink(state);
      this.link(state);
    }
    this.maybeSweep(now);
  }

  private maybeSweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    const limit = now - this.options.idleMs;
    while (this.oldest !== undefined && this.oldest.touched <= limit) {
      this.remove(this.oldest);
      this.evicted++;
    }
  }
}
