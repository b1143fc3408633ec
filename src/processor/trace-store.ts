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

const SWEEP_EVERY_MS = 1_000;

/**
 * Per-trace state with bounded memory however many traces pass: a Map kept in least-recently-used
 * order (touching moves an entry to the end), trimmed to `maxTraces` on insert and swept for idle
 * entries at most once a second, from the oldest end, so a sweep costs only what it removes. Idle
 * times are read from the monotonic clock: a change of the wall clock cannot stretch or shrink them.
 *
 * The newest trace is held beside the Map until a newer one comes, so that an app running one
 * agent at a time never inserts into or deletes from the Map (bench: realistic mix, 2 %).
 */
export class TraceStore<T extends Touchable> {
  private readonly map = new Map<string, T>();
  /** The newest trace, not in `map`. */
  private hotId: string | undefined;
  private hot: T | undefined;
  private lastSweep = 0;
  private readonly now: () => number;
  /** Traces dropped because of `maxTraces` or `idleMs` (not by a root span ending). */
  evicted = 0;

  constructor(private readonly options: TraceStoreOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  get size(): number {
    return this.map.size + (this.hot !== undefined ? 1 : 0);
  }

  /** Looks up without touching. */
  peek(traceId: string): T | undefined {
    return traceId === this.hotId ? this.hot : this.map.get(traceId);
  }

  /** Looks up and marks as used. */
  get(traceId: string): T | undefined {
    const state = this.peek(traceId);
    if (state) this.touch(traceId, state);
    return state;
  }

  getOrCreate(traceId: string, create: () => T): T {
    const existing = this.peek(traceId);
    if (existing) {
      this.touch(traceId, existing);
      return existing;
    }
    return this.add(traceId, create());
  }

  /** Adds the state of a trace that has none (`peek` said so). */
  add(traceId: string, state: T): T {
    const now = this.now();
    state.touched = now;
    if (this.hotId !== undefined && this.hot !== undefined) this.map.set(this.hotId, this.hot);
    this.hotId = traceId;
    this.hot = state;
    while (this.size > this.options.maxTraces) this.dropOldest();
    this.maybeSweep(now);
    return state;
  }

  delete(traceId: string): void {
    if (traceId === this.hotId) this.dropHot();
    else this.map.delete(traceId);
  }

  clear(): void {
    this.map.clear();
    this.dropHot();
  }

  private dropHot(): void {
    this.hotId = undefined;
    this.hot = undefined;
  }

  private touch(traceId: string, state: T): void {
    const now = this.now();
    if (state !== this.hot) {
      // to the end: the Map iterates in insertion order, oldest first
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
    this.evicted++;
  }

  private maybeSweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    const limit = now - this.options.idleMs;
    if (this.hot !== undefined && this.hot.touched <= limit) {
      this.dropHot();
      this.evicted++;
    }
    for (const [id, state] of this.map) {
      if (state.touched > limit) break;
      this.map.delete(id);
      this.evicted++;
    }
  }
}
