import type { Spool, SpoolSegment } from './spool.js';

type SpanIds = { readonly traceId: Uint8Array; readonly spanId: Uint8Array };
type SettledSpan = SpanIds & { readonly segment: SpoolSegment };

/** Longest a forwarded span waits for a metrics export before it is written down as settled anyway. */
const SETTLE_WAIT_MS = 30_000;

/**
 * What serve writes down in its spool after the fact: which spans were settled (forwarded, or
 * given up) and which tool calls were counted in its metrics, so that a replay after a restart
 * sends again only what was not forwarded and counts again only what was not counted.
 *
 * When the metrics go out through an exporter, both wait for its next successful export: a
 * count made and never exported dies with the process, so after a restart it must be made
 * again, from spans replayed for that reason even if they were forwarded (a duplicate
 * downstream, which at-least-once allows; a count short is not). A settled span waits at most
 * `SETTLE_WAIT_MS`, so that failing metric exports do not fill the spool.
 */
export class SpoolLedger {
  private pendingCounts: { readonly at: number; readonly spans: readonly SpanIds[] }[] = [];
  private pendingSettled: { readonly at: number; readonly spans: readonly SettledSpan[] }[] = [];

  constructor(
    private readonly spool: Spool,
    /** Counts reach the world through an exporter: wait for `exported`. */
    private readonly afterExport: boolean,
  ) {}

  counted(spans: readonly SpanIds[]): void {
    if (spans.length === 0) return;
    if (this.afterExport) this.pendingCounts.push({ at: Date.now(), spans });
    else this.spool.counted(spans);
  }

  settled(spans: readonly SettledSpan[]): void {
    if (spans.length === 0) return;
    if (this.afterExport) this.pendingSettled.push({ at: Date.now(), spans });
    else this.spool.settled(spans);
  }

  /** Metrics collected at `collectedAt` (epoch ms) reached the downstream: what was counted and settled until then is written down. */
  exported(collectedAt: number): void {
    const counts = this.pendingCounts.filter((p) => p.at <= collectedAt);
    this.pendingCounts = this.pendingCounts.filter((p) => p.at > collectedAt);
    if (counts.length > 0) this.spool.counted(counts.flatMap((p) => p.spans));
    this.flushSettled(collectedAt);
  }

  /** Settled spans that waited too long for an export are written down anyway. */
  tick(now = Date.now()): void {
    this.flushSettled(now - SETTLE_WAIT_MS);
  }

  /** Everything settled so far (a clean shutdown, after the last export). */
  flush(): void {
    this.flushSettled(Number.POSITIVE_INFINITY);
  }

  private flushSettled(until: number): void {
    const done = this.pendingSettled.filter((p) => p.at <= until);
    if (done.length === 0) return;
    this.pendingSettled = this.pendingSettled.filter((p) => p.at > until);
    this.spool.settled(done.flatMap((p) => p.spans));
  }
}
