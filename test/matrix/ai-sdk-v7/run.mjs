// The real AI SDK v7 with @ai-sdk/otel (gen_ai spans: invoke_agent, step N, chat, execute_tool
// {tool}), driven by the SDK's own MockLanguageModelV3 through a real SDK 2.x provider; only the
// model is mocked. Prints one JSON line that test/matrix/ai-sdk-v7.package.test.ts asserts on. Its own
// cell because ai@7 and @ai-sdk/otel declare Node >= 22 (the root project supports Node 20).
import { OpenTelemetry } from '@ai-sdk/otel';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { generateText, isStepCount, registerTelemetry, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { LoopDetectionSpanProcessor, ToolLoopError } from 'loopwatch';
import { z } from 'zod';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const callTool = (n, toolName, input) => ({
  content: [{ type: 'tool-call', toolCallId: `call_${n}`, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
});
const answer = (text) => ({ content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] });

function scriptedModel(script) {
  let n = 0;
  const model = new MockLanguageModelV3({ doGenerate: async () => script[Math.min(n, script.length - 1)](++n) });
  return { model, calls: () => n };
}

const searchTool = (executed) =>
  tool({
    description: 'Search the docs',
    inputSchema: z.object({ q: z.string() }),
    execute: async ({ q }) => {
      executed.push(q);
      return q.includes('refund') ? { hits: ['refund-policy.md'] } : { hits: [] };
    },
  });

// The exporting processor first, loopwatch second (its onEnding still runs before any onEnd).
function harness() {
  const exporter = new InMemorySpanExporter();
  const detections = [];
  const loops = new LoopDetectionSpanProcessor({ onLoop: (d) => void detections.push(d) });
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), loops] });
  return { tracer: provider.getTracer('app'), exporter, loops, detections, provider };
}

// The README's binding: the app's own span around the run, abortSignal() asked for inside it.
async function inRunSpan(h, run) {
  return h.tracer.startActiveSpan('docs run', async (span) => {
    const traceId = span.spanContext().traceId;
    try {
      return { value: await run(h.loops.abortSignal()), traceId };
    } catch (error) {
      return { error, traceId };
    } finally {
      span.end();
    }
  });
}

const errorOf = (e) =>
  e === undefined ? null : { isToolLoopError: e instanceof ToolLoopError, name: e?.name, toolName: e?.toolName, count: e?.count, kind: e?.kind };
const spansOf = (h) =>
  h.exporter
    .getFinishedSpans()
    .slice()
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
    .map((s) => ({
      name: s.name,
      traceId: s.spanContext().traceId,
      promptName: s.attributes['gen_ai.prompt.name'] ?? null,
      agentName: s.attributes['gen_ai.agent.name'] ?? null,
      loopLevels: s.events.filter((e) => e.name === 'loop.detected').map((e) => e.attributes?.['loop.level']),
    }));
async function report(h, run, extra) {
  await h.provider.forceFlush();
  const out = {
    error: errorOf(run.error),
    text: run.value?.text ?? null,
    traceId: run.traceId,
    detections: h.detections.map((d) => ({ level: d.level, callIndex: d.callIndex, toolName: d.toolName, promptName: d.promptName ?? null, agentName: d.agentName ?? null, evidence: d.evidence })),
    spans: spansOf(h),
    ...extra,
  };
  await h.provider.shutdown();
  return out;
}

async function loop() {
  const h = harness();
  const executed = [];
  const { model, calls } = scriptedModel([(n) => callTool(n, 'search', { q: 'warranty for model X' })]);
  const run = await inRunSpan(h, (signal) =>
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
        integrations: new OpenTelemetry({ tracer: h.tracer, runtimeContext: true }),
      },
    }),
  );
  return report(h, run, { executed, modelCalls: calls() });
}

async function honest() {
  const h = harness();
  const executed = [];
  const { model, calls } = scriptedModel([
    (n) => callTool(n, 'search', { q: 'warranty' }),
    (n) => callTool(n, 'search', { q: 'refund window' }),
    () => answer('Refunds are accepted within 30 days.'),
  ]);
  const run = await inRunSpan(h, (signal) =>
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
          tracer: h.tracer,
          enrichSpan: ({ runtimeContext }) => (typeof runtimeContext?.['promptName'] === 'string' ? { 'gen_ai.prompt.name': runtimeContext['promptName'] } : undefined),
        }),
      },
    }),
  );
  return report(h, run, { executed, modelCalls: calls() });
}

// Last: it registers globals (provider and integration), as an application does.
async function global() {
  const h = harness();
  trace.setGlobalTracerProvider(h.provider);
  registerTelemetry(new OpenTelemetry());
  const executed = [];
  const { model, calls } = scriptedModel([(n) => callTool(n, 'search', { q: 'warranty' })]);
  const run = await inRunSpan(h, (signal) =>
    generateText({ model, prompt: 'x', tools: { search: searchTool(executed) }, stopWhen: isStepCount(20), abortSignal: signal, telemetry: { functionId: 'docs-bot' } }),
  );
  return report(h, run, { executed, modelCalls: calls() });
}

// What a loop cost (issue 16): @ai-sdk/otel's chat spans are the model calls (their usage counts),
// invoke_agent's sums do not. Model call n reports 1000·n input and 10·n output tokens.
async function cost() {
  const exporter = new InMemorySpanExporter();
  const detections = [];
  const summaries = [];
  const loops = new LoopDetectionSpanProcessor({ onLoop: (d) => void detections.push(d), onTraceEnd: (s) => void summaries.push(s), prices: { '*': { input: 2, output: 8 } } });
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), loops] });
  const h = { tracer: provider.getTracer('app'), exporter, loops, detections, provider };
  const executed = [];
  let n = 0;
  const usageOf = (k) => ({ inputTokens: { total: 1000 * k, noCache: 1000 * k, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 10 * k, text: 10 * k, reasoning: 0 } });
  const model = new MockLanguageModelV3({ doGenerate: async () => ({ ...callTool(++n, 'search', { q: 'order 1234' }), usage: usageOf(n) }) });
  const run = await inRunSpan(h, (signal) =>
    generateText({ model, prompt: 'Where is order 1234?', tools: { search: searchTool(executed) }, stopWhen: isStepCount(20), abortSignal: signal, telemetry: { functionId: 'support-bot', integrations: new OpenTelemetry({ tracer: h.tracer }) } }),
  );
  await provider.forceFlush();
  const out = {
    error: errorOf(run.error),
    modelCalls: n,
    detections: detections.map((d) => ({ level: d.level, callIndex: d.callIndex, tokens: d.tokens ?? null, costUsd: d.costUsd ?? null })),
    summaries: summaries.map((s) => ({ detections: s.detections, stopped: s.stopped, loop: s.loop ?? null })),
    chatInputTokens: exporter.getFinishedSpans().filter((s) => s.name.startsWith('chat ')).map((s) => s.attributes['gen_ai.usage.input_tokens'] ?? null),
  };
  await provider.shutdown();
  return out;
}

const out = { node: process.version, loop: await loop(), honest: await honest(), cost: await cost(), global: await global() };
console.log(JSON.stringify(out));
