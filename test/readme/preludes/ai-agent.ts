// Prelude for README snippets tagged `ts run prelude=ai-agent`: the agent's `model`, `tools` and
// `prompt`, which the snippet says are yours. The AI SDK's own mock model stands in for a real
// one (no network): it asks for search({ query: 'order A-1234' }) at every step, and the tool
// always finds nothing, the loop the snippet is about. Names are prefixed so that the snippet's
// own imports never clash with the prelude's.
import { tool as __preludeTool } from 'ai';
import { MockLanguageModelV3 as __PreludeMockModel } from 'ai/test';
import { z as __preludeZ } from 'zod';

let __preludeStep = 0;
const model = new __PreludeMockModel({
  doGenerate: async () => ({
    content: [{ type: 'tool-call', toolCallId: `call_${++__preludeStep}`, toolName: 'search', input: JSON.stringify({ query: 'order A-1234' }) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } },
    warnings: [],
  }),
});
const tools = {
  search: __preludeTool({
    description: 'Search the orders',
    inputSchema: __preludeZ.object({ query: __preludeZ.string() }),
    execute: async () => ({ hits: [] }),
  }),
};
const prompt = 'Where is my order A-1234?';

// Exported so the prelude type-checks on its own (it is used by the snippet appended to it).
export { model, prompt, tools };
