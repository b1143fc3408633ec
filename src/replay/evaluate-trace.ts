import type { PriceTable } from '../cost/prices.js';
import type { LoopSpend } from '../cost/trace-cost.js';
import { TraceSpend } from '../cost/trace-spend.js';
import type { LoopEngine } from '../detector/engine.js';
import type { LoopDetection, ToolCall } from '../detector/types.js';
import { replaySequence } from '../sequence/call-sequence.js';
import { ModelCallQueue } from './replay-cost.js';
import type { PendingCall, PendingTrace } from './trace-state.js';
import type { ReplayedCall } from './types.js';
import { HeardInputs } from './user-inputs.js';

/** What the engine found in a trace's calls, replayed in the order the live processor saw them. */
export interface TraceVerdict {
  /** New since the trace was last reported (all of them for a trace completed once). */
  readonly detections: LoopDetection[];
  /** The end (epoch ms) of the call that completed each detection, in `detections` order. */
  readonly detectionTimes: number[];
  /** The calls not reported before, by start time. */
  readonly calls: ReplayedCall[];
  readonly loopSpend: LoopSpend | undefined;
}

/** What makes two detections of a trace the same one for reporting: kind, level and fingerprint. */
const detectionKey = (d: LoopDetection): string => `${d.kind} ${d.level} ${d.fingerprint}`;

/**
 * Replays a complete trace's calls through a fresh engine trace: numbered by start time, grouped
 * into batches and given step by step with the user inputs and model calls heard before each.
 * Updates the trace's loop bookkeeping (`hasLoop`, `loopPrompt`, `reportedDetections`).
 */
export function evaluateTrace<P>(trace: PendingTrace<P>, engine: LoopEngine, prices: PriceTable | undefined): TraceVerdict {
  const calls = trace.calls;
  const detections: LoopDetection[] = [];
  const detectionTimes: number[] = [];
  const promptOf = new Map<PendingCall, string | undefined>();
  for (const c of calls) promptOf.set(c, trace.nameOf(c.spanId, 'prompt') ?? trace.lastPrompt);
  const detector = engine.createTrace(trace.traceId);
  const spend = new TraceSpend(engine.config.historySize, prices !== undefined);
  const models = new ModelCallQueue(trace.models, spend);
  const unreported: ReplayedCall[] = [];
  const reportedBefore = trace.reportedDetections;
  const found = new Map<string, number>();
  const heard = trace.userInputs.length > 0 ? new HeardInputs(trace.userInputs) : undefined;
  replaySequence(calls, (c, place) => {
    // what the user said in a model call that ended first: the engine hears it before the call
    heard?.before(c, detector);
    const prompt = promptOf.get(c);
    const agent = trace.nameOf(c.spanId, 'agent') ?? trace.lastAgent;
    if (!c.reported) unreported.push({ toolName: c.call.toolName, callIndex: place.callIndex, startTime: c.start, endTime: c.end, ok: c.call.outcome.ok, spanId: c.spanId, promptName: prompt });
    const call: ToolCall = {
      ...c.call,
      batch: place.batch,
      callIndex: place.callIndex,
      ...(prompt !== undefined ? { promptName: prompt } : {}),
      ...(agent !== undefined ? { agentName: agent } : {}),
    };
    models.toolCall(c.end, c.seq);
    for (const d of detector.record(call, place.batchComplete)) {
      const { priced } = spend.detection(d, c.end);
      if (!trace.hasLoop) {
        trace.hasLoop = true;
        trace.loopPrompt = d.promptName;
      }
      // The whole history gives the whole trace's detections; those of each kind, level and
      // fingerprint up to the number reported before were reported then. Matching by call
      // instead loses a detection when late spans are earlier calls: the critical then falls
      // on a call that was reported with a warning.
      const key = detectionKey(d);
      const n = (found.get(key) ?? 0) + 1;
      found.set(key, n);
      if (n <= (reportedBefore?.get(key) ?? 0)) continue;
      detections.push(priced);
      detectionTimes.push(c.end);
    }
  });
  for (const [key, n] of reportedBefore ?? []) if (n > (found.get(key) ?? 0)) found.set(key, n);
  trace.reportedDetections = found.size > 0 ? found : undefined;
  models.finish();
  return { detections, detectionTimes, calls: unreported.sort((a, b) => a.callIndex - b.callIndex), loopSpend: spend.loopSpend() };
}
