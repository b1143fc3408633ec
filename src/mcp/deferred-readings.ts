/**
 * Server messages read after they are relayed: a tool result reaches the client first, and its
 * parse, fingerprint and the engine's update happen once its last bytes are written (a message
 * larger than the pipe or socket buffer is written over several turns of the event loop, which
 * a reading in between would hold up), and once the proxy has slept `READ_AFTER_MS`: the kernel
 * wakes the client on the core that wrote to it, where it waits while the proxy keeps that core
 * busy, so the reading waits for the proxy's next sleep (bench/NOTES.md, issue 31 round 3). The
 * owner drains them first whenever it is told anything else (`drain`), so what it decides next
 * reads the same history as if every message had been read on arrival, in arrival order.
 * Bounded: past `MAX_WAITING` messages or `MAX_WAITING_BYTES`, the queue is read at once,
 * written or not.
 */

/** When a message arrived: the owner's clock, and `performance.now()` (the span's clock). */
export interface Arrival {
  readonly at: number;
  readonly perfAt: number;
}

/** Says that a message's relay is written (or can no longer be): it may be read now. */
export type Relayed = () => void;

interface Waiting<S> {
  readonly session: S;
  readonly parse: () => unknown;
  readonly bytes: number;
  readonly arrival: Arrival;
  relayed: boolean;
}

const MAX_WAITING = 256;
const READ_AFTER_MS = 1;
const MAX_WAITING_BYTES = 16 * 1024 * 1024;

export class DeferredReadings<S> {
  private queue: Waiting<S>[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly readRelayed = (): void => {
    this.timer = undefined;
    let n = 0;
    while (n < this.queue.length && (this.queue[n] as Waiting<S>).relayed) n++;
    // in arrival order: a message still being written holds the ones behind it
    this.readFirst(n);
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

  /** A message to read once relayed: call what this returns when its last bytes are written. */
  add(session: S, parse: () => unknown, bytes: number): Relayed {
    const waiting: Waiting<S> = { session, parse, bytes, arrival: { at: this.clock(), perfAt: performance.now() }, relayed: false };
    this.queue.push(waiting);
    this.bytes += bytes;
    if (this.queue.length >= MAX_WAITING || this.bytes >= MAX_WAITING_BYTES) this.drain();
    return () => {
      if (waiting.relayed) return;
      waiting.relayed = true;
      if (this.queue[0] === waiting) this.schedule();
    };
  }

  /** Reads everything waiting, oldest first, relayed or not (cheap when nothing is). */
  drain(): void {
    while (this.queue.length > 0) this.readFirst(this.queue.length);
    // calls back to back: the next one read the queue, so the proxy is not woken for nothing
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private readFirst(n: number): void {
    if (n === 0) return;
    const taken = this.queue.splice(0, n);
    for (const w of taken) {
      this.bytes -= w.bytes;
      try {
        const msg = w.parse();
        if (msg !== undefined) this.read(w.session, msg, w.arrival);
      } catch (e) {
        this.onProblem(e);
      }
    }
    // what was behind a message written late may be relayed already
    if (this.queue[0]?.relayed === true) this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(this.readRelayed, READ_AFTER_MS).unref();
  }
}
