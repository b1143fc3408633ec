import { MockLanguageModelV3 } from 'ai/test';

export type ModelResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
type Prompt = Parameters<MockLanguageModelV3['doGenerate']>[0]['prompt'];

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

export function toolCalls(step: number, calls: ReadonlyArray<{ toolName: string; input: unknown }>): ModelResult {
  return {
    content: calls.map((c, k) => ({ type: 'tool-call' as const, toolCallId: `call_${step}_${k}`, toolName: c.toolName, input: JSON.stringify(c.input) })),
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

export function text(t: string): ModelResult {
  return { content: [{ type: 'text', text: t }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
}

/** The newest tool results the model is shown, as sent (JSON or text output parts). */
export function lastToolOutputs(prompt: Prompt): unknown[] {
  const last = prompt.at(-1);
  if (!last || last.role !== 'tool') return [];
  return last.content.flatMap((p) => (p.type === 'tool-result' ? [p.output] : []));
}

/**
 * A model stuck on one tool call: it repeats `calls` on every step until it sees a loopwatch hint
 * among the results it is shown (then it answers, when `listens`), like a model that reads tool output.
 */
export function loopingModel(
  calls: ReadonlyArray<{ toolName: string; input: unknown }>,
  options: { listens?: boolean } = {},
): { model: MockLanguageModelV3; steps: () => number; prompts: Prompt[] } {
  let steps = 0;
  const prompts: Prompt[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      steps++;
      prompts.push(prompt);
      const sawHint = JSON.stringify(lastToolOutputs(prompt)).includes('[loopwatch] This call was not run');
      if (sawHint && options.listens !== false) return text('I could not find that order; please check the number.');
      return toolCalls(steps, calls);
    },
  });
  return { model, steps: () => steps, prompts };
}
