import { aiSdkAdapter } from './ai-sdk.js';
import { genAiAdapter } from './gen-ai.js';
import { langfuseAdapter } from './langfuse.js';
import { langsmithAdapter } from './langsmith.js';
import { mastraAdapter } from './mastra.js';
import { mcpAdapter } from './mcp.js';
import { openInferenceAdapter } from './openinference.js';
import { traceloopAdapter } from './traceloop.js';
import type { ConventionAdapter, SpanView, ToolCallFields } from './types.js';

export type { AdapterGate, ConventionAdapter, SpanEventView, SpanView, ToolCallFields } from './types.js';
export { gateOf, SpanGate } from './gate.js';
export { genAiAdapter } from './gen-ai.js';
export { aiSdkAdapter } from './ai-sdk.js';
export { openInferenceAdapter } from './openinference.js';
export { traceloopAdapter } from './traceloop.js';
export { langfuseAdapter } from './langfuse.js';
export { langsmithAdapter } from './langsmith.js';
export { mastraAdapter } from './mastra.js';
export { mcpAdapter } from './mcp.js';
export { customAdapter, type CustomAdapterOptions, type AttributeSource, type ToolSpanMatcher } from './custom.js';

/**
 * Adapters tried in order on every span; the first that claims a tool span reads it. Specific
 * conventions come before the generic gen_ai one because several of them also carry gen_ai keys or
 * an `execute_tool …` name without the gen_ai content keys: Traceloop renames AI SDK tool spans
 * at start (the `ai.toolCall.*` keys stay until its onEnd), Traceloop's LangChain spans and
 * LangSmith's carry `gen_ai.operation.name = execute_tool` with the content elsewhere, Mastra's
 * add `mastra.metadata.*`. Prompt and agent names are taken from the first adapter that has one.
 */
export const defaultAdapters: readonly ConventionAdapter[] = [
  aiSdkAdapter,
  openInferenceAdapter,
  traceloopAdapter,
  langsmithAdapter,
  langfuseAdapter,
  mastraAdapter,
  mcpAdapter,
  genAiAdapter,
];

/**
 * The adapter that claims `span`. The processor picks it when the span starts and reads the call
 * when it ends; attributes may have changed in between (the Mastra bridge and Traceloop rewrite
 * spans, normalising processors add gen_ai keys). So the adapter returned here decides again at
 * read time, among the same list, and falls back on the one chosen at start. `candidates`: the
 * adapters worth asking (those whose gate the span passes), in list order.
 */
export function findToolAdapter(adapters: readonly ConventionAdapter[], span: SpanView, candidates = adapters): ConventionAdapter | undefined {
  const a = claimingAdapter(candidates, span);
  return a === undefined ? undefined : lateBound(adapters, a);
}

/** The first of `candidates` that claims `span` as a tool span, as it is now. */
export function claimingAdapter(candidates: readonly ConventionAdapter[], span: SpanView): ConventionAdapter | undefined {
  for (const a of candidates) if (a.isToolSpan(span)) return a;
  return undefined;
}

/**
 * The call of a span that `chosen` claimed earlier (when it started), read by `now`, the adapter
 * that claims it now (if any), falling back on `chosen`: see `findToolAdapter`.
 */
export function readClaimedCall(now: ConventionAdapter | undefined, chosen: ConventionAdapter, span: SpanView): ToolCallFields | undefined {
  if (now === undefined || now === chosen) return chosen.readToolCall(span);
  return now.readToolCall(span) ?? chosen.readToolCall(span);
}

const bound = new WeakMap<readonly ConventionAdapter[], Map<ConventionAdapter, ConventionAdapter>>();

function lateBound(adapters: readonly ConventionAdapter[], chosen: ConventionAdapter): ConventionAdapter {
  let forList = bound.get(adapters);
  if (!forList) bound.set(adapters, (forList = new Map()));
  let wrapper = forList.get(chosen);
  if (!wrapper) {
    wrapper = {
      name: chosen.name,
      isToolSpan: (span) => chosen.isToolSpan(span),
      readToolCall: (span: SpanView) => readClaimedCall(claimingAdapter(adapters, span), chosen, span),
      ...(chosen.gate ? { gate: chosen.gate } : {}),
      ...(chosen.promptName ? { promptName: (span: SpanView) => chosen.promptName?.(span) } : {}),
      ...(chosen.agentName ? { agentName: (span: SpanView) => chosen.agentName?.(span) } : {}),
      ...(chosen.userMessages ? { userMessages: (span: SpanView) => chosen.userMessages?.(span) } : {}),
    };
    forList.set(chosen, wrapper);
  }
  return wrapper;
}

export function readPromptName(adapters: readonly ConventionAdapter[], span: SpanView): string | undefined {
  for (const a of adapters) {
    const p = a.promptName?.(span);
    if (p !== undefined) return p;
  }
  return undefined;
}

/** The user messages a span records, read by the first adapter that finds some (see `user-messages.ts`). */
export function readUserMessages(adapters: readonly ConventionAdapter[], span: SpanView): readonly string[] | undefined {
  for (const a of adapters) {
    const m = a.userMessages?.(span);
    if (m !== undefined) return m;
  }
  return undefined;
}

export function readAgentName(adapters: readonly ConventionAdapter[], span: SpanView): string | undefined {
  for (const a of adapters) {
    const p = a.agentName?.(span);
    if (p !== undefined) return p;
  }
  return undefined;
}
