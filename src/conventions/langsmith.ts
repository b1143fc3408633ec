import { ATTR_GEN_AI_TOOL_NAME, GEN_AI_ARGUMENT_KEYS, GEN_AI_RESULT_KEYS, firstString, firstValue, spanError, stringAttr, toolCallFields } from './attributes.js';
import type { ConventionAdapter, SpanView, ToolCallFields } from './types.js';

/**
 * LangSmith's OpenTelemetry mode (`LANGSMITH_OTEL_ENABLED=true`, `traceable(fn, { run_type: 'tool' })`
 * and LangChain runs): `langsmith.span.kind = tool`, the run name in `langsmith.trace.name`, the
 * run's inputs and outputs as JSON in the legacy `gen_ai.prompt` / `gen_ai.completion` keys.
 * LangSmith ends its spans when it exports them, so detection may trail the agent by a batch.
 */
export const langsmithAdapter: ConventionAdapter = {
  name: 'langsmith',

  isToolSpan(span: SpanView): boolean {
    return span.attributes['langsmith.span.kind'] === 'tool';
  },

  readToolCall(span: SpanView): ToolCallFields | undefined {
    const toolName = firstString(span, ['langsmith.trace.name', ATTR_GEN_AI_TOOL_NAME]) ?? (span.name.length > 0 ? span.name : undefined);
    if (toolName === undefined) return undefined;
    return toolCallFields(
      toolName,
      firstValue(span, [...GEN_AI_ARGUMENT_KEYS, 'gen_ai.prompt']),
      firstValue(span, [...GEN_AI_RESULT_KEYS, 'gen_ai.completion']),
      spanError(span),
      stringAttr(span, 'gen_ai.tool.call.id'),
    );
  },

  gate: { values: { 'langsmith.span.kind': ['tool'] } },
};
