import {
  ATTR_AI_MODEL_ID,
  ATTR_AI_OPERATION_ID,
  ATTR_AI_RESPONSE_MODEL,
  ATTR_AI_USAGE_CACHED_INPUT_TOKENS,
  ATTR_AI_USAGE_COMPLETION_TOKENS,
  ATTR_AI_USAGE_INPUT_TOKEN_DETAILS_CACHE_READ_TOKENS,
  ATTR_AI_USAGE_INPUT_TOKENS,
  ATTR_AI_USAGE_OUTPUT_TOKENS,
  ATTR_AI_USAGE_PROMPT_TOKENS,
} from './ai-sdk.js';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS_TRACELOOP,
  ATTR_GEN_AI_USAGE_COMPLETION_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_PROMPT_TOKENS,
  nonEmpty,
  parseJsonObject,
} from './attributes.js';
import { ATTR_LANGFUSE_OBSERVATION_MODEL_NAME, ATTR_LANGFUSE_OBSERVATION_TYPE, ATTR_LANGFUSE_OBSERVATION_USAGE_DETAILS } from './langfuse.js';
import { ATTR_LANGSMITH_SPAN_KIND } from './langsmith.js';
import {
  ATTR_LLM_MODEL_NAME,
  ATTR_LLM_TOKEN_COUNT_COMPLETION,
  ATTR_LLM_TOKEN_COUNT_PROMPT,
  ATTR_LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ,
  ATTR_OPENINFERENCE_SPAN_KIND,
} from './openinference.js';
import type { SpanView } from './types.js';

/**
 * Every key a token count is read from, in every convention: a span that carries none of them
 * reports no usage (`ModelUsageReading.read` is false), so the span gate notes them in its pass
 * over the span's keys (`SpanGate.usageSeen`) and the spans without one are not read.
 */
export const MODEL_USAGE_KEYS: readonly string[] = [
  ATTR_AI_USAGE_INPUT_TOKENS,
  ATTR_AI_USAGE_PROMPT_TOKENS,
  ATTR_AI_USAGE_OUTPUT_TOKENS,
  ATTR_AI_USAGE_COMPLETION_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_PROMPT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_COMPLETION_TOKENS,
  ATTR_LLM_TOKEN_COUNT_PROMPT,
  ATTR_LLM_TOKEN_COUNT_COMPLETION,
  ATTR_LANGFUSE_OBSERVATION_USAGE_DETAILS,
];

/** What one model call (an LLM inference span) says it spent. */
export interface ModelUsage {
  /** Input (prompt) tokens, the ones read from a prompt cache included. */
  readonly input: number;
  readonly output: number;
  /** Input tokens read from the provider's prompt cache: part of `input`; 0 when not reported. */
  readonly cacheRead: number;
  /** The model asked for, and the model that answered (often a dated snapshot of it). */
  readonly requestModel: string | undefined;
  readonly responseModel: string | undefined;
}

/**
 * The usage of a model-call span, in whatever convention it is written; undefined for every other
 * span. Model calls only: spans that sum the usage of the calls below them (an AI SDK
 * `ai.generateText`, an `invoke_agent`, an agent step, an OpenInference chain or agent) would
 * count the same tokens twice.
 *
 * - AI SDK v4–v6 (and v7 with `LegacyOpenTelemetry`): the `ai.*.doGenerate` / `ai.*.doStream`
 *   spans, `ai.usage.inputTokens` / `outputTokens` (v4: `promptTokens` / `completionTokens`),
 *   `ai.usage.cachedInputTokens`, the model in `ai.model.id` / `ai.response.model`;
 * - OpenInference: `LLM` spans, `llm.token_count.prompt` / `completion`,
 *   `llm.token_count.prompt_details.cache_read`, `llm.model_name`;
 * - Langfuse: `generation` observations, the `langfuse.observation.usage_details` JSON
 *   (`input` / `output`, or OpenAI's `prompt_tokens` / `completion_tokens`),
 *   `langfuse.observation.model.name`;
 * - gen_ai semantic conventions, and everything that writes them (AI SDK v7 `@ai-sdk/otel`'s
 *   `chat` spans, Mastra, LangSmith, OpenLIT, Traceloop / OpenLLMetry, normalising processors):
 *   `gen_ai.usage.input_tokens` / `output_tokens` (Traceloop's older `prompt_tokens` /
 *   `completion_tokens`), `gen_ai.usage.cache_read.input_tokens`, on spans whose
 *   `gen_ai.operation.name` is an inference (`chat`, `text_completion`, `generate_content`) or absent.
 *
 * Runs on the spans of traces loopwatch tracks: a handful of reads for a span that is not a model call.
 */
export function readModelUsage(span: SpanView): ModelUsage | undefined {
  const out = new ModelUsageReading();
  return out.read(span) ? { input: out.input, output: out.output, cacheRead: out.cacheRead, requestModel: out.requestModel, responseModel: out.responseModel } : undefined;
}

/**
 * `readModelUsage` into fields of its own, reused from span to span: the span processor reads the
 * usage of every model call of a tracked trace, and one object a call was most of what that
 * allocated (bench/NOTES.md, heap allocated per tool call).
 */
export class ModelUsageReading implements ModelUsage {
  input = 0;
  output = 0;
  cacheRead = 0;
  requestModel: string | undefined = undefined;
  responseModel: string | undefined = undefined;

  /** Reads the span's usage into the fields (see `readModelUsage`); false, the fields left as they were, when it reports none. */
  read(span: SpanView): boolean {
    const a = span.attributes;
    const aiOperation = a[ATTR_AI_OPERATION_ID];
    if (aiOperation !== undefined) return AI_SDK_MODEL_CALLS.has(aiOperation as string) && aiSdkUsage(this, a);
    const openInferenceKind = a[ATTR_OPENINFERENCE_SPAN_KIND];
    if (openInferenceKind !== undefined) return openInferenceKind === 'LLM' && openInferenceUsage(this, a);
    const langsmithKind = a[ATTR_LANGSMITH_SPAN_KIND];
    if (langsmithKind !== undefined && langsmithKind !== 'llm') return false;
    if (a[ATTR_LANGFUSE_OBSERVATION_TYPE] === 'generation') return langfuseUsage(this, a) || genAiUsage(this, a);
    const operation = a[ATTR_GEN_AI_OPERATION_NAME];
    if (operation !== undefined && !GEN_AI_INFERENCE.has(operation as string)) return false;
    return genAiUsage(this, a);
  }

  /** Sets the fields from what a convention reported; false when it reported no token count. */
  set(input: number | undefined, output: number | undefined, cacheRead: number | undefined, requestModel: string | undefined, responseModel: string | undefined): boolean {
    if (input === undefined && output === undefined) return false;
    const inputTokens = input ?? 0;
    this.input = inputTokens;
    this.output = output ?? 0;
    // a cache can only serve what was sent
    this.cacheRead = Math.min(cacheRead ?? 0, inputTokens);
    this.requestModel = requestModel;
    this.responseModel = responseModel;
    return true;
  }
}

type Attributes = Readonly<Record<string, unknown>>;

/** The AI SDK's model calls; its other spans (`ai.generateText`, `ai.streamText`, ...) carry the sums of their steps. */
const AI_SDK_MODEL_CALLS: ReadonlySet<string> = new Set([
  'ai.generateText.doGenerate',
  'ai.streamText.doStream',
  'ai.generateObject.doGenerate',
  'ai.streamObject.doStream',
]);

/** gen_ai operations that are one inference (semantic conventions: the model spans). */
const GEN_AI_INFERENCE: ReadonlySet<string> = new Set(['chat', 'text_completion', 'generate_content']);

function aiSdkUsage(out: ModelUsageReading, a: Attributes): boolean {
  return out.set(
    tokens(a[ATTR_AI_USAGE_INPUT_TOKENS]) ?? tokens(a[ATTR_AI_USAGE_PROMPT_TOKENS]) ?? tokens(a[ATTR_GEN_AI_USAGE_INPUT_TOKENS]) ?? tokens(a[ATTR_GEN_AI_USAGE_PROMPT_TOKENS]),
    tokens(a[ATTR_AI_USAGE_OUTPUT_TOKENS]) ?? tokens(a[ATTR_AI_USAGE_COMPLETION_TOKENS]) ?? tokens(a[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]) ?? tokens(a[ATTR_GEN_AI_USAGE_COMPLETION_TOKENS]),
    tokens(a[ATTR_AI_USAGE_CACHED_INPUT_TOKENS]) ?? tokens(a[ATTR_AI_USAGE_INPUT_TOKEN_DETAILS_CACHE_READ_TOKENS]),
    nonEmpty(a[ATTR_GEN_AI_REQUEST_MODEL]) ?? nonEmpty(a[ATTR_AI_MODEL_ID]),
    nonEmpty(a[ATTR_AI_RESPONSE_MODEL]) ?? nonEmpty(a[ATTR_GEN_AI_RESPONSE_MODEL]),
  );
}

function openInferenceUsage(out: ModelUsageReading, a: Attributes): boolean {
  const model = nonEmpty(a[ATTR_LLM_MODEL_NAME]);
  return out.set(
    tokens(a[ATTR_LLM_TOKEN_COUNT_PROMPT]),
    tokens(a[ATTR_LLM_TOKEN_COUNT_COMPLETION]),
    tokens(a[ATTR_LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ]),
    model,
    model,
  );
}

function langfuseUsage(out: ModelUsageReading, a: Attributes): boolean {
  const details = parseJsonObject(a[ATTR_LANGFUSE_OBSERVATION_USAGE_DETAILS]);
  if (details === undefined) return false;
  const model = nonEmpty(a[ATTR_LANGFUSE_OBSERVATION_MODEL_NAME]);
  return out.set(
    tokens(details['input']) ?? tokens(details['prompt_tokens']) ?? tokens(details['input_tokens']),
    tokens(details['output']) ?? tokens(details['completion_tokens']) ?? tokens(details['output_tokens']),
    undefined,
    model ?? nonEmpty(a[ATTR_GEN_AI_REQUEST_MODEL]),
    model ?? nonEmpty(a[ATTR_GEN_AI_RESPONSE_MODEL]),
  );
}

function genAiUsage(out: ModelUsageReading, a: Attributes): boolean {
  const input = tokens(a[ATTR_GEN_AI_USAGE_INPUT_TOKENS]) ?? tokens(a[ATTR_GEN_AI_USAGE_PROMPT_TOKENS]);
  const output = tokens(a[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]) ?? tokens(a[ATTR_GEN_AI_USAGE_COMPLETION_TOKENS]);
  if (input === undefined && output === undefined) return false;
  return out.set(
    input,
    output,
    tokens(a[ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]) ?? tokens(a[ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS_TRACELOOP]),
    nonEmpty(a[ATTR_GEN_AI_REQUEST_MODEL]),
    nonEmpty(a[ATTR_GEN_AI_RESPONSE_MODEL]),
  );
}

/** A token count: a non-negative number, or its decimal text (OTLP/JSON writes 64-bit integers as strings). */
function tokens(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.length > 0 && v.length <= 20 ? Number(v) : typeof v === 'bigint' ? Number(v) : Number.NaN;
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : undefined;
}
