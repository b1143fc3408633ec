import {
  ATTR_GEN_AI_TOOL_NAME,
  GEN_AI_ARGUMENT_KEYS,
  GEN_AI_RESULT_KEYS,
  firstString,
  firstValue,
  parseJsonObject,
  spanError,
  stringAttr,
  stringMember,
  toolCallFields,
} from './attributes.js';
import type { RawError } from '../detector/error-class.js';
import type { ConventionAdapter, SpanView, ToolCallFields } from './types.js';
import { indexedUserMessages } from './user-messages.js';

export const ATTR_OPENINFERENCE_SPAN_KIND = 'openinference.span.kind';
const ATTR_TOOL_NAME = 'tool.name';
const ATTR_TOOL_PARAMETERS = 'tool.parameters';
const ATTR_INPUT_VALUE = 'input.value';
const ATTR_OUTPUT_VALUE = 'output.value';
const ATTR_PROMPT_ID = 'prompt.id';
const ATTR_METADATA = 'metadata';
const ATTR_AGENT_NAME = 'agent.name';
const llmInputUserMessages = indexedUserMessages('llm.input_messages', '.message.role', '.message.content');
const TOOL_NAME_KEYS = [ATTR_TOOL_NAME, ATTR_GEN_AI_TOOL_NAME];
const CALL_ID_KEYS = ['tool.id', 'tool_call.id'];
/** An `LLM` span's model and token counts, read by `readModelUsage`. */
export const ATTR_LLM_MODEL_NAME = 'llm.model_name';
export const ATTR_LLM_TOKEN_COUNT_PROMPT = 'llm.token_count.prompt';
export const ATTR_LLM_TOKEN_COUNT_COMPLETION = 'llm.token_count.completion';
export const ATTR_LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ = 'llm.token_count.prompt_details.cache_read';

/**
 * OpenInference (Arize Phoenix): `openinference.span.kind = TOOL`, `tool.name`, the call's input
 * in `input.value` and its output in `output.value`. `tool.parameters` is the call's arguments in
 * the JS GenAI/Vercel mappers but the tool's JSON schema elsewhere; a schema is never taken as
 * arguments (every call would look the same). Prompt name: `prompt.id` (prompt management), else
 * a `prompt_name` / `promptName` member of the `metadata` JSON (LangChain run metadata).
 */
export const openInferenceAdapter: ConventionAdapter = {
  name: 'openinference',

  isToolSpan(span: SpanView): boolean {
    return span.attributes[ATTR_OPENINFERENCE_SPAN_KIND] === 'TOOL';
  },

  readToolCall(span: SpanView): ToolCallFields | undefined {
    const toolName = firstString(span, TOOL_NAME_KEYS) ?? (span.name.length > 0 ? span.name : undefined);
    if (toolName === undefined) return undefined;
    const attrs = span.attributes;
    const args = attrs[ATTR_INPUT_VALUE] ?? parametersUnlessSchema(attrs[ATTR_TOOL_PARAMETERS]) ?? firstValue(span, GEN_AI_ARGUMENT_KEYS);
    const output = unwrapLangChainToolMessage(attrs[ATTR_OUTPUT_VALUE]);
    const error = spanError(span) ?? output.error;
    return toolCallFields(toolName, args, output.value ?? firstValue(span, GEN_AI_RESULT_KEYS), error, firstString(span, CALL_ID_KEYS));
  },

  promptName(span: SpanView): string | undefined {
    if (span.attributes[ATTR_OPENINFERENCE_SPAN_KIND] === undefined) return undefined;
    const id = stringAttr(span, ATTR_PROMPT_ID);
    if (id !== undefined) return id;
    const metadata = span.attributes[ATTR_METADATA];
    return metadata !== undefined ? stringMember(parseJsonObject(metadata), 'prompt_name', 'promptName') : undefined;
  },

  agentName(span: SpanView): string | undefined {
    const kind = span.attributes[ATTR_OPENINFERENCE_SPAN_KIND];
    if (kind === undefined) return undefined;
    return stringAttr(span, ATTR_AGENT_NAME) ?? (kind === 'AGENT' && span.name.length > 0 ? span.name : undefined);
  },

  // An LLM span's input: `llm.input_messages.0.message.role`, `llm.input_messages.0.message.content`, ...
  userMessages(span: SpanView): readonly string[] | undefined {
    return span.attributes[ATTR_OPENINFERENCE_SPAN_KIND] === 'LLM' ? llmInputUserMessages(span) : undefined;
  },

  // Everything above needs the span kind.
  gate: { keys: [ATTR_OPENINFERENCE_SPAN_KIND], userMessageKeys: [ATTR_OPENINFERENCE_SPAN_KIND], agentKeysOnly: true },
};

function parametersUnlessSchema(value: unknown): unknown {
  if (value === undefined) return undefined;
  const obj = parseJsonObject(value);
  if (obj && typeof obj['type'] === 'string' && typeof obj['properties'] === 'object') return undefined;
  return value;
}

/**
 * LangChain tools called with a tool call (as agents and LangGraph's ToolNode do) return a
 * serialised `ToolMessage`, so `output.value` carries a fresh `tool_call_id` every time. The
 * message's `content` is the tool's actual output, and `status: "error"` a failure.
 */
export function unwrapLangChainToolMessage(value: unknown): { value: unknown; error?: RawError } {
  if (typeof value !== 'string' || !value.includes('ToolMessage')) return { value };
  const parsed = parseJsonObject(value);
  const message = parseJsonObject(parsed?.['output']) ?? parsed;
  const ids = message?.['id'];
  const kwargs = parseJsonObject(message?.['kwargs']);
  if (!kwargs || !Array.isArray(ids) || ids[ids.length - 1] !== 'ToolMessage') return { value };
  const content = kwargs['content'];
  if (kwargs['status'] === 'error') {
    const text = typeof content === 'string' ? content : undefined;
    return { value: undefined, error: { ...(text !== undefined ? { message: text } : {}) } };
  }
  return { value: content ?? value };
}
