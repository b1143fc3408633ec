import { ATTR_GEN_AI_AGENT_NAME, ATTR_GEN_AI_PROMPT_NAME, ATTR_GEN_AI_TOOL_NAME } from '../conventions/attributes.js';
import type { TraceLoopSummary } from '../cost/summary.js';
import type { LoopDetection } from '../detector/types.js';

export const LOOP_EVENT_NAME = 'loop.detected';
/** The span event on a looping trace's root, when the trace ends: what its loops cost. */
export const LOOP_SUMMARY_EVENT_NAME = 'loop.summary';
export const ATTR_LOOP_ARGUMENTS_PREVIEW = 'loop.arguments.preview';

/**
 * Attributes of the `loop.detected` span event (DESIGN.md contract). Only names, counts, hashes
 * and the engine's own message: never argument or result content, except the opt-in, redacted
 * arguments preview.
 */
export function loopEventAttributes(d: LoopDetection, extra?: Record<string, string>): Record<string, string | number | boolean | string[]> {
  const attrs: Record<string, string | number | boolean | string[]> = {
    'loop.kind': d.kind,
    'loop.level': d.level,
    'loop.count': d.count,
    'loop.call_index': d.callIndex,
    'loop.fingerprint': d.fingerprint,
    'loop.rule': d.rule,
    'loop.threshold': d.threshold,
    'loop.evidence': d.evidence,
    'loop.mode': d.mode,
    'loop.message': d.message,
    [ATTR_GEN_AI_TOOL_NAME]: d.toolName,
  };
  if (d.cycleLength !== undefined) attrs['loop.cycle.length'] = d.cycleLength;
  if (d.cycleTools !== undefined) attrs['loop.cycle.tools'] = [...d.cycleTools];
  if (d.promptName !== undefined) attrs[ATTR_GEN_AI_PROMPT_NAME] = d.promptName;
  if (d.agentName !== undefined) attrs[ATTR_GEN_AI_AGENT_NAME] = d.agentName;
  if (d.tokens !== undefined) {
    attrs['loop.tokens.input'] = d.tokens.input;
    attrs['loop.tokens.output'] = d.tokens.output;
  }
  if (d.costUsd !== undefined) attrs['loop.cost.usd'] = d.costUsd;
  // opt-in (the processor's argumentPreview option), redacted and bounded there
  if (d.argumentsPreview !== undefined) attrs[ATTR_LOOP_ARGUMENTS_PREVIEW] = d.argumentsPreview;
  return { ...attrs, ...extra };
}

/**
 * Attributes of the `loop.summary` event: the trace's loop bill (`loop.tokens.*`, `loop.cost.usd`:
 * from the loop's first call to the end of the trace; `loop.after_detection.*`: after the first
 * detection), the number of detections and the first one's prompt template, kind and tool. The
 * collector's sum connector adds `loop.tokens.*` and `loop.cost.usd` up per prompt template
 * (collector-config/gateway.yaml).
 */
export function loopSummaryAttributes(s: TraceLoopSummary): Record<string, string | number | boolean> {
  const first = s.firstDetection;
  const attrs: Record<string, string | number | boolean> = {
    'loop.detections': s.detections,
    'loop.stopped': s.stopped,
    'loop.kind': first.kind,
    [ATTR_GEN_AI_TOOL_NAME]: first.toolName,
  };
  if (s.promptName !== undefined) attrs[ATTR_GEN_AI_PROMPT_NAME] = s.promptName;
  if (s.agentName !== undefined) attrs[ATTR_GEN_AI_AGENT_NAME] = s.agentName;
  if (s.loop !== undefined) {
    attrs['loop.model_calls'] = s.loop.modelCalls;
    attrs['loop.tokens.input'] = s.loop.tokens.input;
    attrs['loop.tokens.output'] = s.loop.tokens.output;
    if (s.loop.costUsd !== undefined) attrs['loop.cost.usd'] = s.loop.costUsd;
  }
  if (s.afterDetection !== undefined) {
    attrs['loop.after_detection.tokens.input'] = s.afterDetection.tokens.input;
    attrs['loop.after_detection.tokens.output'] = s.afterDetection.tokens.output;
    if (s.afterDetection.costUsd !== undefined) attrs['loop.after_detection.cost.usd'] = s.afterDetection.costUsd;
  }
  return attrs;
}
