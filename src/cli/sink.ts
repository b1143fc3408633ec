import type { Writable } from 'node:stream';

/**
 * Text output that respects backpressure and ends quietly when its reader goes away. A write
 * that the stream cannot take at once leaves `ready()` pending until it drains (writing on
 * regardless held every detection in memory: 400 MB for a slow `--json` reader). EPIPE (the
 * reader exited: `| head`) closes the sink instead of becoming an uncaught 'error' with a stack
 * trace; the caller asks `closed` and stops producing.
 */
export class OutputSink {
  private isClosed = false;
  private pending: Promise<void> | undefined;
  private release: (() => void) | undefined;

  constructor(private readonly stream: Writable) {
    stream.on('error', () => this.close());
    stream.on('close', () => this.close());
  }

  /** The reader is gone (or the stream failed): nothing more will be written. */
  get closed(): boolean {
    return this.isClosed;
  }

  write(text: string): void {
    if (this.isClosed) return;
    if (this.stream.write(text) || this.pending) return;
    this.pending = new Promise<void>((resolve) => {
      this.release = resolve;
      this.stream.once('drain', () => this.settle());
    });
  }

  /** A promise while the stream is full, resolved when it drains or closes; undefined otherwise. */
  ready(): Promise<void> | undefined {
    return this.pending;
  }

  private settle(): void {
    const release = this.release;
    this.pending = undefined;
    this.release = undefined;
    release?.();
  }

  private close(): void {
    this.isClosed = true;
    this.settle();
  }
}
