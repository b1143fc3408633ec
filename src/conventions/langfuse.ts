import type { RawError } from '../detector/error-class.js';
import {
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
import { ATTR_LOOP_MESSAGE, LOOP_EVENT_NAME } from '../otel/event-attributes.js';

export const ATTR_LANGFUSE_OBSERVATION_TYPE = 'langfuse.observation.type';
const PROMPT_KEYS = ['langfuse.observation.prompt.name', 'langfuse.prompt.name'];
const ATTR_LANGFUSE_OBSERVATION_INPUT = 'langfuse.observation.input';
const ARGUMENT_KEYS = [ATTR_LANGFUSE_OBSERVATION_INPUT, ...GEN_AI_ARGUMENT_KEYS];
const RESULT_KEYS = ['langfuse.observation.output', ...GEN_AI_RESULT_KEYS];
/** The level Langfuse shows and filters observations by, and its status message: read here, written by the `langfuseObservations` option. */
export const ATTR_LANGFUSE_OBSERVATION_LEVEL = 'langfuse.observation.level';
export const ATTR_LANGFUSE_OBSERVATION_STATUS_MESSAGE = 'langfuse.observation.status_message';
/** A `generation` observation's usage (a JSON object) and model, read by `readModelUsage`. */
export const ATTR_LANGFUSE_OBSERVATION_USAGE_DETAILS = 'langfuse.observation.usage_details';
export const ATTR_LANGFUSE_OBSERVATION_MODEL_NAME = 'langfuse.observation.model.name';

/**
 * Langfuse SDK v4/v5 observations (`startActiveObservation(name, fn, { asType: 'tool' })`,
 * `observe(fn, { asType: 'tool' })`, the LangChain callback handler): the span name is the tool,
 * `langfuse.observation.input/output` hold the call. Langfuse reports failures as
 * `langfuse.observation.level = ERROR` with `status_message`, often without an ERROR status.
 * Prompt name: `langfuse.observation.prompt.name` (set by linking a prompt to a generation or
 * any observation), legacy `langfuse.prompt.name`.
 */
export const langfuseAdapter: ConventionAdapter = {
  name: 'langfuse',

  isToolSpan(span: SpanView): boolean {
    return span.attributes[ATTR_LANGFUSE_OBSERVATION_TYPE] === 'tool';
  },

  readToolCall(span: SpanView): ToolCallFields | undefined {
    const toolName = stringAttr(span, ATTR_GEN_AI_TOOL_NAME) ?? (span.name.length > 0 ? span.name : undefined);
    if (toolName === undefined) return undefined;
    return toolCallFields(
      toolName,
      firstValue(span, ARGUMENT_KEYS),
      firstValue(span, RESULT_KEYS),
      spanError(span) ?? levelError(span),
      stringAttr(span, ATTR_GEN_AI_TOOL_CALL_ID),
    );
  },

  promptName: (span) => firstString(span, PROMPT_KEYS),

  agentName(span: SpanView): string | undefined {
    return span.attributes[ATTR_LANGFUSE_OBSERVATION_TYPE] === 'agent' && span.name.length > 0 ? span.name : undefined;
  },

  // a generation's input: the messages it was given
  userMessages(span: SpanView): readonly string[] | undefined {
    return span.attributes[ATTR_LANGFUSE_OBSERVATION_TYPE] === 'generation' ? userTextsOf(span.attributes[ATTR_LANGFUSE_OBSERVATION_INPUT]) : undefined;
  },

  gate: { keys: [ATTR_LANGFUSE_OBSERVATION_TYPE, ...PROMPT_KEYS], userMessageKeys: [ATTR_LANGFUSE_OBSERVATION_TYPE], agentKeysOnly: true },
};

function levelError(span: SpanView): RawError | undefined {
  if (span.attributes[ATTR_LANGFUSE_OBSERVATION_LEVEL] !== 'ERROR') return undefined;
  const message = stringAttr(span, ATTR_LANGFUSE_OBSERVATION_STATUS_MESSAGE);
  // loopwatch's own mark (the `langfuseObservations` option: its status message is the loop's):
  // read back (scan, serve), it is no failure of the call.
  if (message !== undefined && span.events?.some((e) => e.name === LOOP_EVENT_NAME && e.attributes?.[ATTR_LOOP_MESSAGE] === message) === true) return undefined;
  return message !== undefined ? { message } : {};
}
