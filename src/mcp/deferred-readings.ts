/**
 * Server messages read after they are relayed: a tool result reaches the client first, and its
 * parse, fingerprint and the engine's update happen after the write, on `setImmediate`. The
 * owner drains them first whenever it is told anything else (`drain`), so what it decides next
 * reads the same history as if every message had been read on arrival, in arrival order.
 * Bounded: past `MAX_WAITING` messages or `MAX_WAITING_BYTES`, the queue is read at once.
 */

/** When a message arrived: the owner's clock, and `performance.now()` (the span's clock). */
export interface Arrival {
  readonly at: number;
  readonly perfAt: number;
}

interface Waiting<S> {
  readonly session: S;
  readonly parse: () => unknown;
  readonly bytes: number;
  readonly arrival: Arrival;
}

const MAX_WAITING = 256;
const MAX_WAITING_BYTES = 16 * 1024 * 1024;

export class DeferredReadings<S> {
  private queue: Waiting<S>[] = [];
  private bytes = 0;
  private scheduled = false;
  private readonly drainSoon = (): void => {
    this.scheduled = false;
    this.drain();
  };

  /**
   * `read`: the owner's reading of one parsed message (parsed as undefined: not JSON, skipped);
   * `onProblem`: a defect of `parse` or `read`, which must not reach the event loop.
   */
  constructor(
    private readonly read: (session: S, msg: unknown, arrival: Arrival) => void,
    private readonly clock: () => number,
    private readonly onProblem: (e: unknown) => void,
  ) {}

  add(session: S, parse: () => unknown, bytes: number): void {
    this.queue.push({ session, parse, bytes, arrival: { at: this.clock(), perfAt: performance.now() } });
    this.bytes += bytes;
    if (this.queue.length >= MAX_WAITING || this.bytes >= MAX_WAITING_BYTES) return this.drain();
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drainSoon);
    }
  }

  /** Reads everything waiting, oldest first (cheap when nothing is). */
  drain(): void {
    while (this.queue.length > 0) {
      // taken whole: a reading that adds to the queue (none does today) is read in the next round
      const batch = this.queue;
      this.queue = [];
      this.bytes = 0;
      for (const w of batch) {
        try {
          const msg = w.parse();
          if (msg !== undefined) this.read(w.session, msg, w.arrival);
        } catch (e) {
          this.onProblem(e);
        }
      }
    }
  }
}
