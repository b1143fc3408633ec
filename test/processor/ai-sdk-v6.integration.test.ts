/**
 * The real AI SDK v6 (`ai`, built-in `experimental_telemetry`, `ai.toolCall` spans) driven by its
 * own mock language model (`MockLanguageModelV3` from `ai/test`) through a real SDK 2.x provider.
 * Nothing is mocked but the model, which cannot run here.
 */
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
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

/** A model that asks for `script[i]` on its i-th call (and repeats the last entry after that). */
function scriptedModel(script: ReadonlyArray<(n: number) => Result>): { model: MockLanguageModelV3; calls: () => number } {
  let n = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      const step = script[Math.min(n, script.length - 1)] as (n: number) => Result;
      return step(++n);
    },
  });
  return { model, calls: () => n };
}

const orderTools = (executed: string[]) => ({
  lookup_order: tool({
    description: 'Look an order up',
    inputSchema: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => {
      executed.push(`lookup_order:${orderId}`);
      return orderId === '1234' ? { status: 'unknown order' } : { status: 'shipped', carrier: 'DHL' };
    },
  }),
  get_tracking: tool({
    description: 'Tracking for a shipped order',
    inputSchema: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => {
      executed.push(`get_tracking:${orderId}`);
      return { eta: '2026-11-24', orderId };
    },
  }),
});

let h: AiHarness | undefined;
afterEach(async () => {
  await h?.shutdown();
  h = undefined;
});

describe('AI SDK v6 (ai.toolCall spans) with a real tracer provider', () => {
  it('warns on a looping tool run, then stops it through abortSignal() passed to generateText', async () => {
    const harness = (h = aiHarness());
    const executed: string[] = [];
    const { model, calls } = scriptedModel([(n) => callTool(n, 'lookup_order', { orderId: '1234' })]);
    const run = await inRunSpan(harness, 'support run', (signal) =>
      generateText({
        model,
        prompt: 'Where is order 1234?',
        tools: orderTools(executed),
        stopWhen: stepCountIs(20),
        abortSignal: signal,
        experimental_telemetry: { isEnabled: true, functionId: 'support-bot', metadata: { promptName: 'order-status-v2' }, tracer: harness.tracer },
      }),
    );

    // stopped: the critical detection came in the 5th tool span's onEnding, before the 6th model call
    expect(run.value).toBeUndefined();
    // generateText rejects with the signal's reason itself
    expect(run.error).toBeInstanceOf(ToolLoopError);
    expect(run.error).toMatchObject({ name: 'ToolLoopError', toolName: 'lookup_order', count: 5, kind: 'repeat' });
    expect(executed).toHaveLength(5);
    expect(calls()).toBe(5);

    expect(h.detections.map((d) => [d.level, d.kind, d.callIndex, d.toolName, d.promptName, d.agentName, d.traceId === run.traceId])).toEqual([
      ['warning', 'repeat', 3, 'lookup_order', 'order-status-v2', 'support-bot', true],
      ['critical', 'repeat', 5, 'lookup_order', 'order-status-v2', 'support-bot', true],
    ]);
    const spans = toolSpans(h.exporter.getFinishedSpans(), 'ai.toolCall');
    expect(spans).toHaveLength(5);
    expect(spans.map((s) => loopEvents(s).map((e) => e['loop.level']))).toEqual([[], [], ['warning'], [], ['critical']]);
    for (const s of spans) {
      // the AI SDK's own keys are untouched; the gen_ai keys the collector counts by are added
      expect(s.attributes['ai.toolCall.name']).toBe('lookup_order');
      expect(s.attributes['gen_ai.operation.name']).toBe('execute_tool');
      expect(s.attributes['gen_ai.tool.name']).toBe('lookup_order');
      expect(s.attributes['gen_ai.prompt.name']).toBe('order-status-v2');
    }
    expect(JSON.stringify(spans.flatMap((s) => s.events))).not.toContain('unknown order');
  });

  it('observe mode reports the same loop and lets the run finish', async () => {
    const harness = (h = aiHarness({ mode: 'observe' }));
    const executed: string[] = [];
    const { model } = scriptedModel([...Array.from({ length: 6 }, () => (n: number) => callTool(n, 'lookup_order', { orderId: '1234' })), () => answer('Sorry.')]);
    const run = await inRunSpan(harness, 'support run', (signal) =>
      generateText({ model, prompt: 'x', tools: orderTools(executed), stopWhen: stepCountIs(20), abortSignal: signal, experimental_telemetry: { isEnabled: true, tracer: harness.tracer } }),
    );
    expect(run.value?.text).toBe('Sorry.');
    expect(executed).toHaveLength(6);
    expect(h.detections.map((d) => [d.level, d.mode])).toEqual([
      ['warning', 'observe'],
      ['critical', 'observe'],
    ]);
  });

  it('an honest multi-step run produces no detection', async () => {
    const harness = (h = aiHarness());
    const executed: string[] = [];
    const { model } = scriptedModel([
      (n) => callTool(n, 'lookup_order', { orderId: '1234' }),
      (n) => callTool(n, 'lookup_order', { orderId: '1235' }),
      (n) => callTool(n, 'get_tracking', { orderId: '1235' }),
      () => answer('Order 1235 ships with DHL, ETA 24 November.'),
    ]);
    const run = await inRunSpan(harness, 'support run', (signal) =>
      generateText({
        model,
        prompt: 'Where is my order?',
        tools: orderTools(executed),
        stopWhen: stepCountIs(20),
        abortSignal: signal,
        experimental_telemetry: { isEnabled: true, functionId: 'support-bot', tracer: harness.tracer },
      }),
    );
    expect(run.error).toBeUndefined();
    expect(run.value?.text).toContain('DHL');
    expect(executed).toEqual(['lookup_order:1234', 'lookup_order:1235', 'get_tracking:1235']);
    expect(h.detections).toEqual([]);
    expect(h.exporter.getFinishedSpans().flatMap(loopEvents)).toEqual([]);
    expect(toolSpans(h.exporter.getFinishedSpans(), 'ai.toolCall').map((s) => s.attributes['gen_ai.tool.name'])).toEqual(['lookup_order', 'lookup_order', 'get_tracking']);
  });

  it('a tool failing again and again is an error pattern, from the exception the AI SDK records', async () => {
    const harness = (h = aiHarness());
    let attempts = 0;
    const { model } = scriptedModel([(n) => callTool(n, 'charge_card', { amount: 10 + n })]);
    const run = await inRunSpan(harness, 'billing run', (signal) =>
      generateText({
        model,
        prompt: 'charge',
        tools: {
          charge_card: tool({
            inputSchema: z.object({ amount: z.number() }),
            execute: async (): Promise<string> => {
              attempts++;
              throw new Error(`card declined (attempt ${attempts})`);
            },
          }),
        },
        stopWhen: stepCountIs(20),
        abortSignal: signal,
        experimental_telemetry: { isEnabled: true, tracer: harness.tracer },
      }),
    );
    expect(run.error).toBeDefined();
    expect(h.detections.map((d) => d.kind)).toContain('error_pattern');
    expect(h.detections.at(-1)?.level).toBe('critical');
    expect(attempts).toBeLessThan(20);
  });
});
