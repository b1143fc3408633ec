import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT,
  ATTR_GEN_AI_TOOL_CALL_ID,
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
import { firstIndexedKey, indexedUserMessages } from './user-messages.js';

const SPAN_KIND = 'traceloop.span.kind';
const ENTITY_NAME = 'traceloop.entity.name';
const ENTITY_INPUT = 'traceloop.entity.input';
const ENTITY_OUTPUT = 'traceloop.entity.output';
const PROMPT_KEY = 'traceloop.prompt.key';
const TOOL_NAME_KEYS = [ATTR_GEN_AI_TOOL_NAME, ENTITY_NAME];
const ARGUMENT_KEYS = [ENTITY_INPUT, ...GEN_AI_ARGUMENT_KEYS];
const RESULT_KEYS = [ENTITY_OUTPUT, ...GEN_AI_RESULT_KEYS];
const TOOL_SUFFIX = '.tool';
/** The role of a flattened input message: `gen_ai.prompt.0.role`. */
const PROMPT_ROLE = '.role';

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
      firstString(span, TOOL_NAME_KEYS) ??
      toolNameFromSpanName(span.name) ??
      (span.name.endsWith(TOOL_SUFFIX) ? span.name.slice(0, -TOOL_SUFFIX.length) : undefined);
    if (toolName === undefined || toolName.length === 0) return undefined;
    return toolCallFields(
      toolName,
      firstValue(span, ARGUMENT_KEYS),
      firstValue(span, RESULT_KEYS),
      spanError(span),
      stringAttr(span, ATTR_GEN_AI_TOOL_CALL_ID),
    );
  },

  promptName: (span) => stringAttr(span, PROMPT_KEY),

  agentName(span: SpanView): string | undefined {
    return span.attributes[SPAN_KIND] === 'agent' ? stringAttr(span, ENTITY_NAME) : undefined;
  },

  // OpenLLMetry's model-call spans: `gen_ai.prompt.0.role`, `gen_ai.prompt.0.content`, ...
  userMessages: indexedUserMessages(ATTR_GEN_AI_PROMPT, PROMPT_ROLE, '.content'),

  gate: {
    // an entity name: what its LangChain tool spans carry beside `gen_ai.operation.name = execute_tool`
    // (a condition on that value alone would send every gen_ai tool span to this adapter too)
    keys: [SPAN_KIND, ENTITY_NAME, PROMPT_KEY],
    userMessageKeys: [firstIndexedKey(ATTR_GEN_AI_PROMPT, PROMPT_ROLE)],
    agentKeysOnly: true,
  },
};
