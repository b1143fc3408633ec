import { ATTR_GEN_AI_AGENT_NAME, ATTR_GEN_AI_PROMPT_NAME, ATTR_GEN_AI_TOOL_NAME } from '../conventions/attributes.js';
import type { TraceLoopSummary } from '../cost/summary.js';
import type { LoopDetection } from '../detector/types.js';

/** The span event and its attributes (docs/semantic-conventions.md, docs/api.md). */
export const LOOP_EVENT_NAME = 'loop.detected';
export const ATTR_LOOP_KIND = 'loop.kind';
export const ATTR_LOOP_LEVEL = 'loop.level';
export const ATTR_LOOP_COUNT = 'loop.count';
export const ATTR_LOOP_CALL_INDEX = 'loop.call_index';
export const ATTR_LOOP_FINGERPRINT = 'loop.fingerprint';
export const ATTR_LOOP_RULE = 'loop.rule';
export const ATTR_LOOP_THRESHOLD = 'loop.threshold';
export const ATTR_LOOP_EVIDENCE = 'loop.evidence';
export const ATTR_LOOP_MODE = 'loop.mode';
export const ATTR_LOOP_MESSAGE = 'loop.message';
export const ATTR_LOOP_CYCLE_LENGTH = 'loop.cycle.length';
export const ATTR_LOOP_CYCLE_TOOLS = 'loop.cycle.tools';
/** The span event on a looping trace's root, when the trace ends: what its loops cost. */
export const LOOP_SUMMARY_EVENT_NAME = 'loop.summary';
export const ATTR_LOOP_ARGUMENTS_PREVIEW = 'loop.arguments.preview';
/** On an event written on the open parent (SDKs without `onEnding`): the tool span it is about. */
export const ATTR_LOOP_SPAN_ID = 'loop.span_id';
/** What loops cost: on `loop.detected` (the repetitions) and `loop.summary` (the trace's loop spend). */
export const ATTR_LOOP_TOKENS_INPUT = 'loop.tokens.input';
export const ATTR_LOOP_TOKENS_OUTPUT = 'loop.tokens.output';
export const ATTR_LOOP_COST_USD = 'loop.cost.usd';
/** On `loop.summary` only. */
export const ATTR_LOOP_MODEL_CALLS = 'loop.model_calls';
export const ATTR_LOOP_DETECTIONS = 'loop.detections';
export const ATTR_LOOP_STOPPED = 'loop.stopped';
export const ATTR_LOOP_AFTER_DETECTION_TOKENS_INPUT = 'loop.after_detection.tokens.input';
export const ATTR_LOOP_AFTER_DETECTION_TOKENS_OUTPUT = 'loop.after_detection.tokens.output';
export const ATTR_LOOP_AFTER_DETECTION_COST_USD = 'loop.after_detection.cost.usd';

export type EventAttributes = Record<string, string | number | boolean | string[]>;

/**
 * Attributes of the `loop.detected` span event (docs/api.md#the-loopdetected-event). Only names, counts, hashes
 * and the engine's own message: never argument or result content, except the opt-in, redacted
 * arguments preview.
 */
export function loopEventAttributes(d: LoopDetection, extra?: Record<string, string>): EventAttributes {
  const attrs: EventAttributes = {
    [ATTR_LOOP_KIND]: d.kind,
    [ATTR_LOOP_LEVEL]: d.level,
    [ATTR_LOOP_COUNT]: d.count,
    [ATTR_LOOP_CALL_INDEX]: d.callIndex,
    [ATTR_LOOP_FINGERPRINT]: d.fingerprint,
    [ATTR_LOOP_RULE]: d.rule,
    [ATTR_LOOP_THRESHOLD]: d.threshold,
    [ATTR_LOOP_EVIDENCE]: d.evidence,
    [ATTR_LOOP_MODE]: d.mode,
    [ATTR_LOOP_MESSAGE]: d.message,
    [ATTR_GEN_AI_TOOL_NAME]: d.toolName,
  };
  if (d.cycleLength !== undefined) attrs[ATTR_LOOP_CYCLE_LENGTH] = d.cycleLength;
  if (d.cycleTools !== undefined) attrs[ATTR_LOOP_CYCLE_TOOLS] = [...d.cycleTools];
  if (d.promptName !== undefined) attrs[ATTR_GEN_AI_PROMPT_NAME] = d.promptName;
  if (d.agentName !== undefined) attrs[ATTR_GEN_AI_AGENT_NAME] = d.agentName;
  if (d.tokens !== undefined) {
    attrs[ATTR_LOOP_TOKENS_INPUT] = d.tokens.input;
    attrs[ATTR_LOOP_TOKENS_OUTPUT] = d.tokens.output;
  }
  if (d.costUsd !== undefined) attrs[ATTR_LOOP_COST_USD] = d.costUsd;
  // opt-in (the processor's argumentPreview option), redacted and bounded there
  if (d.argumentsPreview !== undefined) attrs[ATTR_LOOP_ARGUMENTS_PREVIEW] = d.argumentsPreview;
  return { ...attrs, ...extra };
}

/**
 * Attributes of the `loop.summary` event: the trace's loop spend (`loop.tokens.*`, `loop.cost.usd`:
 * from the loop's first call to the end of the trace; `loop.after_detection.*`: after the first
 * detection), the number of detections and the first one's prompt template, kind and tool. The
 * collector's sum connector adds `loop.tokens.*` and `loop.cost.usd` up per prompt template
 * (collector-config/gateway.yaml).
 */
export function loopSummaryAttributes(s: TraceLoopSummary): Record<string, string | number | boolean> {
  const first = s.firstDetection;
  const attrs: Record<string, string | number | boolean> = {
    [ATTR_LOOP_DETECTIONS]: s.detections,
    [ATTR_LOOP_STOPPED]: s.stopped,
    [ATTR_LOOP_KIND]: first.kind,
    [ATTR_GEN_AI_TOOL_NAME]: first.toolName,
  };
  if (s.promptName !== undefined) attrs[ATTR_GEN_AI_PROMPT_NAME] = s.promptName;
  if (s.agentName !== undefined) attrs[ATTR_GEN_AI_AGENT_NAME] = s.agentName;
  if (s.loop !== undefined) {
    attrs[ATTR_LOOP_MODEL_CALLS] = s.loop.modelCalls;
    attrs[ATTR_LOOP_TOKENS_INPUT] = s.loop.tokens.input;
    attrs[ATTR_LOOP_TOKENS_OUTPUT] = s.loop.tokens.output;
    if (s.loop.costUsd !== undefined) attrs[ATTR_LOOP_COST_USD] = s.loop.costUsd;
  }
  if (s.afterDetection !== undefined) {
    attrs[ATTR_LOOP_AFTER_DETECTION_TOKENS_INPUT] = s.afterDetection.tokens.input;
    attrs[ATTR_LOOP_AFTER_DETECTION_TOKENS_OUTPUT] = s.afterDetection.tokens.output;
    if (s.afterDetection.costUsd !== undefined) attrs[ATTR_LOOP_AFTER_DETECTION_COST_USD] = s.afterDetection.costUsd;
  }
  return attrs;
}
