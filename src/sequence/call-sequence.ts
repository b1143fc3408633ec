import { SmallMap } from './small-map.js';

/**
 * Parallel tool calls under one parent: the calls one model turn asked for start together, before
 * any of them ends. The batch stays open while any of its calls runs, but takes no new call once
 * one has ended: a call that starts later belongs to a later turn, even while an earlier call is
 * still running (a leaked, hung or timed-out call would otherwise gather every later call into its
 * batch, where repeats are not repetitions).
 */
export interface Batch {
  /** Unique in its sequence: the engine compares it with the other keys of the trace. */
  readonly key: string;
  /** Calls of the batch still running. */
  running: number;
  /** A call of the batch has ended. */
  ended: boolean;
}

/** The parent of calls made directly under the trace's (local) root, or of calls with no parent at all. */
const ROOT = '-';

/**
 * The order of one trace's tool calls, as the engine reads it: each call's 1-based index by start
 * time, the parallel batch (step) it belongs to, and, when it ends, whether it completed its batch.
 * One sequence per trace, fed start and end events: live by the span processor (span starts and
 * ends) and the dispatcher guard (a call judged, a call finished), and by the trace replayer from
 * the start and end times of exported spans (`replayOrder`). So every path gives the engine the
 * same steps for the same calls.
 */
export class CallSequence {
  private calls = 0;
  private batchCount = 0;
  /** The latest batch under each parent, by parent span id; made at the first call. */
  private latest: SmallMap<Batch> | undefined;

  /** Calls started so far. */
  get callCount(): number {
    return this.calls;
  }

  /** The 1-based index of a call starting now. */
  nextCallIndex(): number {
    return ++this.calls;
  }

  /**
   * The batch a call starting now under `parent` joins: the latest one under it while it takes
   * calls, else a new one. `sameRun`: the call starts in the same synchronous run as the batch's
   * first, so it joins even if the calls before it are already over (the guard answers a refused
   * call at once: `Promise.all` over a step's calls must still be one step).
   */
  batchFor(parent: string | undefined, sameRun = false): Batch {
    const latest = (this.latest ??= new SmallMap());
    const under = parent ?? ROOT;
    const current = latest.get(under);
    if (current !== undefined && (sameRun || (current.running > 0 && !current.ended))) return current;
    const batch: Batch = { key: this.newBatchKey(), running: 0, ended: false };
    latest.set(under, batch);
    return batch;
  }

  /** A call of `batch` runs. */
  enter(batch: Batch): void {
    batch.running++;
  }

  /** A call of `batch` ended: true when none of the batch is still running. The batch takes no new call. */
  leave(batch: Batch): boolean {
    batch.running = Math.max(0, batch.running - 1);
    batch.ended = true;
    return batch.running === 0;
  }

  /**
   * A call that starts and ends at once (it never stays open): it joins the batch open under
   * `parent` and leaves it, or is a batch of its own. Returns its batch key and whether it
   * completed the batch.
   */
  startedAndEnded(parent: string | undefined): { readonly key: string; readonly complete: boolean } {
    const batch = this.batchFor(parent);
    this.enter(batch);
    return { key: batch.key, complete: this.leave(batch) };
  }

  /** A key no other batch of the sequence has, for a call that joins nothing. */
  newBatchKey(): string {
    return String(this.batchCount++);
  }

  /** The span `parent` ended: all its children have started, and its batches take no new calls. */
  parentEnded(parent: string): void {
    this.latest?.delete(parent);
  }
}

/**
 * SDKs record span start times from `Date.now()` (whole milliseconds) and end times with
 * sub-millisecond precision, so a call that starts in the same millisecond its predecessor ended
 * seems to overlap it. Only an overlap longer than that quantum proves the calls ran in parallel.
 */
export const START_QUANTUM_MS = 1;

/**
 * The calls of a finished trace as the live processor met them, from their times (epoch ms) and
 * arrival order (`seq`: exporters receive spans in the order they ended): each call starts (in
 * start order, ties by arrival) after every call that ended more than `START_QUANTUM_MS` before
 * it, and ends (in end order, ties by arrival) into the same `CallSequence` the processor feeds.
 * `onEnd` gets every call, in the order the engine must record them, with its index, its batch's
 * key and whether it completed its batch.
 */
export function replaySequence<C extends { readonly start: number; readonly end: number; readonly seq: number; readonly parentId: string | undefined }>(
  calls: readonly C[],
  onEnd: (call: C, place: { readonly callIndex: number; readonly batch: string; readonly batchComplete: boolean }) => void,
): void {
  const sequence = new CallSequence();
  const byStart = [...calls].sort((a, b) => a.start - b.start || a.seq - b.seq);
  const running = new EndQueue<{ readonly call: C; readonly callIndex: number; readonly batch: Batch }>();
  const end = (): void => {
    const next = running.pop();
    if (next === undefined) return;
    const batchComplete = sequence.leave(next.batch);
    onEnd(next.call, { callIndex: next.callIndex, batch: next.batch.key, batchComplete });
  };
  for (const call of byStart) {
    while (running.size > 0 && running.peekEnd() - START_QUANTUM_MS <= call.start) end();
    const batch = sequence.batchFor(call.parentId);
    sequence.enter(batch);
    running.push(call.end, call.seq, { call, callIndex: sequence.nextCallIndex(), batch });
  }
  while (running.size > 0) end();
}

/** Running calls by end time, ties by arrival: a binary heap (a trace may hold thousands of parallel calls). */
class EndQueue<T> {
  private readonly items: { readonly end: number; readonly seq: number; readonly value: T }[] = [];

  get size(): number {
    return this.items.length;
  }

  peekEnd(): number {
    return this.items[0]?.end ?? Number.POSITIVE_INFINITY;
  }

  push(end: number, seq: number, value: T): void {
    const items = this.items;
    items.push({ end, seq, value });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top?.value;
    items[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < items.length && this.before(left, least)) least = left;
      if (right < items.length && this.before(right, least)) least = right;
      if (least === i) break;
      this.swap(i, least);
      i = least;
    }
    return top.value;
  }

  private before(a: number, b: number): boolean {
    const x = this.items[a] as { end: number; seq: number };
    const y = this.items[b] as { end: number; seq: number };
    return x.end < y.end || (x.end === y.end && x.seq < y.seq);
  }

  private swap(a: number, b: number): void {
    const items = this.items;
    const t = items[a] as (typeof items)[number];
    items[a] = items[b] as (typeof items)[number];
    items[b] = t;
  }
}
