/** Anything kept per trace: it only needs to remember when it was last used. */
export interface Touchable {
  touched: number;
}

export interface TraceStoreOptions {
  /** Most traces kept at once; the least recently used is dropped beyond it. */
  readonly maxTraces: number;
  /** A trace not touched for this long is dropped (its root span may never end here). */
  readonly idleMs: number;
  readonly now?: () => number;
}

/**
 * Milliseconds from the monotonic clock: a change of the wall clock cannot stretch or shrink an
 * idle time, and the call is cheaper than `Date.now` (a runtime call in V8). It is made once per
 * new trace and once per tool call.
 */
function monotonicClock(): () => number {
  // read once: in Node the global `performance` is a getter, dear to call on every use
  const clock = performance;
  return () => clock.now();
}

const SWEEP_EVERY_MS = 1_000;
const REORDER_AFTER_MS = 1_000;

/**
 * Per-trace state with bounded memory however many traces pass: a Map kept in least-recently-used
 * order to the second (touching moves an entry to the end when it was last moved over a second
 * ago), trimmed to `maxTraces` on insert and swept for idle entries at most once a second, from
 * the oldest end, so a sweep costs only what it removes.
 *
 * The newest trace is held beside the Map, and enters it only when a newer one comes. In an app
 * that runs one agent at a time a trace comes and goes without touching the Map, and a Map that
 * goes from one entry to none reallocates its table on every delete: that was a tenth of
 * loopwatch's cost per trace.
 */
export class TraceStore<T extends Touchable> {
  private readonly map = new Map<string, T>();
  /** The newest trace, not in `map`. */
  private hotId: string | undefined;
  private hot: T | undefined;
  /**
   * The last trace looked up: spans of one trace come in runs, and the SDK hands every span of a
   * trace the same trace-id string, so this is usually one pointer comparison instead of a hash.
   */
  private lastId: string | undefined;
  private last: T | undefined;
  private lastSweep = 0;
  private readonly now: () => number;
  /** Traces dropped because of `maxTraces` or `idleMs` (not by a root span ending). */
  evicted = 0;

  constructor(private readonly options: TraceStoreOptions) {
    this.now = options.now ?? monotonicClock();
  }

  get size(): number {
    return this.map.size + (this.hot !== undefined ? 1 : 0);
  }

  /** Looks up without touching. */
  peek(traceId: string): T | undefined {
    if (traceId === this.lastId) return this.last;
    const state = this.find(traceId);
    this.lastId = traceId;
    this.last = state;
    return state;
  }

  /** Looks up and marks as used. */
  get(traceId: string): T | undefined {
    const state = this.find(traceId);
    if (state) this.touch(traceId, state);
    return state;
  }

  getOrCreate(traceId: string, create: () => T): T {
    const existing = this.find(traceId);
    if (existing) {
      this.touch(traceId, existing);
      return existing;
    }
    return this.add(traceId, create());
  }

  /**
   * Adds the state of a trace that has none (`peek` said so): the caller builds it, so that its
   * constructor is called where the compiler sees it, not through a callback.
   */
  add(traceId: string, state: T): T {
    const now = this.now();
    state.touched = now;
    if (this.hotId !== undefined && this.hot !== undefined) this.map.set(this.hotId, this.hot);
    this.hotId = traceId;
    this.hot = state;
    this.forgetLast();
    while (this.size > this.options.maxTraces) this.dropOldest();
    this.maybeSweep(now);
    return state;
  }

  delete(traceId: string): void {
    if (traceId === this.hotId) this.dropHot();
    else this.map.delete(traceId);
    this.forgetLast();
  }

  clear(): void {
    this.map.clear();
    this.dropHot();
    this.forgetLast();
  }

  private find(traceId: string): T | undefined {
    if (traceId === this.hotId) return this.hot;
    // an empty map still hashes the id (a new string for every trace): not worth it
    return this.map.size === 0 ? undefined : this.map.get(traceId);
  }

  private dropHot(): void {
    this.hotId = undefined;
    this.hot = undefined;
  }

  private forgetLast(): void {
    this.lastId = undefined;
    this.last = undefined;
  }

  private touch(traceId: string, state: T): void {
    const now = this.now();
    // Re-inserting keeps the Map in order of use (iteration order is insertion order), but costs a
    // delete and an insert, and the deleted slots make the Map rehash: on the hot path of every
    // tool call that was a tenth of loopwatch's cost. Order only matters to idle eviction, which
    // sweeps once a second, so an entry moves at most once a second.
    if (now - state.touched >= REORDER_AFTER_MS && state !== this.hot) {
      this.map.delete(traceId);
      this.map.set(traceId, state);
    }
    state.touched = now;
    this.maybeSweep(now);
  }

  private dropOldest(): void {
    const first = this.map.keys().next();
    if (first.done) {
      if (this.hot === undefined) return;
      this.dropHot();
    } else this.map.delete(first.value);
    this.forgetLast();
    this.evicted++;
  }

  private maybeSweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    const limit = now - this.options.idleMs;
    if (this.hot !== undefined && this.hot.touched <= limit) {
      this.dropHot();
      this.forgetLast();
      this.evicted++;
    }
    for (const [id, state] of this.map) {
      if (state.touched > limit) break;
      this.map.delete(id);
      this.forgetLast();
      this.evicted++;
    }
  }
}
