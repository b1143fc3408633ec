import { ATTR_GEN_AI_AGENT_NAME, ATTR_GEN_AI_PROMPT_NAME, ATTR_GEN_AI_TOOL_NAME } from '../conventions/attributes.js';
import type { LoopDetection } from '../detector/types.js';

/** The span event and its attributes (DESIGN.md contract). */
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
export const ATTR_LOOP_ARGUMENTS_PREVIEW = 'loop.arguments.preview';
/** On an event written on the open parent (SDKs without `onEnding`): the tool span it is about. */
export const ATTR_LOOP_SPAN_ID = 'loop.span_id';

export type EventAttributes = Record<string, string | number | boolean | string[]>;

/**
 * Attributes of the `loop.detected` span event (DESIGN.md contract). Only names, counts, hashes
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
  // opt-in (the processor's argumentPreview option), redacted and bounded there
  if (d.argumentsPreview !== undefined) attrs[ATTR_LOOP_ARGUMENTS_PREVIEW] = d.argumentsPreview;
  return { ...attrs, ...extra };
}
