import type { LoopDetection } from '../detector/types.js';
import type { ScanStats } from './scan.js';
import type { ReplayedTrace } from '../traces/trace-replay.js';

/** `--json`: one object per detection per line, with exactly the `LoopDetection` fields. */
export function detectionJsonLine(d: LoopDetection): string {
  return JSON.stringify(d);
}

const n = (x: number): string => x.toLocaleString('en-US');

function pad(s: string, width: number): string {
  return s.length >= width ? s : s + ' '.repeat(width - s.length);
}

/** Human output for one trace with loops: a header and one line per detection. */
export function formatTrace(trace: ReplayedTrace): string {
  const header = `trace ${trace.traceId}${trace.promptName ? `  prompt ${trace.promptName}` : ''}  (${n(trace.toolCalls)} tool calls)`;
  const lines = trace.detections.map((d) => {
    const level = d.level === 'critical' ? 'CRITICAL' : 'warning';
    return `  call ${pad(String(d.callIndex), 4)} ${pad(level, 8)}  ${pad(d.kind, 13)} ${pad(d.toolName, 18)} ${pad(`${d.count}×`, 4)} ${d.message}`;
  });
  return [header, ...lines].join('\n');
}

export function formatSummary(stats: ScanStats): string {
  const scanned = `${n(stats.traces)} trace${stats.traces === 1 ? '' : 's'}, ${n(stats.toolCalls)} tool call${stats.toolCalls === 1 ? '' : 's'}, ${n(stats.spans)} spans in ${n(stats.files)} file${stats.files === 1 ? '' : 's'}`;
  const loops = stats.warnings + stats.criticals;
  if (loops === 0) return `No loops found (${scanned}).`;
  return `Found ${n(loops)} loop detection${loops === 1 ? '' : 's'} (${n(stats.warnings)} warning, ${n(stats.criticals)} critical) in ${n(stats.tracesWithLoops)} of ${scanned}.`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export function formatProgress(stats: ScanStats, total: number | undefined): string {
  const pct = total ? ` (${Math.min(100, (stats.bytes / total) * 100).toFixed(0)}%)` : '';
  return `loopwatch: read ${formatBytes(stats.bytes)}${pct}, ${n(stats.spans)} spans, ${n(stats.traces)} traces, ${n(stats.warnings + stats.criticals)} loop detections`;
}
