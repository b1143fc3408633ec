import { MEMORY_SHARES } from './limits.js';

/** Bytes of data in memory, by where they are. */
export interface MemoryUsage {
  /** Request bodies being read, decompressed and decoded. */
  readonly reading: number;
  /** Open traces: their spans and the replayer's state for them. */
  readonly held: number;
  /** Completed spans waiting for the downstream (or being sent). */
  readonly queued: number;
  /** Completed traces remembered for their late spans. */
  readonly retained: number;
}

/**
 * One memory limit for everything serve keeps, in bytes (estimated from content, see
 * `spanBytes`): new data is refused while the total is at the limit, so memory stays bounded
 * however the data arrives and however slowly the downstream takes it. Held traces move into the
 * forward queue without changing the total; a body is counted as it is read.
 */
export class MemoryBudget {
  reading = 0;
  queued = 0;

  constructor(
    readonly limit: number,
    private readonly traces: () => { readonly held: number; readonly retained: number },
  ) {}

  get heldShare(): number {
    return Math.floor(this.limit * MEMORY_SHARES.held);
  }

  get traceShare(): number {
    return Math.floor(this.limit * MEMORY_SHARES.trace);
  }

  get retainedShare(): number {
    return Math.floor(this.limit * MEMORY_SHARES.retained);
  }

  usage(): MemoryUsage {
    const { held, retained } = this.traces();
    return { reading: this.reading, held, queued: this.queued, retained };
  }

  get used(): number {
    const { held, retained } = this.traces();
    return this.reading + held + this.queued + retained;
  }

  /**
   * True while new data must wait: less than a sixteenth of the limit is free, the room a
   * request being read may still take (it is stopped at the limit itself, see `over`).
   */
  get full(): boolean {
    return this.used >= this.limit - this.limit / 16;
  }

  /** Past the limit: a body being read is refused there. */
  get over(): boolean {
    return this.used > this.limit;
  }
}
