/**
 * The self-contained HTML report of a scan: inline CSS and SVG only, and a Content-Security-Policy
 * that forbids scripts and every network fetch, so it can be mailed, attached to a ticket or
 * opened offline. Tool arguments and results never reach it: only names, counts, times and the
 * detection messages (which are built from names and counts).
 */
import { formatSpend, formatTokens, formatUsd } from '../cost/format.js';
import type { SpendTotals } from '../cost/totals.js';
import type { LoopDetection, LoopKind, LoopLevel } from '../detector/types.js';
import { NO_TEMPLATE, type ReportData, type TimedDetection, type WorstTrace } from './collect.js';
import { REPORT_CSS } from './style.js';
import { callStrip, escapeHtml, LEVEL_COLORS, legend, OTHER_COLOR, PageColors, stackedBars, type Dimension, type StackSeries } from './svg.js';
import { bucketIndex, bucketsFor, durationLabel, utc, type Buckets } from './time.js';

export interface ReportMeta {
  readonly version: string;
  /** Inputs as shown to readers: relative to the working folder, or only the file name (never an absolute path). */
  readonly inputs: readonly string[];
  /** Files scanned to their end. */
  readonly files: number;
  readonly spans: number;
  /** Files that could not be scanned (listed, not counted as scanned): display name and what went wrong. */
  readonly failed?: ReadonlyArray<{ readonly name: string; readonly message: string }>;
}

/** Charts show at most this many series; the rest are summed as "other". */
const MAX_SERIES = 8;
const OTHER = 'other';

const n = (x: number): string => x.toLocaleString('en-US');
const per100 = (loops: number, calls: number): string => (calls > 0 ? ((100 * loops) / calls).toFixed(1) : '—');

type Key = (d: TimedDetection) => string;

const KEYS: Readonly<Record<Dimension, Key>> = {
  template: (d) => d.detection.promptName ?? NO_TEMPLATE,
  tool: (d) => d.detection.toolName,
  kind: (d) => d.detection.kind,
};

/** Names by detections, most first (ties by name). */
function ranked(detections: readonly TimedDetection[], key: Key): string[] {
  const totals = new Map<string, number>();
  for (const d of detections) totals.set(key(d), (totals.get(key(d)) ?? 0) + 1);
  return [...totals].sort(([a, x], [b, y]) => y - x || a.localeCompare(b)).map(([name]) => name);
}

/** Series by total, largest first, the tail folded into "other"; values per bucket. */
function seriesOf(detections: readonly TimedDetection[], buckets: Buckets, dimension: Dimension, colors: PageColors): { series: StackSeries[]; totals: Map<string, number> } {
  const key = KEYS[dimension];
  const totals = new Map<string, number>();
  for (const d of detections) totals.set(key(d), (totals.get(key(d)) ?? 0) + 1);
  const ranked = [...totals].sort(([a, x], [b, y]) => y - x || a.localeCompare(b)).map(([name]) => name);
  const shown = ranked.length > MAX_SERIES ? ranked.slice(0, MAX_SERIES - 1) : ranked;
  const names = ranked.length > shown.length ? [...shown, OTHER] : shown;
  const values = new Map(names.map((name) => [name, buckets.starts.map(() => 0)]));
  for (const d of detections) {
    const name = shown.includes(key(d)) ? key(d) : OTHER;
    const row = values.get(name);
    const i = bucketIndex(buckets, d.time);
    if (row && i >= 0 && i < row.length) row[i] = (row[i] ?? 0) + 1;
  }
  const folded = new Map(names.map((name) => [name, name === OTHER ? ranked.slice(shown.length).reduce((s, k) => s + (totals.get(k) ?? 0), 0) : (totals.get(name) ?? 0)]));
  return {
    series: names.map((name) => ({ name, color: name === OTHER && !shown.includes(OTHER) ? OTHER_COLOR : colors.of(dimension, name), values: values.get(name) ?? [] })),
    totals: folded,
  };
}

function chartSection(id: string, title: string, explain: string, data: ReportData, buckets: Buckets, dimension: Dimension, colors: PageColors): string {
  const { series, totals } = seriesOf(data.detections, buckets, dimension, colors);
  return `<section class="card">
<h2>${escapeHtml(title)}</h2>
<p class="explain">${escapeHtml(explain)} One bar per ${escapeHtml(durationLabel(buckets.size))} (UTC).</p>
${stackedBars({ id, label: title, buckets, series })}
${legend(series.map((s) => ({ name: s.name, color: s.color, total: totals.get(s.name) ?? 0 })))}
</section>`;
}

function kpis(data: ReportData): string {
  const criticals = data.tracesStopped;
  const tile = (label: string, value: string, cls: string, hint: string): string =>
    `<div class="kpi ${cls}"><div class="value">${escapeHtml(value)}</div><div class="label">${escapeHtml(label)}</div><div class="hint">${escapeHtml(hint)}</div></div>`;
  const c = data.costs.total;
  const spent = data.costs.empty
    ? ''
    : `\n${tile('spent in loops', usdOrTokens(c), 'bad', `${formatTokens({ input: c.input, output: c.output })} in ${n(c.traces)} looping trace${c.traces === 1 ? '' : 's'}, from each loop's first call on`)}`;
  return `<section class="kpis">
${tile('loop detections', n(data.detections.length), data.detections.length > 0 ? 'watch' : 'ok', 'a loop counts at its warning and again if it turns critical')}
${tile('critical stops', n(criticals), criticals > 0 ? 'bad' : 'ok', 'runs that were, or should have been, stopped')}
${tile('traces with loops', `${n(data.tracesWithLoops)} of ${n(data.traces)}`, data.tracesWithLoops > 0 ? 'watch' : 'ok', 'agent runs with at least one detection')}
${tile('loops per 100 tool calls', per100(data.detections.length, data.toolCalls), 'neutral', `${n(data.toolCalls)} tool calls scanned`)}${spent}
</section>`;
}

/** `$0.035`, or the tokens when nothing of it is priced; `+` when only part is. */
function usdOrTokens(c: SpendTotals): string {
  if (c.unpriced === c.traces) return `${n(c.input + c.output)} tokens`;
  return `${formatUsd(c.usd)}${c.unpriced > 0 ? '+' : ''}`;
}

/** A detection's cost cell: tokens and USD of the model calls behind its repetitions. */
function detectionCost(d: LoopDetection): string {
  if (d.tokens === undefined) return '—';
  return `${n(d.tokens.input + d.tokens.output)} tok${d.costUsd !== undefined ? ` · ${formatUsd(d.costUsd)}` : ''}`;
}

function templatesTable(data: ReportData): string {
  const costs = !data.costs.empty;
  const costCells = (name: string): string => {
    if (!costs) return '';
    const c = data.costs.byTemplate.get(name);
    if (c === undefined) return '<td>—</td><td>—</td>';
    return `<td>${n(c.input + c.output)}</td><td>${c.unpriced === c.traces ? '—' : usdOrTokens(c)}</td>`;
  };
  const rows = [...data.templates]
    .sort(([a, x], [b, y]) => y.detections - x.detections || y.toolCalls - x.toolCalls || a.localeCompare(b))
    .map(
      ([name, t]) =>
        `<tr data-template="${escapeHtml(name)}"><th scope="row">${escapeHtml(name)}</th><td>${n(t.traces)}</td><td>${n(t.tracesWithLoops)}</td><td>${n(t.toolCalls)}</td><td>${n(t.detections)}</td><td>${per100(t.detections, t.toolCalls)}</td><td class="${t.criticals > 0 ? 'bad' : ''}">${n(t.criticals)}</td>${costCells(name)}</tr>`,
    );
  const costHead = costs ? '<th>Tokens in loops</th><th>Cost of loops</th>' : '';
  const costExplain = costs
    ? ' Tokens and cost of loops: the model calls of each looping trace from the end of its loop\'s first call to the end of the trace, under the template of its first detection ("—": no price for its model).'
    : '';
  return `<section class="card">
<h2>Prompt templates</h2>
<p class="explain">Per prompt template (gen_ai.prompt.name; "unknown" when a run has none), as on the Grafana overview dashboard.${costExplain}</p>
<table class="templates"><thead><tr><th>Prompt template</th><th>Traces</th><th>With loops</th><th>Tool calls</th><th>Loop detections</th><th>Per 100 calls</th><th>Critical stops</th>${costHead}</tr></thead>
<tbody>${rows.join('\n')}</tbody></table>
</section>`;
}

const offset = (t: number, start: number): string => `+${((t - start) / 1000).toFixed(1)} s`;

function traceArticle(trace: WorstTrace, rank: number, colors: PageColors): string {
  const toolColor = (tool: string): string => colors.of('tool', tool);
  const tools = [...new Set(trace.calls.map((c) => c.toolName))];
  const failed = trace.calls.filter((c) => !c.ok).length;
  const rows = trace.detections.map(({ time, detection: d }) => {
    const level: LoopLevel = d.level;
    const kind: LoopKind = d.kind;
    const cost = trace.loopSpend !== undefined ? `<td>${escapeHtml(detectionCost(d))}</td>` : '';
    return `<tr class="${level}"><td>${d.callIndex}</td><td>${escapeHtml(offset(time, trace.startTime))}</td><td><span class="pill" style="background:${LEVEL_COLORS[level]}">${level}</span></td><td>${escapeHtml(kind)}</td><td>${escapeHtml(d.toolName)}</td><td>${d.count}×</td>${cost}<td class="msg">${escapeHtml(d.message)}</td></tr>`;
  });
  const loopSpendText =
    trace.loopSpend !== undefined
      ? `\n<p class="explain loop-spend">Loop spend: ${escapeHtml(formatSpend(trace.loopSpend.loop))} from the end of the loop's first call to the end of the trace; ${escapeHtml(formatSpend(trace.loopSpend.afterDetection))} of it after the first detection.</p>`
      : '';
  return `<article class="card trace" data-trace="${escapeHtml(trace.traceId)}" data-rank="${rank}">
<h3>#${rank} <code>${escapeHtml(trace.traceId)}</code> <span class="tag">${escapeHtml(trace.prompt)}</span></h3>
<p class="explain">Started ${escapeHtml(utc(trace.startTime))} · ${n(trace.calls.length)} tool calls${failed > 0 ? ` (${failed} failed)` : ''} · ${trace.detections.length} detection${trace.detections.length === 1 ? '' : 's'}, ${trace.criticals} critical</p>${loopSpendText}
${callStrip(trace, toolColor)}
<ul class="legend small">${tools.map((t) => `<li data-tool="${escapeHtml(t)}"><span class="swatch" style="background:${toolColor(t)}"></span>${escapeHtml(t)}</li>`).join('')}<li><span class="swatch failed"></span>failed call</li><li><span class="tri" style="border-top-color:${LEVEL_COLORS.warning}"></span>warning</li><li><span class="tri" style="border-top-color:${LEVEL_COLORS.critical}"></span>critical</li></ul>
<table class="detections"><thead><tr><th>Call</th><th>At</th><th>Level</th><th>Kind</th><th>Tool</th><th>Count</th>${trace.loopSpend !== undefined ? '<th title="the model calls that asked for the repetitions">Cost</th>' : ''}<th>What happened</th></tr></thead><tbody>${rows.join('')}</tbody></table>
</article>`;
}

/** Files that could not be scanned: listed with what went wrong, so "N files" is never read as all of them. */
function failedFiles(meta: ReportMeta): string {
  const failed = meta.failed ?? [];
  if (failed.length === 0) return '';
  const rows = failed.map((f) => `<tr data-failed-file="${escapeHtml(f.name)}"><td><code>${escapeHtml(f.name)}</code></td><td>${escapeHtml(f.message)}</td></tr>`);
  return `<section class="card failed">
<h2>${n(failed.length)} file${failed.length === 1 ? '' : 's'} could not be scanned</h2>
<p class="explain">Not counted above: the figures on this page cover the ${n(meta.files)} file${meta.files === 1 ? '' : 's'} that could be read.</p>
<table class="failed-files"><thead><tr><th>File</th><th>Problem</th></tr></thead><tbody>${rows.join('')}</tbody></table>
</section>`;
}

export function renderReport(data: ReportData, meta: ReportMeta): string {
  const hasTime = Number.isFinite(data.from) && Number.isFinite(data.to);
  const buckets = bucketsFor(hasTime ? data.from : 0, hasTime ? data.to : 0);
  // One colour per thing across the page: tools first (the tool chart and every call strip),
  // then prompt templates, then loop kinds, each most detections first.
  const tools = ranked(data.detections, KEYS.tool);
  const quiet = [...new Set(data.worst.flatMap((t) => t.calls.map((c) => c.toolName)))].filter((t) => !tools.includes(t)).sort();
  const colors = new PageColors([
    ...[...tools, ...quiet].map((t) => ['tool', t] as const),
    ...ranked(data.detections, KEYS.template).map((t) => ['template', t] as const),
    ...ranked(data.detections, KEYS.kind).map((k) => ['kind', k] as const),
  ]);
  const worst = data.worst.map((t, i) => traceArticle(t, i + 1, colors)).join('\n');
  const body =
    data.detections.length === 0
      ? `<section class="card"><h2>No loops found</h2><p class="explain">None of the ${n(data.traces)} traces (${n(data.toolCalls)} tool calls) shows a tool-call loop.</p></section>`
      : [
          chartSection('by-template', 'Loop detections over time by prompt template', 'Which prompt template loops, and when.', data, buckets, 'template', colors),
          templatesTable(data),
          chartSection('by-tool', 'Loop detections over time by tool', 'Which tools the agents loop on.', data, buckets, 'tool', colors),
          chartSection('by-kind', 'Loop detections over time by kind', 'repeat: same call, same outcome; no_progress: rephrased calls, same result; cycle: steps undoing each other; error_pattern: the same failure again; unknown_tool: a tool that does not exist.', data, buckets, 'kind', colors),
          `<section><h2 class="section">Worst traces</h2><p class="explain">The ${data.worst.length} traces with the most critical stops, then detections. Each cell is one tool call in order; a triangle marks the call that completed loop evidence. Arguments and results are never shown.</p>\n${worst}</section>`,
        ].join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>loopwatch scan report</title>
<style>${REPORT_CSS}</style>
</head>
<body>
<header>
<h1>loopwatch scan report</h1>
<p class="sub">${n(data.traces)} traces, ${n(data.toolCalls)} tool calls, ${n(meta.spans)} spans in ${n(meta.files)} file${meta.files === 1 ? '' : 's'} · ${hasTime ? `${escapeHtml(utc(data.from))} to ${escapeHtml(utc(data.to))}` : 'no tool calls'}</p>
</header>
<main>
${kpis(data)}
${failedFiles(meta)}
${body}
</main>
<footer>loopwatch ${escapeHtml(meta.version)} · scanned ${meta.inputs.map((i) => `<code>${escapeHtml(i)}</code>`).join(', ')} · times in UTC · no tool arguments or results are included in this report</footer>
</body>
</html>
`;
}
