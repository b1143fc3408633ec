/** One printed figure: what was measured, beside its target when the issue sets one. */
export interface Figure {
  readonly section: string;
  readonly name: string;
  /** Already formatted (a ratio, bytes, MB/s). */
  readonly value: string;
  readonly target?: string;
  /** Undefined when there is no target (an informative figure). */
  readonly met?: boolean;
  /** How the figure was obtained: spread, sample size. */
  readonly note?: string;
}

export const ratio = (r: number): string => `${r.toFixed(3)}×`;

export function bytes(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  if (abs >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (abs >= 1 << 10) return `${(n / (1 << 10)).toFixed(2)} KiB`;
  return `${Math.round(n)} B`;
}

/** Prints the figures of one section as an aligned table. */
export function printSection(title: string, figures: readonly Figure[]): void {
  const rows = figures.map((f) => [f.name, f.value, f.target ?? '–', f.met === undefined ? '' : f.met ? 'met' : 'NOT MET', f.note ?? '']);
  const header = ['figure', 'measured', 'target', '', 'how'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  console.log(`\n## ${title}\n`);
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(r));
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] ?? NaN) : ((s[m - 1] ?? NaN) + (s[m] ?? NaN)) / 2;
}

export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return (s[lo] ?? NaN) + ((s[hi] ?? NaN) - (s[lo] ?? NaN)) * (pos - lo);
}
