import { firstString } from './attributes.js';
import { genAiAdapter } from './gen-ai.js';
import type { ConventionAdapter, SpanView, ToolCallFields } from './types.js';

const SPAN_TYPE = 'mastra.span.type';
const PROMPT_KEYS = ['mastra.metadata.promptName', 'mastra.metadata.prompt_name'];
const AGENT_KEYS = ['mastra.metadata.agentName', 'mastra.metadata.agent_name'];

/**
 * Mastra through `@mastra/otel-bridge`: the bridge starts an OTel span with Mastra's own name and
 * no attributes, and only when the Mastra span ends renames it `execute_tool {tool}` and writes
 * gen_ai keys plus `mastra.span.type` (`tool_call`, `mcp_tool_call`, …) and `mastra.metadata.*`.
 * So these spans are recognised only at end (the processor evaluates spans first recognised
 * then), and nothing is known about them at start. The agent span's attributes arrive when the
 * agent ends, after its tools, so its names cannot be inherited: the prompt name is read from the
 * tool span's own metadata (`mastra.metadata.promptName`), else the processor's `promptName`
 * resolver applies.
 * (`@mastra/otel-exporter` exports through its own pipeline; an in-process processor never sees it.)
 */
export const mastraAdapter: ConventionAdapter = {
  name: 'mastra',

  isToolSpan(span: SpanView): boolean {
    const type = span.attributes[SPAN_TYPE];
    return typeof type === 'string' && type.endsWith('tool_call');
  },

  readToolCall(span: SpanView): ToolCallFields | undefined {
    return genAiAdapter.readToolCall(span);
  },

  promptName: (span) => firstString(span, PROMPT_KEYS),
  agentName: (span) => firstString(span, AGENT_KEYS),

  gate: { keys: [SPAN_TYPE, ...PROMPT_KEYS, ...AGENT_KEYS], agentKeysOnly: true },
};
