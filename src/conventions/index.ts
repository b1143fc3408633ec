import { genAiAdapter } from './gen-ai.js';
import type { ConventionAdapter, SpanView } from './types.js';

export type { ConventionAdapter, SpanEventView, SpanView, ToolCallFields } from './types.js';
export { genAiAdapter } from './gen-ai.js';

/** Adapters tried in order on every span; the first that claims a tool span reads it. */
export const defaultAdapters: readonly ConventionAdapter[] = [genAiAdapter];

export function findToolAdapter(adapters: readonly ConventionAdapter[], span: SpanView): ConventionAdapter | undefined {
  for (const a of adapters) if (a.isToolSpan(span)) return a;
  return undefined;
}

export function readPromptName(adapters: readonly ConventionAdapter[], span: SpanView): string | undefined {
  for (const a of adapters) {
    const p = a.promptName?.(span);
    if (p !== undefined) return p;
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
