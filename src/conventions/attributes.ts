import type { RawError } from '../detector/error-class.js';
import type { SpanView, ToolCallFields } from './types.js';

/**
 * Attribute keys written by loopwatch or read from the gen_ai conventions. The gen_ai constants in
 * `@opentelemetry/semantic-conventions` are incubating and deprecated there, so the strings are
 * defined here (as that package's README recommends for libraries).
 */
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const GEN_AI_OPERATION_EXECUTE_TOOL = 'execute_tool';
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
export const ATTR_GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';
export const ATTR_GEN_AI_PROMPT_NAME = 'gen_ai.prompt.name';
export const ATTR_GEN_AI_AGENT_NAME = 'gen_ai.agent.name';
/** A model call's input messages (the gen_ai conventions' chat history, JSON text or structured). */
export const ATTR_GEN_AI_INPUT_MESSAGES = 'gen_ai.input.messages';
/** The older conventions' user-message event, and where its text is. */
export const GEN_AI_USER_MESSAGE_EVENT = 'gen_ai.user.message';
export const ATTR_GEN_AI_EVENT_CONTENT = 'gen_ai.event.content';
/** Legacy gen_ai content keys (LangSmith writes a run's inputs and outputs there). */
export const ATTR_GEN_AI_PROMPT = 'gen_ai.prompt';
export const ATTR_GEN_AI_COMPLETION = 'gen_ai.completion';
/** A model call's models and usage (`readModelUsage`). */
export const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const ATTR_GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
/** The older names of the two above (Traceloop / OpenLLMetry still write them). */
export const ATTR_GEN_AI_USAGE_PROMPT_TOKENS = 'gen_ai.usage.prompt_tokens';
export const ATTR_GEN_AI_USAGE_COMPLETION_TOKENS = 'gen_ai.usage.completion_tokens';
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
/** Traceloop / OpenLLMetry's own spelling of the key above (`cache_read_input_tokens`, one word). */
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS_TRACELOOP = 'gen_ai.usage.cache_read_input_tokens';
export const ATTR_ERROR_TYPE = 'error.type';
export const ATTR_ERROR_MESSAGE = 'error.message';
/** The event `span.recordException` adds, and its attributes. */
export const EXCEPTION_EVENT_NAME = 'exception';
export const ATTR_EXCEPTION_TYPE = 'exception.type';
export const ATTR_EXCEPTION_MESSAGE = 'exception.message';
export const STATUS_CODE_ERROR = 2;
/** Resource attributes: the service a span came from (read by scan and serve), and serve's own. */
export const ATTR_SERVICE_NAME = 'service.name';
export const ATTR_SERVICE_VERSION = 'service.version';
export const ATTR_SERVICE_INSTANCE_ID = 'service.instance.id';

export function stringAttr(span: SpanView, key: string): string | undefined {
  return nonEmpty(span.attributes[key]);
}

/** A value when it is a string with something in it. */
export function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** First non-empty string among `keys`. */
export function firstString(span: SpanView, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const v = stringAttr(span, key);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** First present value among `keys` (any type: SDK 3.x attributes may be objects). */
export function firstValue(span: SpanView, keys: readonly string[]): unknown {
  for (const key of keys) {
    const v = span.attributes[key];
    if (v !== undefined && v !== null) return v;
  }
  return undefined;
}

/** The gen_ai keys every adapter falls back on: normalising processors rewrite other conventions into them. */
export const GEN_AI_ARGUMENT_KEYS: readonly string[] = [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS];
export const GEN_AI_RESULT_KEYS: readonly string[] = [ATTR_GEN_AI_TOOL_CALL_RESULT];

/**
 * A JSON object or array held in a string attribute, parsed; anything else (plain text, invalid
 * JSON, a value that is already structured) comes back as `undefined`. Only for small metadata
 * values: tool content is handed to the fingerprint as it is.
 */
export function parseJsonObject(value: unknown): Record<string, unknown> | undefined {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  if (typeof value !== 'string' || value.length > 65_536) return undefined;
  const first = value.trimStart()[0];
  if (first !== '{') return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A non-empty string member of a parsed object. */
export function stringMember(obj: Record<string, unknown> | undefined, ...keys: string[]): string | undefined {
  if (!obj) return undefined;
  for (const key of keys) {
    const v = obj[key];
    if (typeof v === 'string' && v.length > 0) return v;
  }
  return undefined;
}

/** `ToolCallFields` without the `undefined` members (exactOptionalPropertyTypes). */
export function toolCallFields(
  toolName: string,
  args: unknown,
  result: unknown,
  error: RawError | undefined,
  callId: string | undefined,
): ToolCallFields {
  // One shape for every call, absent fields undefined: it is built on every tool call.
  return {
    toolName,
    arguments: args === null ? undefined : args,
    // a failed call's "result" is its output (a failing command's): part of what the failure said
    result: result === null ? undefined : result,
    error,
    callId,
  };
}

/**
 * The failure recorded on a span, from any of the places instrumentations put it: status ERROR,
 * `error.type`, or an `exception` event (type and message), with `error.message` (newer semconv,
 * Mastra) as another source of the message. Undefined when the span succeeded.
 */
export function spanError(span: SpanView): RawError | undefined {
  const errorType = nonEmpty(span.attributes[ATTR_ERROR_TYPE]);
  const failed = span.status?.code === STATUS_CODE_ERROR;
  if (!failed && errorType === undefined) return undefined;
  const exception = span.events?.find((e) => e.name === EXCEPTION_EVENT_NAME);
  const exType = exception?.attributes?.[ATTR_EXCEPTION_TYPE];
  const exMessage = exception?.attributes?.[ATTR_EXCEPTION_MESSAGE];
  const type = errorType ?? (typeof exType === 'string' && exType.length > 0 ? exType : undefined);
  const message =
    (typeof exMessage === 'string' && exMessage.length > 0 ? exMessage : undefined) ??
    stringAttr(span, ATTR_ERROR_MESSAGE) ??
    (span.status?.message !== undefined && span.status.message !== '' ? span.status.message : undefined);
  return { ...(type !== undefined ? { type } : {}), ...(message !== undefined ? { message } : {}) };
}
