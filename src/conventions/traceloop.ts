import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  GEN_AI_ARGUMENT_KEYS,
  GEN_AI_OPERATION_EXECUTE_TOOL,
  GEN_AI_RESULT_KEYS,
  firstString,
  firstValue,
  spanError,
  stringAttr,
  toolCallFields,
} from './attributes.js';
import { toolNameFromSpanName } from './gen-ai.js';
import type { ConventionAdapter, SpanView, ToolCallFields } from './types.js';

const SPAN_KIND = 'traceloop.span.kind';
const ENTITY_NAME = 'traceloop.entity.name';
const TOOL_SUFFIX = '.tool';

/**
 * Traceloop / OpenLLMetry: `withTool` / `@tool` spans (`{name}.tool`, `traceloop.span.kind = tool`,
 * `traceloop.entity.input` as `{"args":[…],"kwargs":{…}}`, `traceloop.entity.output`), and its
 * LangChain instrumentation, whose tool spans are `execute_tool {name}` with the kind `task` and
 * the name only in `traceloop.entity.name`. Prompt name: `traceloop.prompt.key` (managed prompts).
 */
export const traceloopAdapter: ConventionAdapter = {
  name: 'traceloop',

  isToolSpan(span: SpanView): boolean {
    const attrs = span.attributes;
    if (attrs[SPAN_KIND] === 'tool') return true;
    return attrs[ENTITY_NAME] !== undefined && attrs[ATTR_GEN_AI_OPERATION_NAME] === GEN_AI_OPERATION_EXECUTE_TOOL;
  },

  readToolCall(span: SpanView): ToolCallFields | undefined {
    const toolName =
      firstString(span, [ATTR_GEN_AI_TOOL_NAME, ENTITY_NAME]) ??
      toolNameFromSpanName(span.name) ??
      (span.name.endsWith(TOOL_SUFFIX) ? span.name.slice(0, -TOOL_SUFFIX.length) : undefined);
    if (toolName === undefined || toolName.length === 0) return undefined;
    return toolCallFields(
      toolName,
      firstValue(span, ['traceloop.entity.input', ...GEN_AI_ARGUMENT_KEYS]),
      firstValue(span, ['traceloop.entity.output', ...GEN_AI_RESULT_KEYS]),
      spanError(span),
      stringAttr(span, 'gen_ai.tool.call.id'),
    );
  },

  promptName: (span) => stringAttr(span, 'traceloop.prompt.key'),

  agentName(span: SpanView): string | undefined {
    return span.attributes[SPAN_KIND] === 'agent' ? stringAttr(span, ENTITY_NAME) : undefined;
  },

  gate: {
    // an entity name: what its LangChain tool spans carry beside `gen_ai.operation.name = execute_tool`
    // (a condition on that value alone would send every gen_ai tool span to this adapter too)
    keys: [SPAN_KIND, ENTITY_NAME, 'traceloop.prompt.key'],
  },
};
