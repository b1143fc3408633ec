import {
  ATTR_GEN_AI_COMPLETION,
  ATTR_GEN_AI_PROMPT,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  GEN_AI_ARGUMENT_KEYS,
  GEN_AI_RESULT_KEYS,
  firstString,
  firstValue,
  spanError,
  stringAttr,
  toolCallFields,
} from './attributes.js';
import type { ConventionAdapter, SpanView, ToolCallFields } from './types.js';
import { userTextsOf } from './user-messages.js';

export const ATTR_LANGSMITH_SPAN_KIND = 'langsmith.span.kind';
const TOOL_NAME_KEYS = ['langsmith.trace.name', ATTR_GEN_AI_TOOL_NAME];
const ARGUMENT_KEYS = [...GEN_AI_ARGUMENT_KEYS, ATTR_GEN_AI_PROMPT];
const RESULT_KEYS = [...GEN_AI_RESULT_KEYS, ATTR_GEN_AI_COMPLETION];

/**
 * LangSmith's OpenTelemetry mode (`LANGSMITH_OTEL_ENABLED=true`, `traceable(fn, { run_type: 'tool' })`
 * and LangChain runs): `langsmith.span.kind = tool`, the run name in `langsmith.trace.name`, the
 * run's inputs and outputs as JSON in the legacy `gen_ai.prompt` / `gen_ai.completion` keys.
 * LangSmith ends its spans when it exports them, so detection may trail the agent by a batch.
 */
export const langsmithAdapter: ConventionAdapter = {
  name: 'langsmith',

  isToolSpan(span: SpanView): boolean {
    return span.attributes[ATTR_LANGSMITH_SPAN_KIND] === 'tool';
  },

  readToolCall(span: SpanView): ToolCallFields | undefined {
    const toolName = firstString(span, TOOL_NAME_KEYS) ?? (span.name.length > 0 ? span.name : undefined);
    if (toolName === undefined) return undefined;
    return toolCallFields(
      toolName,
      firstValue(span, ARGUMENT_KEYS),
      firstValue(span, RESULT_KEYS),
      spanError(span),
      stringAttr(span, ATTR_GEN_AI_TOOL_CALL_ID),
    );
  },

  // a model run's inputs: `{ "messages": [...] }` in `gen_ai.prompt`
  userMessages(span: SpanView): readonly string[] | undefined {
    return span.attributes[ATTR_LANGSMITH_SPAN_KIND] === 'llm' ? userTextsOf(span.attributes[ATTR_GEN_AI_PROMPT]) : undefined;
  },

  gate: { values: { [ATTR_LANGSMITH_SPAN_KIND]: ['tool'] }, userMessageKeys: [ATTR_LANGSMITH_SPAN_KIND], agentKeysOnly: true },
};
