import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  GEN_AI_OPERATION_EXECUTE_TOOL,
  spanError,
  stringAttr,
} from './attributes.js';
import type { ConventionAdapter, SpanView, ToolCallFields } from './types.js';

const SPAN_NAME_PREFIX = 'execute_tool ';

/**
 * OpenTelemetry gen_ai semantic conventions: `execute_tool {gen_ai.tool.name}` spans with
 * `gen_ai.operation.name = execute_tool`. Arguments and results are opt-in, as JSON strings (SDK
 * 2.x) or structured values (SDK 3.x); the fingerprint accepts both.
 */
export const genAiAdapter: ConventionAdapter = {
  name: 'gen_ai',

  isToolSpan(span: SpanView): boolean {
    return span.attributes[ATTR_GEN_AI_OPERATION_NAME] === GEN_AI_OPERATION_EXECUTE_TOOL || span.name.startsWith(SPAN_NAME_PREFIX);
  },

  readToolCall(span: SpanView): ToolCallFields | undefined {
    const toolName =
      stringAttr(span, ATTR_GEN_AI_TOOL_NAME) ??
      (span.name.startsWith(SPAN_NAME_PREFIX) ? span.name.slice(SPAN_NAME_PREFIX.length).trim() : undefined);
    if (!toolName) return undefined;
    const error = spanError(span);
    const args = span.attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS];
    const result = span.attributes[ATTR_GEN_AI_TOOL_CALL_RESULT];
    const callId = stringAttr(span, ATTR_GEN_AI_TOOL_CALL_ID);
    return {
      toolName,
      ...(args !== undefined ? { arguments: args } : {}),
      ...(result !== undefined && !error ? { result } : {}),
      ...(error ? { error } : {}),
      ...(callId !== undefined ? { callId } : {}),
    };
  },

  promptName: (span) => stringAttr(span, ATTR_GEN_AI_PROMPT_NAME),
  agentName: (span) => stringAttr(span, ATTR_GEN_AI_AGENT_NAME),
};
