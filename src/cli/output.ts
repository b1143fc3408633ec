import { formatSpend, formatTokens, formatUsd } from '../cost/format.js';
import type { SpendTotals, LoopSpendTotals } from '../cost/totals.js';
import type { LoopDetection } from '../detector/types.js';
import type { ReplayedTrace } from '../replay/types.js';
import type { ScanStats } from './scan.js';
import { jsonForTerminal, printable } from './terminal-text.js';

/** `--json`: one object per detection per line, with exactly the `LoopDetection` fields. */
export function detectionJsonLine(d: LoopDetection): string {
  return jsonForTerminal(JSON.stringify(d));
}

const n = (x: number): string => x.toLocaleString('en-US');
const plural = (count: number, word: string): string => `${n(count)} ${word}${count === 1 ? '' : 's'}`;

function pad(s: string, width: number): string {
  return s.length >= width ? s : s + ' '.repeat(width - s.length);
}

/**
 * Human output for one trace with loops: a header and one line per detection. Names come from
 * the trace file, so every one is made printable (no terminal control sequences, no forged lines).
 */
export function formatTrace(trace: ReplayedTrace): string {
  const header = `trace ${printable(trace.traceId)}${trace.promptName ? `  prompt ${printable(trace.promptName)}` : ''}  (${plural(trace.toolCalls, 'tool call')})`;
  const lines = trace.detections.flatMap((d) => {
    const level = d.level === 'critical' ? 'CRITICAL' : 'warning';
    const line = `  call ${pad(String(d.callIndex), 4)} ${pad(level, 8)}  ${pad(printable(d.kind), 13)} ${pad(printable(d.toolName), 18)} ${pad(`${d.count}×`, 4)} ${printable(d.message)}`;
    if (d.tokens === undefined) return [line];
    return [line, `${' '.repeat(12)}the repetitions cost ${formatTokens(d.tokens)}${d.costUsd !== undefined ? `, ${formatUsd(d.costUsd)}` : ''}`];
  });
  const loopSpend = trace.loopSpend;
  if (loopSpend !== undefined) {
    lines.push(`  loop spend: ${formatSpend(loopSpend.loop)} from the end of the loop's first call to the end of the trace`);
    lines.push(`              ${formatSpend(loopSpend.afterDetection)} of it after the first detection`);
  }
  return [header, ...lines].join('\n');
}

function costLine(t: SpendTotals): string {
  const usd = t.unpriced < t.traces ? `, ${formatUsd(t.usd)}${t.unpriced > 0 ? ' and unpriced tokens' : ''}` : '';
  return `${formatTokens({ input: t.input, output: t.output })}${usd}`;
}

/**
 * What loops cost across the scan: in total and per prompt template (the template of each trace's
 * first detection). Empty when no looping trace reported usage.
 */
export function formatCostSummary(totals: LoopSpendTotals, priced: boolean): string {
  if (totals.empty) return '';
  const t = totals.total;
  const unpriced = !priced
    ? ' (no prices in the configuration: tokens only)'
    : t.unpriced > 0
      ? ` (${t.unpriced} of them on a model without a price: tokens only)`
      : '';
  const lines = [
    `Loops cost ${costLine(t)} in ${n(t.traces)} trace${t.traces === 1 ? '' : 's'}${unpriced}; ${formatTokens({ input: t.afterInput, output: t.afterOutput })} of it after the first detection.`,
    'Per prompt template:',
  ];
  const ranked = totals.ranked();
  const width = Math.max(...ranked.map(([name]) => name.length));
  for (const [name, c] of ranked) lines.push(`  ${pad(name, width)}  ${costLine(c)} in ${n(c.traces)} trace${c.traces === 1 ? '' : 's'}`);
  return lines.join('\n');
}

export function formatSummary(stats: ScanStats): string {
  const failed = stats.failedFiles > 0 ? `; ${plural(stats.failedFiles, 'file')} could not be scanned` : '';
  // nothing readable is not "no loops": the errors above say why
  if (stats.files === 0 && stats.failedFiles > 0 && stats.spans === 0) return `Nothing scanned: ${plural(stats.failedFiles, 'file')} could not be scanned.`;
  const scanned = `${plural(stats.traces, 'trace')}, ${plural(stats.toolCalls, 'tool call')}, ${n(stats.spans)} spans in ${plural(stats.files, 'file')}${failed}`;
  const loops = stats.warnings + stats.criticals;
  if (loops === 0) return `No loops found${failed ? ' in what could be read' : ''} (${scanned}).`;
  return `Found ${plural(loops, 'loop detection')} (${n(stats.warnings)} warning, ${n(stats.criticals)} critical) in ${n(stats.tracesWithLoops)} of ${scanned}.`;
}

/** What the reader should know about the input itself: spans seen twice, traces split apart. */
export function inputNotes(stats: ScanStats): string[] {
  const notes: string[] = [];
  if (stats.duplicateSpans > 0) {
    notes.push(`${plural(stats.duplicateSpans, 'span')} seen before in the same trace (same span id: an export retried, or a file read twice) ${stats.duplicateSpans === 1 ? 'was' : 'were'} ignored`);
  }
  if (stats.lateSpans > 0) {
    notes.push(
      `${plural(stats.lateSpans, 'span')} arrived after ${stats.lateSpans === 1 ? 'its' : 'their'} trace had been evaluated (a file scanned twice, or a trace split far apart across files); ${stats.lateSpans === 1 ? 'it was' : 'they were'} evaluated as a separate part of the trace`,
    );
  }
  return notes;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export function formatProgress(stats: ScanStats, total: number | undefined): string {
  const pct = total ? ` (${Math.min(100, (stats.bytes / total) * 100).toFixed(0)}%)` : '';
  return `loopwatch: read ${formatBytes(stats.bytes)}${pct}, ${n(stats.spans)} spans, ${n(stats.traces)} traces, ${n(stats.warnings + stats.criticals)} loop detections`;
}
