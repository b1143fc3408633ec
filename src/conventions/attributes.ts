import type { RawError } from '../detector/error-class.js';
import type { SpanView } from './types.js';

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
export const ATTR_ERROR_TYPE = 'error.type';
export const STATUS_CODE_ERROR = 2;

export function stringAttr(span: SpanView, key: string): string | undefined {
  const v = span.attributes[key];
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

/**
 * The failure recorded on a span, from any of the places instrumentations put it: status ERROR,
 * `error.type`, or an `exception` event (type and message). Undefined when the span succeeded.
 */
export function spanError(span: SpanView): RawError | undefined {
  const errorType = stringAttr(span, ATTR_ERROR_TYPE);
  const failed = span.status?.code === STATUS_CODE_ERROR;
  const exception = span.events?.find((e) => e.name === 'exception');
  if (!failed && errorType === undefined) return undefined;
  const exType = exception?.attributes?.['exception.type'];
  const exMessage = exception?.attributes?.['exception.message'];
  const type = errorType ?? (typeof exType === 'string' ? exType : undefined);
  const message =
    typeof exMessage === 'string' && exMessage.length > 0 ? exMessage : span.status?.message !== undefined && span.status.message !== '' ? span.status.message : undefined;
  return { ...(type !== undefined ? { type } : {}), ...(message !== undefined ? { message } : {}) };
}
