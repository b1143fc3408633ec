import type { LoopDetection, TraceLoopSummary } from '../../../src/index.js';
import type { PromSample } from './prometheus.js';
import type { RunRecord } from './agent-traffic.js';

/** The count connector's default for a missing attribute (collector-config/gateway.yaml). */
export const UNKNOWN = 'unknown';

/** Label order of the two contract metrics, as used for map keys below. */
export const DETECTION_LABELS = ['gen_ai_prompt_name', 'gen_ai_tool_name', 'loop_kind', 'loop_level'] as const;
export const TOOL_CALL_LABELS = ['gen_ai_prompt_name', 'gen_ai_tool_name'] as const;

export type Counts = Record<string, number>;

const key = (values: readonly string[]): string => values.join(' | ');

function add(counts: Counts, k: string, n = 1): void {
  counts[k] = (counts[k] ?? 0) + n;
}

/** Expected gen_ai_tool_loop_detections_total by prompt, tool, kind, level: from onLoop. */
export function expectedDetections(detections: readonly LoopDetection[]): Counts {
  const counts: Counts = {};
  for (const d of detections) add(counts, key([d.promptName ?? UNKNOWN, d.toolName, d.kind, d.level]));
  return sorted(counts);
}

/** Expected gen_ai_tool_calls_total by prompt and tool: from the tool spans the app created. */
export function expectedToolCalls(runs: readonly RunRecord[]): Counts {
  const counts: Counts = {};
  for (const run of runs) for (const tool of run.toolCalls) add(counts, key([run.template ?? UNKNOWN, tool]));
  return sorted(counts);
}

export const LOOP_TOKEN_LABELS = ['gen_ai_prompt_name', 'gen_ai_token_type'] as const;
export const LOOP_COST_LABELS = ['gen_ai_prompt_name'] as const;

/** Expected gen_ai_tool_loop_tokens_total by prompt and token type: the loop bills onTraceEnd reported. */
export function expectedLoopTokens(summaries: readonly TraceLoopSummary[]): Counts {
  const counts: Counts = {};
  for (const s of summaries) {
    if (s.loop === undefined) continue;
    if (s.loop.tokens.input > 0) add(counts, key([s.promptName ?? UNKNOWN, 'input']), s.loop.tokens.input);
    if (s.loop.tokens.output > 0) add(counts, key([s.promptName ?? UNKNOWN, 'output']), s.loop.tokens.output);
  }
  return sorted(counts);
}

/** Expected gen_ai_tool_loop_cost_usd_total by prompt (to a billionth of a dollar): the priced bills. */
export function expectedLoopCost(summaries: readonly TraceLoopSummary[]): Counts {
  const counts: Counts = {};
  for (const s of summaries) if (s.loop?.costUsd !== undefined && s.loop.costUsd > 0) add(counts, key([s.promptName ?? UNKNOWN]), s.loop.costUsd);
  return roundedValues(counts);
}

/** Values rounded to a billionth (sums of doubles differ in the last bits by the order they were added in). */
export function roundedValues(counts: Counts): Counts {
  return sorted(Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, Math.round(v * 1e9) / 1e9])));
}

/** A PromQL `sum by (...)` result as the same kind of map. */
export function countsFromVector(samples: readonly PromSample[], labels: readonly string[]): Counts {
  const counts: Counts = {};
  for (const s of samples) add(counts, key(labels.map((l) => s.metric[l] ?? '')), s.value);
  return sorted(counts);
}

export function sorted(counts: Counts): Counts {
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

export function total(counts: Counts): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}
