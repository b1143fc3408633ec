/**
 * Inline SVG charts for the report: no script, no external resource. Every mark carries data-*
 * attributes (series, bucket, value, call index) so a browser test can count what is drawn.
 */
import type { WorstTrace } from './collect.js';
import { axisLabel, type Buckets, durationLabel } from './time.js';

/** Text and attribute values from traces are untrusted: escape everything interpolated. */
export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/**
 * Okabe–Ito and Paul Tol's colours, the most distinguishable (also with common colour-vision
 * deficiencies) first. The orange and red that mark warning and critical detections are not in
 * it: in a call strip a tool must never look like a level. Twenty colours: a page with more
 * things than that repeats colours from the start.
 */
const PALETTE = [
  '#0072B2', '#009E73', '#CC79A7', '#56B4E9', '#332288', '#999933', '#AA4499', '#44AA99', '#88CCEE', '#661100',
  '#117733', '#882255', '#DDCC77', '#6699CC', '#F0E442', '#BBCC33', '#997700', '#EE99AA', '#225555', '#5D3A9B',
];
export const OTHER_COLOR = '#9aa0a6';
export const LEVEL_COLORS = { warning: '#E69F00', critical: '#C0392B' } as const;

/** The things a page colours: tools, prompt templates and loop kinds are different things even when they share a name. */
export type Dimension = 'tool' | 'template' | 'kind';

/**
 * One colour per thing for the whole page: a tool is the same colour in the tool chart and in
 * every call strip, and two things on the page share a colour only once the palette runs out.
 * Things are given colours in the order listed (most detections first).
 */
export class PageColors {
  private readonly colors = new Map<string, string>();

  constructor(order: ReadonlyArray<readonly [Dimension, string]>) {
    for (const [dimension, name] of order) {
      const key = `${dimension}\u0000${name}`;
      if (!this.colors.has(key)) this.colors.set(key, PALETTE[this.colors.size % PALETTE.length] ?? OTHER_COLOR);
    }
  }

  of(dimension: Dimension, name: string): string {
    return this.colors.get(`${dimension}\u0000${name}`) ?? OTHER_COLOR;
  }
}

const fmt = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/** A whole tick step of 1, 2 or 5 × 10^k giving at most `ticks` steps up to `max`. */
function tickStep(max: number, ticks = 5): number {
  const raw = Math.max(1, max / ticks);
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

export interface StackSeries {
  readonly name: string;
  readonly color: string;
  /** One value per bucket. */
  readonly values: readonly number[];
}

const W = 960;
const H = 250;
const M = { left: 46, right: 12, top: 12, bottom: 30 };

/** Stacked bars over time, one bar per bucket, one segment per non-zero series value. */
export function stackedBars(o: { readonly id: string; readonly label: string; readonly buckets: Buckets; readonly series: readonly StackSeries[] }): string {
  const n = o.buckets.starts.length;
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const totals = o.buckets.starts.map((_, i) => o.series.reduce((s, x) => s + (x.values[i] ?? 0), 0));
  const step = tickStep(Math.max(1, ...totals));
  const yMax = Math.ceil(Math.max(1, ...totals) / step) * step;
  const slot = plotW / Math.max(1, n);
  const barW = Math.max(1, slot * 0.78);
  const y = (v: number): number => M.top + plotH - (v / yMax) * plotH;
  const spansDays = (o.buckets.starts.at(-1) ?? 0) - (o.buckets.starts[0] ?? 0) >= 24 * 3_600_000;
  const parts: string[] = [];

  // Horizontal grid and y labels on whole-number ticks.
  for (let v = 0; v <= yMax; v += step) {
    parts.push(`<line class="grid" x1="${M.left}" x2="${W - M.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"/>`);
    parts.push(`<text class="tick" x="${M.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${fmt(v)}</text>`);
  }
  // X labels: about eight, on bucket starts.
  const every = Math.max(1, Math.ceil(n / 8));
  o.buckets.starts.forEach((t, i) => {
    if (i % every !== 0) return;
    const x = M.left + i * slot + slot / 2;
    parts.push(`<text class="tick" x="${x.toFixed(1)}" y="${H - 10}" text-anchor="middle">${escapeHtml(axisLabel(t, spansDays))}</text>`);
  });
  // Bars.
  o.buckets.starts.forEach((t, i) => {
    let base = 0;
    const x = M.left + i * slot + (slot - barW) / 2;
    for (const s of o.series) {
      const v = s.values[i] ?? 0;
      if (v <= 0) continue;
      const top = y(base + v);
      const h = y(base) - top;
      const when = `${axisLabel(t, true)} UTC, ${durationLabel(o.buckets.size)}`;
      parts.push(
        `<rect class="bar" data-series="${escapeHtml(s.name)}" data-bucket="${t}" data-value="${v}" x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${barW.toFixed(1)}" height="${Math.max(0.5, h).toFixed(1)}" fill="${s.color}"><title>${escapeHtml(`${s.name}: ${v} loop detection${v === 1 ? '' : 's'} (${when})`)}</title></rect>`,
      );
      base += v;
    }
  });
  parts.push(`<line class="axis" x1="${M.left}" x2="${W - M.right}" y1="${y(0)}" y2="${y(0)}"/>`);
  return `<svg class="chart" id="${escapeHtml(o.id)}" data-chart="${escapeHtml(o.id)}" data-bucket-ms="${o.buckets.size}" data-first-bucket="${o.buckets.starts[0] ?? 0}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeHtml(o.label)}">${parts.join('')}</svg>`;
}

/** Legend under a chart: swatch, name and total per series. */
export function legend(series: readonly { readonly name: string; readonly color: string; readonly total: number }[]): string {
  const items = series.map(
    (s) => `<li data-series="${escapeHtml(s.name)}"><span class="swatch" style="background:${s.color}"></span>${escapeHtml(s.name)} <b>${s.total}</b></li>`,
  );
  return `<ul class="legend">${items.join('')}</ul>`;
}

/**
 * One worst trace as a strip of its tool calls in order: one cell per call coloured by tool
 * (failed calls outlined), and a triangle over each call that completed loop evidence.
 */
export function callStrip(trace: WorstTrace, toolColor: (tool: string) => string): string {
  const n = trace.calls.length;
  const cell = Math.min(26, (W - 20) / Math.max(1, n));
  const width = Math.max(200, 10 + n * cell + 10);
  const top = 18;
  const h = 22;
  const parts: string[] = [];
  for (const c of trace.calls) {
    const x = 10 + (c.callIndex - 1) * cell;
    const fill = toolColor(c.toolName);
    const status = c.ok ? 'ok' : 'failed';
    const ms = Math.max(0, c.endTime - c.startTime);
    parts.push(
      `<rect class="call${c.ok ? '' : ' failed'}" data-call="${c.callIndex}" data-tool="${escapeHtml(c.toolName)}" x="${(x + 1).toFixed(1)}" y="${top}" width="${Math.max(1, cell - 2).toFixed(1)}" height="${h}" fill="${fill}"><title>${escapeHtml(`call ${c.callIndex}: ${c.toolName}, ${status}, ${Math.round(ms)} ms`)}</title></rect>`,
    );
  }
  for (const { detection: d } of trace.detections) {
    const cx = 10 + (d.callIndex - 1) * cell + cell / 2;
    const color = LEVEL_COLORS[d.level];
    parts.push(
      `<path class="marker" data-level="${d.level}" data-call="${d.callIndex}" d="M${(cx - 6).toFixed(1)} 2 L${(cx + 6).toFixed(1)} 2 L${cx.toFixed(1)} 14 Z" fill="${color}"><title>${escapeHtml(`call ${d.callIndex}: ${d.level} ${d.kind} on ${d.toolName} (${d.count}×)`)}</title></path>`,
    );
  }
  const every = Math.max(1, Math.ceil(n / 20));
  for (const c of trace.calls) {
    if ((c.callIndex - 1) % every !== 0 && c.callIndex !== n) continue;
    parts.push(`<text class="tick" x="${(10 + (c.callIndex - 0.5) * cell).toFixed(1)}" y="${top + h + 13}" text-anchor="middle">${c.callIndex}</text>`);
  }
  const height = top + h + 18;
  return `<svg class="strip" data-trace="${escapeHtml(trace.traceId)}" width="${width.toFixed(0)}" height="${height}" viewBox="0 0 ${width.toFixed(0)} ${height}" role="img" aria-label="${escapeHtml(`${n} tool calls of trace ${trace.traceId}`)}">${parts.join('')}</svg>`;
}
