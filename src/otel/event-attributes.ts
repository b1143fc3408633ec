import { ATTR_GEN_AI_AGENT_NAME, ATTR_GEN_AI_PROMPT_NAME, ATTR_GEN_AI_TOOL_NAME } from '../conventions/attributes.js';
import type { LoopDetection } from '../detector/types.js';

export const LOOP_EVENT_NAME = 'loop.detected';
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
  // opt-in (the processor's argumentPreview option), redacted and bounded there
  if (d.argumentsPreview !== undefined) attrs[ATTR_LOOP_ARGUMENTS_PREVIEW] = d.argumentsPreview;
  return { ...attrs, ...extra };
}
