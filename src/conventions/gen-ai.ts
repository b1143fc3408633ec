import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_EVENT_CONTENT,
  ATTR_GEN_AI_INPUT_MESSAGES,
  GEN_AI_USER_MESSAGE_EVENT,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  GEN_AI_OPERATION_EXECUTE_TOOL,
  nonEmpty,
  parseJsonObject,
  spanError,
  toolCallFields,
} from './attributes.js';
import type { ConventionAdapter, SpanEventView, SpanView, ToolCallFields } from './types.js';
import { userTextsOf } from './user-messages.js';

export const EXECUTE_TOOL_SPAN_PREFIX = 'execute_tool ';

/** The tool name in an `execute_tool {name}` span name. */
export function toolNameFromSpanName(name: string): string | undefined {
  if (!name.startsWith(EXECUTE_TOOL_SPAN_PREFIX)) return undefined;
  const rest = name.slice(EXECUTE_TOOL_SPAN_PREFIX.length).trim();
  return rest.length > 0 ? rest : undefined;
}

/**
 * OpenTelemetry gen_ai semantic conventions: `execute_tool {gen_ai.tool.name}` spans with
 * `gen_ai.operation.name = execute_tool`. Also what AI SDK v7 (`@ai-sdk/otel`), the Mastra
 * bridge, OpenLIT and normalising processors (Traceloop, the collector's gen_ai normaliser) emit.
 * Arguments and results are opt-in content, recorded as JSON strings (SDK 2.x) or as structured
 * values (SDK 3.x, API 1.10): both are handed to the fingerprint unchanged, which canonicalises
 * either form to the same hash.
 */
export const genAiAdapter: ConventionAdapter = {
  name: 'gen_ai',

  isToolSpan(span: SpanView): boolean {
    return span.attributes[ATTR_GEN_AI_OPERATION_NAME] === GEN_AI_OPERATION_EXECUTE_TOOL || span.name.startsWith(EXECUTE_TOOL_SPAN_PREFIX);
  },

  readToolCall(span: SpanView): ToolCallFields | undefined {
    const attrs = span.attributes;
    const toolName = nonEmpty(attrs[ATTR_GEN_AI_TOOL_NAME]) ?? toolNameFromSpanName(span.name);
    if (toolName === undefined) return undefined;
    return toolCallFields(
      toolName,
      attrs[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS],
      attrs[ATTR_GEN_AI_TOOL_CALL_RESULT],
      spanError(span),
      nonEmpty(attrs[ATTR_GEN_AI_TOOL_CALL_ID]),
    );
  },

  promptName: (span) => nonEmpty(span.attributes[ATTR_GEN_AI_PROMPT_NAME]),
  agentName: (span) => nonEmpty(span.attributes[ATTR_GEN_AI_AGENT_NAME]),

  userMessages(span: SpanView): readonly string[] | undefined {
    const input = span.attributes[ATTR_GEN_AI_INPUT_MESSAGES];
    if (input !== undefined) return userTextsOf(input);
    return span.events !== undefined && span.events.length > 0 ? userMessageEvents(span.events) : undefined;
  },

  gate: {
    keys: [ATTR_GEN_AI_PROMPT_NAME, ATTR_GEN_AI_AGENT_NAME],
    values: { [ATTR_GEN_AI_OPERATION_NAME]: [GEN_AI_OPERATION_EXECUTE_TOOL] },
    namePrefixes: [EXECUTE_TOOL_SPAN_PREFIX],
    userMessageKeys: [ATTR_GEN_AI_INPUT_MESSAGES],
    userMessageEvents: true,
    agentKeysOnly: true,
  },
};

/**
 * The older conventions' `gen_ai.user.message` events: the text in `content`, or in the JSON of
 * `gen_ai.event.content`. An event without text (only its time) says nothing comparable and is not read.
 */
function userMessageEvents(events: readonly SpanEventView[]): string[] | undefined {
  let out: string[] | undefined;
  for (const e of events) {
    if (e.name !== GEN_AI_USER_MESSAGE_EVENT) continue;
    const attrs = e.attributes ?? {};
    const content = attrs['content'] ?? eventContent(attrs[ATTR_GEN_AI_EVENT_CONTENT]);
    if (typeof content === 'string' && content.trim().length > 0) (out ??= []).push(content);
  }
  return out;
}

function eventContent(value: unknown): unknown {
  const parsed = parseJsonObject(value);
  return parsed !== undefined ? parsed['content'] : value;
}
