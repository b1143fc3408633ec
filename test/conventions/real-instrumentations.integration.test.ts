/**
 * Instrumentation packages that run offline, used for real: their own spans through a real SDK
 * 2.x provider with loopwatch registered. Langfuse (`@langfuse/tracing`) and OpenInference's
 * LangChain.js instrumentation (`@arizeai/openinference-instrumentation-langchain` over real
 * `@langchain/core` tools). The AI SDK has its own files (test/processor/ai-sdk-v*.integration.test.ts).
 */
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { RunnableLambda } from '@langchain/core/runnables';
import { tool as langchainTool } from '@langchain/core/tools';
import { setLangfuseTracerProvider, startActiveObservation, startObservation } from '@langfuse/tracing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aiHarness, inRunSpan, loopEvents, type AiHarness } from '../processor/ai-sdk-harness.js';

let h: AiHarness | undefined;
afterEach(async () => {
  await h?.shutdown();
  h = undefined;
});

describe('Langfuse SDK v5 observations (real @langfuse/tracing)', () => {
  async function agentRun(harness: AiHarness, queries: string[], failWith?: string): Promise<{ executed: number; error?: unknown }> {
    setLangfuseTracerProvider(harness.provider);
    let executed = 0;
    const run = await inRunSpan(harness, 'support run', (signal) =>
      startActiveObservation(
        'support-agent',
        async () => {
          for (const q of queries) {
            if (signal.aborted) throw signal.reason;
            // Each step: the model call, with the prompt linked the way Langfuse links prompts
            // (on the generation), then the tool call it asked for.
            startObservation('llm', { model: 'mock', prompt: { name: 'support-v2', version: 3, isFallback: false } }, { asType: 'generation' }).end();
            await startActiveObservation(
              'search',
              async (t) => {
                executed++;
                t.update(failWith ? { input: { q }, level: 'ERROR', statusMessage: failWith } : { input: { q }, output: { hits: q === 'refunds' ? ['policy.md'] : [] } });
              },
              { asType: 'tool' },
            );
          }
        },
        { asType: 'agent' },
      ),
    );
    return { executed, ...(run.error !== undefined ? { error: run.error } : {}) };
  }

  it('reads tool observations, takes the prompt linked on the generations, stops the loop', async () => {
    h = aiHarness();
    const run = await agentRun(h, Array.from({ length: 10 }, () => 'warranty'));
    expect(run.executed).toBe(5);
    expect(run.error).toMatchObject({ name: 'ToolLoopError', toolName: 'search' });
    // The agent observation gets its type only after it has started and its names arrive when it
    // ends, after its tools: no agent name here (see docs/instrumentations.md).
    expect(h.detections.map((d) => [d.level, d.callIndex, d.promptName, d.evidence])).toEqual([
      ['warning', 3, 'support-v2', 'arguments+result'],
      ['critical', 5, 'support-v2', 'arguments+result'],
    ]);
    const tools = h.exporter.getFinishedSpans().filter((s) => s.attributes['langfuse.observation.type'] === 'tool');
    expect(tools.map((s) => loopEvents(s).length)).toEqual([0, 0, 1, 0, 1]);
    expect(tools.every((s) => s.attributes['gen_ai.tool.name'] === 'search' && s.attributes['gen_ai.prompt.name'] === 'support-v2')).toBe(true);
  });

  it('a failure Langfuse records only as level ERROR counts as a failure', async () => {
    h = aiHarness();
    await agentRun(h, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], 'rate limited');
    expect(h.detections[0]).toMatchObject({ kind: 'error_pattern', level: 'warning' });
  });

  it('an honest run stays quiet', async () => {
    h = aiHarness();
    const run = await agentRun(h, ['warranty', 'refunds', 'refund window']);
    expect(run).toEqual({ executed: 3 });
    expect(h.detections).toEqual([]);
  });
});

describe('OpenInference LangChain.js (real instrumentation over real @langchain/core tools)', () => {
  const instrumentation = new LangChainInstrumentation();
  beforeAll(() => {
    instrumentation.manuallyInstrument(CallbackManagerModule);
  });

  const search = langchainTool(async ({ q }: { q: string }) => JSON.stringify({ hits: q === 'refunds' ? ['policy.md'] : [] }), {
    name: 'search',
    description: 'Search the docs',
    schema: z.object({ q: z.string() }),
  });

  /** An agent loop as LangGraph's ToolNode runs it: each call is a tool call with a fresh id. */
  async function agentRun(harness: AiHarness, queries: string[]): Promise<{ executed: number; error?: unknown }> {
    instrumentation.setTracerProvider(harness.provider);
    let executed = 0;
    const run = await inRunSpan(harness, 'support run', (signal) =>
      RunnableLambda.from(async (_input: string, config) => {
        for (const [i, q] of queries.entries()) {
          if (signal.aborted) throw signal.reason;
          await search.invoke({ name: 'search', args: { q }, id: `call_${i}`, type: 'tool_call' }, config);
          executed++;
        }
        return 'done';
      }).invoke('go', { runName: 'support-agent', metadata: { prompt_name: 'support-v2' } }),
    );
    return { executed, ...(run.error !== undefined ? { error: run.error } : {}) };
  }

  it('reads TOOL spans (unwrapping the ToolMessage), takes the prompt name from run metadata, stops the loop', async () => {
    h = aiHarness();
    const run = await agentRun(h, Array.from({ length: 10 }, () => 'warranty'));
    expect(run.executed).toBe(5);
    expect(run.error).toMatchObject({ name: 'ToolLoopError', toolName: 'search' });
    expect(h.detections.map((d) => [d.level, d.callIndex, d.promptName])).toEqual([
      ['warning', 3, 'support-v2'],
      ['critical', 5, 'support-v2'],
    ]);
    const tools = h.exporter.getFinishedSpans().filter((s) => s.attributes['openinference.span.kind'] === 'TOOL');
    expect(tools).toHaveLength(5);
    expect(tools.map((s) => loopEvents(s).length)).toEqual([0, 0, 1, 0, 1]);
    // each output.value carries a different tool_call_id: the repeat was still recognised
    expect(new Set(tools.map((s) => s.attributes['output.value'])).size).toBe(5);
  });

  it('an honest run stays quiet', async () => {
    h = aiHarness();
    const run = await agentRun(h, ['warranty', 'refunds', 'refund window']);
    expect(run).toEqual({ executed: 3 });
    expect(h.detections).toEqual([]);
  });
});

describe('what loops cost, read from the real instrumentations\' model-call spans', () => {
  it('Langfuse: generations with usageDetails price the repetitions of a tool-observation loop', async () => {
    h = aiHarness({ prices: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } } });
    setLangfuseTracerProvider(h.provider);
    await inRunSpan(h, 'support run', (signal) =>
      startActiveObservation(
        'support-agent',
        async () => {
          for (let n = 1; n <= 10; n++) {
            if (signal.aborted) throw signal.reason;
            startObservation('llm', { model: 'gpt-4o-mini', usageDetails: { input: 1000 * n, output: 10 * n } }, { asType: 'generation' }).end();
            await startActiveObservation('search', async (t) => void t.update({ input: { q: 'warranty' }, output: { hits: [] } }), { asType: 'tool' });
          }
        },
        { asType: 'agent' },
      ),
    );
    // critical at call 5: generations 2..5 asked for calls 2..5
    const critical = h.detections.find((d) => d.level === 'critical');
    expect(critical?.tokens).toEqual({ input: 14_000, output: 140 });
    expect(critical?.costUsd).toBeCloseTo((14_000 * 0.15 + 140 * 0.6) / 1e6, 12);
  });

  it('OpenInference LangChain.js: LLM spans of a chat model reporting usage_metadata', async () => {
    const instrumentation = new LangChainInstrumentation();
    instrumentation.manuallyInstrument(CallbackManagerModule);
    h = aiHarness();
    instrumentation.setTracerProvider(h.provider);
    let n = 0;
    /** A chat model that answers with the usage a provider reports (LangChain's usage_metadata). */
    class UsageReportingModel extends BaseChatModel {
      _llmType(): string {
        return 'usage-reporting';
      }
      async _generate(): Promise<ChatResult> {
        n++;
        // (set after construction: the message's generic types leave usage_metadata untyped here)
        const message = Object.assign(new AIMessage({ content: 'search again' }), { usage_metadata: { input_tokens: 1000 * n, output_tokens: 10 * n, total_tokens: 1010 * n } });
        return { generations: [{ text: 'search again', message }] };
      }
    }
    const model = new UsageReportingModel({});
    const search = langchainTool(async () => JSON.stringify({ hits: [] }), { name: 'search', description: 'Search', schema: z.object({ q: z.string() }) });
    await inRunSpan(h, 'support run', (signal) =>
      RunnableLambda.from(async (_input: string, config) => {
        for (let i = 0; i < 6; i++) {
          if (signal.aborted) throw signal.reason;
          await model.invoke('where is my order?', config);
          await search.invoke({ name: 'search', args: { q: 'order 1234' }, id: `call_${i}`, type: 'tool_call' }, config);
        }
        return 'done';
      }).invoke('go', { runName: 'support-agent', metadata: { prompt_name: 'support-v2' } }),
    );
    const llmSpans = h.exporter.getFinishedSpans().filter((s) => s.attributes['openinference.span.kind'] === 'LLM');
    expect(llmSpans.length).toBeGreaterThanOrEqual(5);
    expect(llmSpans[0]?.attributes['llm.token_count.prompt']).toBe(1000);
    const critical = h.detections.find((d) => d.level === 'critical');
    expect(critical?.callIndex).toBe(5);
    expect(critical?.tokens).toEqual({ input: 14_000, output: 140 });
  });
});
