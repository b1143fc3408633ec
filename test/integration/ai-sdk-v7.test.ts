/**
 * The real AI SDK v7 (installed as `ai-v7`) with its OpenTelemetry integration `@ai-sdk/otel`
 * (gen_ai spans: `invoke_agent`, `step N`, `chat`, `execute_tool {tool}`), driven by the SDK's own
 * `MockLanguageModelV3` through a real SDK 2.x provider. Only the model is mocked. v7 declares
 * Node >= 22 but runs on Node 20; the SDK 3.x / Node 22 combination is covered by test/matrix.
 */
import { OpenTelemetry } from '@ai-sdk/otel';
import { generateText, isStepCount, registerTelemetry, tool } from 'ai-v7';
import { trace } from '@opentelemetry/api';
import { MockLanguageModelV3 } from 'ai-v7/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolLoopError } from '../../src/index.js';
import { aiHarness, inRunSpan, loopEvents, toolSpans, type AiHarness } from './ai-sdk-harness.js';

type Result = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const callTool = (n: number, toolName: string, input: unknown): Result => ({
  content: [{ type: 'tool-call', toolCallId: `call_${n}`, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
});
const answer = (text: string): Result => ({ content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] });

function scriptedModel(script: ReadonlyArray<(n: number) => Result>): { model: MockLanguageModelV3; calls: () => number } {
  let n = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => (script[Math.min(n, script.length - 1)] as (n: number) => Result)(++n),
  });
  return { model, calls: () => n };
}

const searchTool = (executed: string[]) =>
  tool({
    description: 'Search the docs',
    inputSchema: z.object({ q: z.string() }),
    execute: async ({ q }) => {
      executed.push(q);
      return q.includes('refund') ? { hits: ['refund-policy.md'] } : { hits: [] };
    },
  });

let h: AiHarness | undefined;
afterEach(async () => {
  await h?.shutdown();
  h = undefined;
});

describe('AI SDK v7 with @ai-sdk/otel (gen_ai spans) with a real tracer provider', () => {
  it('warns on a looping tool run, then stops it through abortSignal() passed to generateText', async () => {
    const harness = (h = aiHarness());
    const executed: string[] = [];
    const { model, calls } = scriptedModel([(n) => callTool(n, 'search', { q: 'warranty for model X' })]);
    const run = await inRunSpan(harness, 'docs run', (signal) =>
      generateText({
        model,
        prompt: 'What is the warranty?',
        tools: { search: searchTool(executed) },
        stopWhen: isStepCount(20),
        abortSignal: signal,
        // The prompt template name travels in the run's runtimeContext; `includeRuntimeContext` lets
        // telemetry see it and `runtimeContext: true` writes it as `ai.settings.context.promptName`.
        runtimeContext: { promptName: 'docs-qa-v1' },
        telemetry: {
          functionId: 'docs-bot',
          includeRuntimeContext: { promptName: true },
          integrations: new OpenTelemetry({ tracer: harness.tracer, runtimeContext: true }),
        },
      }),
    );
    expect(run.error).toBeInstanceOf(ToolLoopError);
    expect(run.error).toMatchObject({ toolName: 'search', count: 5, kind: 'repeat' });
    expect(executed).toHaveLength(5);
    expect(calls()).toBe(5);
    expect(h.detections.map((d) => [d.level, d.callIndex, d.toolName, d.promptName, d.agentName, d.evidence])).toEqual([
      ['warning', 3, 'search', 'docs-qa-v1', 'docs-bot', 'arguments+result'],
      ['critical', 5, 'search', 'docs-qa-v1', 'docs-bot', 'arguments+result'],
    ]);
    const spans = toolSpans(h.exporter.getFinishedSpans(), 'execute_tool search');
    expect(spans).toHaveLength(5);
    expect(spans.map((s) => loopEvents(s).map((e) => e['loop.level']))).toEqual([[], [], ['warning'], [], ['critical']]);
    expect(spans.every((s) => s.attributes['gen_ai.prompt.name'] === 'docs-qa-v1')).toBe(true);
    // the root agent span the AI SDK made is a child of the app's span: same trace as the signal
    const agent = h.exporter.getFinishedSpans().find((s) => s.name.startsWith('invoke_agent'));
    expect(agent?.spanContext().traceId).toBe(run.traceId);
    expect(agent?.attributes['gen_ai.agent.name']).toBe('docs-bot');
  });

  it('an honest multi-step run produces no detection', async () => {
    const harness = (h = aiHarness());
    const executed: string[] = [];
    const { model } = scriptedModel([
      (n) => callTool(n, 'search', { q: 'warranty' }),
      (n) => callTool(n, 'search', { q: 'refund window' }),
      () => answer('Refunds are accepted within 30 days.'),
    ]);
    const run = await inRunSpan(harness, 'docs run', (signal) =>
      generateText({
        model,
        prompt: 'Refunds?',
        tools: { search: searchTool(executed) },
        stopWhen: isStepCount(20),
        abortSignal: signal,
        runtimeContext: { promptName: 'docs-qa-v1' },
        telemetry: {
          functionId: 'docs-bot',
          includeRuntimeContext: { promptName: true },
          // the other way to name the prompt: gen_ai.prompt.name on every span through enrichSpan
          integrations: new OpenTelemetry({
            tracer: harness.tracer,
            enrichSpan: ({ runtimeContext }) => (typeof runtimeContext?.['promptName'] === 'string' ? { 'gen_ai.prompt.name': runtimeContext['promptName'] } : undefined),
          }),
        },
      }),
    );
    expect(run.error).toBeUndefined();
    expect(run.value?.text).toContain('30 days');
    expect(executed).toEqual(['warranty', 'refund window']);
    expect(h.detections).toEqual([]);
    const spans = toolSpans(h.exporter.getFinishedSpans(), 'execute_tool search');
    expect(spans.map((s) => s.attributes['gen_ai.prompt.name'])).toEqual(['docs-qa-v1', 'docs-qa-v1']);
  });

  // Last: it registers globals (provider and integration), as an application does.
  it('works through the global registration the README shows: registerTelemetry(new OpenTelemetry())', async () => {
    const harness = (h = aiHarness());
    trace.setGlobalTracerProvider(harness.provider);
    registerTelemetry(new OpenTelemetry());
    const executed: string[] = [];
    const { model } = scriptedModel([(n) => callTool(n, 'search', { q: 'warranty' })]);
    const run = await inRunSpan(harness, 'docs run', (signal) =>
      generateText({ model, prompt: 'x', tools: { search: searchTool(executed) }, stopWhen: isStepCount(20), abortSignal: signal, telemetry: { functionId: 'docs-bot' } }),
    );
    expect(run.error).toBeInstanceOf(ToolLoopError);
    expect(executed).toHaveLength(5);
    expect(h.detections.map((d) => [d.level, d.agentName])).toEqual([
      ['warning', 'docs-bot'],
      ['critical', 'docs-bot'],
    ]);
  });
});
