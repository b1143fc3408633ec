import {
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  GEN_AI_ARGUMENT_KEYS,
  GEN_AI_RESULT_KEYS,
  firstString,
  firstValue,
  parseJsonObject,
  spanError,
  stringMember,
  toolCallFields,
} from './attributes.js';
import { toolNameFromSpanName } from './gen-ai.js';
import type { ConventionAdapter, SpanView, ToolCallFields } from './types.js';
import { userTextsOf } from './user-messages.js';

/** The operation id (and the span name) of a tool call. */
const TOOL_CALL_OPERATION = 'ai.toolCall';
export const ATTR_AI_OPERATION_ID = 'ai.operationId';
const ATTR_AI_PROMPT = 'ai.prompt';
const ATTR_AI_PROMPT_MESSAGES = 'ai.prompt.messages';
const ATTR_TOOL_CALL_NAME = 'ai.toolCall.name';
const ATTR_TOOL_CALL_ID = 'ai.toolCall.id';
/** v5/v6 write `args`/`result`; `input`/`output` are the v5-era names other tools still accept. */
const ARGUMENT_KEYS = ['ai.toolCall.args', 'ai.toolCall.input', ...GEN_AI_ARGUMENT_KEYS];
const RESULT_KEYS = ['ai.toolCall.result', 'ai.toolCall.output', ...GEN_AI_RESULT_KEYS];
/** A model call's usage (v4 wrote `promptTokens` / `completionTokens`) and models, read by `readModelUsage`. */
export const ATTR_AI_USAGE_INPUT_TOKENS = 'ai.usage.inputTokens';
export const ATTR_AI_USAGE_PROMPT_TOKENS = 'ai.usage.promptTokens';
export const ATTR_AI_USAGE_OUTPUT_TOKENS = 'ai.usage.outputTokens';
export const ATTR_AI_USAGE_COMPLETION_TOKENS = 'ai.usage.completionTokens';
export const ATTR_AI_USAGE_CACHED_INPUT_TOKENS = 'ai.usage.cachedInputTokens';
export const ATTR_AI_USAGE_INPUT_TOKEN_DETAILS_CACHE_READ_TOKENS = 'ai.usage.inputTokenDetails.cacheReadTokens';
export const ATTR_AI_MODEL_ID = 'ai.model.id';
export const ATTR_AI_RESPONSE_MODEL = 'ai.response.model';

/**
 * Prompt template name, in this order:
 * - `ai.telemetry.metadata.promptName` / `prompt_name`: `experimental_telemetry.metadata.promptName`,
 *   the key loopwatch documents for AI SDK v5/v6 (metadata is copied onto every AI SDK span,
 *   the tool spans included);
 * - `ai.telemetry.metadata.langfusePrompt`: the JSON `{ name, version }` Langfuse's prompt
 *   linking puts there;
 * - `ai.settings.context.promptName`: AI SDK v7 `runtimeContext.promptName`, when `@ai-sdk/otel`
 *   is created with `runtimeContext: true`.
 */
const PROMPT_KEYS = ['ai.telemetry.metadata.promptName', 'ai.telemetry.metadata.prompt_name'];
const LANGFUSE_PROMPT_KEY = 'ai.telemetry.metadata.langfusePrompt';
const RUNTIME_CONTEXT_PROMPT_KEYS = ['ai.settings.context.promptName', 'ai.settings.context.prompt_name'];
/** `functionId` is what AI SDK users name a run by; AI SDK v7 writes it as `gen_ai.agent.name` too. */
const AGENT_KEYS = ['ai.telemetry.metadata.agentName', 'ai.telemetry.metadata.agent_name', 'ai.telemetry.functionId'];
const TOOL_NAME_KEYS = [ATTR_TOOL_CALL_NAME, ATTR_GEN_AI_TOOL_NAME];
const CALL_ID_KEYS = [ATTR_TOOL_CALL_ID, ATTR_GEN_AI_TOOL_CALL_ID];

/**
 * Vercel AI SDK v4–v6 built-in telemetry (`experimental_telemetry: { isEnabled: true }`), and v7
 * with `LegacyOpenTelemetry`: `ai.toolCall` spans with `ai.toolCall.name/id/args/result` (JSON
 * strings), failures as an `exception` event plus status ERROR. Note: v5/v6 declare `args` as an
 * output, so `recordOutputs: false` drops arguments and results and detection falls back to
 * name and outcome. Traceloop renames these spans `execute_tool …` at start and rewrites the
 * attributes at end; this adapter still claims them by `ai.operationId` and falls back on gen_ai keys.
 */
export const aiSdkAdapter: ConventionAdapter = {
  name: 'ai-sdk',

  isToolSpan(span: SpanView): boolean {
    return span.attributes[ATTR_AI_OPERATION_ID] === TOOL_CALL_OPERATION || span.name === TOOL_CALL_OPERATION;
  },

  readToolCall(span: SpanView): ToolCallFields | undefined {
    const toolName = firstString(span, TOOL_NAME_KEYS) ?? toolNameFromSpanName(span.name);
    if (toolName === undefined) return undefined;
    return toolCallFields(
      toolName,
      firstValue(span, ARGUMENT_KEYS),
      firstValue(span, RESULT_KEYS),
      spanError(span),
      firstString(span, CALL_ID_KEYS),
    );
  },

  promptName(span: SpanView): string | undefined {
    const attrs = span.attributes;
    return (
      firstString(span, PROMPT_KEYS) ??
      (attrs[LANGFUSE_PROMPT_KEY] !== undefined ? stringMember(parseJsonObject(attrs[LANGFUSE_PROMPT_KEY]), 'name') : undefined) ??
      firstString(span, RUNTIME_CONTEXT_PROMPT_KEYS)
    );
  },

  agentName(span: SpanView): string | undefined {
    // Only AI SDK spans carry these keys.
    if (span.attributes[ATTR_AI_OPERATION_ID] === undefined) return undefined;
    return firstString(span, AGENT_KEYS);
  },

  // A model call's `ai.prompt.messages` (the conversation), else the call's `ai.prompt` (`{ prompt | messages }`).
  userMessages(span: SpanView): readonly string[] | undefined {
    const attrs = span.attributes;
    if (attrs[ATTR_AI_OPERATION_ID] === undefined) return undefined;
    const messages = attrs[ATTR_AI_PROMPT_MESSAGES];
    if (messages !== undefined) return userTextsOf(messages);
    const prompt = attrs[ATTR_AI_PROMPT];
    if (prompt === undefined) return undefined;
    const text = stringMember(parseJsonObject(prompt), 'prompt');
    return text !== undefined ? [text] : userTextsOf(prompt);
  },

  gate: {
    keys: [ATTR_AI_OPERATION_ID, ...PROMPT_KEYS, LANGFUSE_PROMPT_KEY, ...RUNTIME_CONTEXT_PROMPT_KEYS],
    names: [TOOL_CALL_OPERATION],
    userMessageKeys: [ATTR_AI_OPERATION_ID],
    agentKeysOnly: true,
  },
};
