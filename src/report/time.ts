/** Time buckets and UTC labels for the report's charts (UTC, so a report reads the same anywhere). */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Bucket sizes a reader can reason about, smallest first. */
const BUCKETS = [MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 7 * DAY];

export interface Buckets {
  /** Bucket length in ms. */
  readonly size: number;
  /** Start of each bucket, epoch ms (aligned to multiples of the size). */
  readonly starts: readonly number[];
}

/** The smallest round bucket that splits [from, to] into at most `max` buckets. */
export function bucketsFor(from: number, to: number, max = 48): Buckets {
  const span = Math.max(0, to - from);
  const size = BUCKETS.find((b) => Math.floor(to / b) - Math.floor(from / b) + 1 <= max) ?? Math.ceil(span / max / DAY) * DAY;
  const first = Math.floor(from / size) * size;
  const count = Math.floor(to / size) - Math.floor(from / size) + 1;
  return { size, starts: Array.from({ length: count }, (_, i) => first + i * size) };
}

/** Index of the bucket holding `t`. */
export const bucketIndex = (b: Buckets, t: number): number => Math.floor((t - (b.starts[0] ?? 0)) / b.size);

const pad = (n: number): string => String(n).padStart(2, '0');

/** "08:15", or "11-21 08:15" when the chart spans days. */
export function axisLabel(t: number, withDate: boolean): string {
  const d = new Date(t);
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  return withDate ? `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${time}` : time;
}

/** "2026-11-21 08:15:30 UTC" */
export function utc(t: number): string {
  if (!Number.isFinite(t)) return '—';
  const d = new Date(t);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} UTC`;
}

/** "5 min", "1 h", "1 day" */
export function durationLabel(ms: number): string {
  if (ms >= DAY) return `${ms / DAY} day${ms === DAY ? '' : 's'}`;
  if (ms >= HOUR) return `${ms / HOUR} h`;
  if (ms >= MINUTE) return `${ms / MINUTE} min`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}
