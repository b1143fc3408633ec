import type { LoopDetection } from '../detector/types.js';
import type { LoopSpend, Spend } from './trace-cost.js';

/**
 * What a trace with loops cost, when it ends: `onTraceEnd`'s argument, the `loop.summary` span
 * event on its root, and what scan and serve add up per prompt template.
 */
export interface TraceLoopSummary {
  readonly traceId: string;
  /** Prompt template and agent of the first detection (where its loop spend is counted). */
  readonly promptName?: string;
  readonly agentName?: string;
  /** Detections in the trace, both levels. */
  readonly detections: number;
  readonly firstDetection: LoopDetection;
  /** A critical detection stopped the run (enforce mode: `abortSignal()` was aborted). */
  readonly stopped: boolean;
  /**
   * Model calls from the end of the first call of the first detection's evidence to the end of
   * the trace: what the loop cost. Absent when the trace's model calls report no usage.
   */
  readonly loop?: Spend;
  /** Of those, the model calls after the first detection: what the loop went on costing once detected. */
  readonly afterDetection?: Spend;
}

export function traceLoopSummary(first: LoopDetection, detections: number, stopped: boolean, loopSpend: LoopSpend | undefined): TraceLoopSummary {
  return {
    traceId: first.traceId,
    ...(first.promptName !== undefined ? { promptName: first.promptName } : {}),
    ...(first.agentName !== undefined ? { agentName: first.agentName } : {}),
    detections,
    firstDetection: first,
    stopped,
    ...(loopSpend !== undefined ? { loop: loopSpend.loop, afterDetection: loopSpend.afterDetection } : {}),
  };
}
