/**
 * Guard and span processor together, on a real SDK 2.x provider with the real AI SDK (its
 * `ai.toolCall` spans) and with hand-made `execute_tool` spans around a generic dispatcher:
 * the guard's decision shows on the tool span, and no call is counted twice.
 */
import { diag, DiagLogLevel, SpanStatusCode } from '@opentelemetry/api';
import { generateText, stepCountIs, tool } from 'ai';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolLoopError } from '../../src/errors.js';
import { ToolLoopGuard, type GuardAction } from '../../src/guard/index.js';
import { loopingModel } from './support/mock-model.js';
import { disableContext, harness, inRun, loopEvents, spansNamed, type Harness } from './support/otel-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.shutdown();
  h = undefined;
});
afterAll(() => disableContext());

const SECRET = 'order 1234 for jane@example.com';

async function aiRun(harnessed: Harness, action: GuardAction | undefined, listens: boolean) {
  const executed: string[] = [];
  const guard = action ? new ToolLoopGuard({ engine: harnessed.loops.engine, action }) : undefined;
  const tools = {
    search: tool({
      inputSchema: z.object({ q: z.string() }),
      execute: async ({ q }) => {
        executed.push(q);
        return { hits: [] as string[] };
      },
    }),
  };
  const { model, steps } = loopingModel([{ toolName: 'search', input: { q: SECRET } }], { listens });
  const run = await inRun(harnessed, (processorSignal) =>
    generateText({
      model,
      prompt: 'Where is my order?',
      tools: guard ? guard.wrapTools(tools) : tools,
      stopWhen: stepCountIs(20),
      abortSignal: guard ? AbortSignal.any([guard.signal, processorSignal]) : processorSignal,
      experimental_telemetry: { isEnabled: true, functionId: 'support-bot', tracer: harnessed.tracer },
    }),
  );
  return { ...run, executed, steps: steps(), guard };
}

describe('guard + processor on ai.toolCall spans', () => {
  it('a hinted and a blocked call carry loop.action on their span and event; the processor records neither', async () => {
    h = harness();
    const run = await aiRun(h, 'graduated', false);
    expect(run.error).toMatchObject({ name: 'ToolLoopError', toolName: 'search', count: 4 });
    expect(run.executed).toHaveLength(2);

    const spans = spansNamed(h, 'ai.toolCall');
    expect(spans).toHaveLength(4); // 2 ran, 1 hinted, 1 blocked
    expect(spans.map((s) => s.attributes['loop.action'])).toEqual([undefined, undefined, 'hinted', 'blocked']);
    expect(spans.map((s) => loopEvents(s).length)).toEqual([0, 0, 1, 1]);
    expect(loopEvents(spans[2])[0]).toMatchObject({
      'loop.action': 'hinted',
      'loop.kind': 'repeat',
      'loop.level': 'warning',
      'loop.count': 3,
      'loop.call_index': 3,
      'gen_ai.tool.name': 'search',
      'gen_ai.agent.name': 'support-bot',
    });
    expect(loopEvents(spans[3])[0]).toMatchObject({ 'loop.action': 'blocked', 'loop.level': 'critical', 'loop.count': 4, 'loop.call_index': 4 });
    // the SDK marks the blocked span as failed (the ToolLoopError), but the processor did not count a failure
    expect(spans[3]?.status.code).toBe(SpanStatusCode.ERROR);
    expect(h.detections.map((d) => `${d.callIndex}:${d.kind}:${d.level}`)).toEqual(['3:repeat:warning', '4:repeat:critical']);
    // the guard's block stops the trace for the processor as well
    expect(run.processorSignal.aborted).toBe(true);
    expect(run.processorSignal.reason).toBeInstanceOf(ToolLoopError);
    // no raw arguments in the events
    expect(JSON.stringify(spans.map(loopEvents))).not.toContain('jane@example.com');
  });

  it('calls the guard let through are recorded once: the processor still warns at the 3rd, the guard stops the 5th', async () => {
    h = harness();
    const run = await aiRun(h, 'abort', false);
    expect(run.executed).toHaveLength(4);
    const spans = spansNamed(h, 'ai.toolCall');
    expect(spans.map((s) => s.attributes['loop.action'])).toEqual([undefined, undefined, undefined, undefined, 'blocked']);
    // counts and call indexes line up: each executed call entered the processor's engine exactly once
    expect(h.detections.map((d) => `${d.callIndex}:${d.level}:${d.count}`)).toEqual(['3:warning:3', '5:critical:5']);
    expect(loopEvents(spans[2])[0]?.['loop.action']).toBeUndefined(); // the processor's own detection
  });

  it('a listening model in hint mode: one event, the run finishes, the processor never stops it', async () => {
    h = harness();
    const run = await aiRun(h, 'hint', true);
    expect(run.error).toBeUndefined();
    expect(run.executed).toHaveLength(2);
    expect(h.detections.map((d) => `${d.callIndex}:${d.level}`)).toEqual(['3:warning']);
    expect(run.processorSignal.aborted).toBe(false);
  });
});

describe('guard + processor: one signal is enough', () => {
  it("with only the processor's abortSignal() wired, the guard's block still ends generateText, without a warning", async () => {
    const warnings: string[] = [];
    diag.setLogger({ error: () => undefined, warn: (...m: unknown[]) => warnings.push(m.join(' ')), info: () => undefined, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.WARN);
    const hh = (h = harness());
    const guard = new ToolLoopGuard({ engine: hh.loops.engine, action: 'abort' });
    let executions = 0;
    const tools = guard.wrapTools({ search: tool({ inputSchema: z.object({ q: z.string() }), execute: async () => (executions++, { hits: 0 }) }) });
    const { model, steps } = loopingModel([{ toolName: 'search', input: { q: 'x' } }], { listens: false });
    const run = await inRun(hh, (processorSignal) =>
      generateText({ model, prompt: 'x', tools, stopWhen: stepCountIs(20), abortSignal: processorSignal, experimental_telemetry: { isEnabled: true, tracer: hh.tracer } }),
    );
    await new Promise((r) => setTimeout(r, 5));
    diag.disable();
    expect(run.error).toMatchObject({ name: 'ToolLoopError', count: 5 });
    expect(executions).toBe(4);
    expect(steps()).toBe(5);
    expect(warnings.filter((w) => w.includes('guard.signal'))).toEqual([]);
  });
});

describe('guard + processor on execute_tool spans around a generic dispatcher', () => {
  const searchStep = (h: Harness, dispatch: (name: string, args: unknown) => Promise<unknown>) =>
    h.tracer.startActiveSpan(
      'execute_tool search',
      { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"q":"x"}' } },
      async (span) => {
        try {
          const result = await dispatch('search', { q: 'x' });
          span.setAttribute('gen_ai.tool.call.result', JSON.stringify(result));
          return result;
        } catch (e) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error).message });
          throw e;
        } finally {
          span.end();
        }
      },
    );

  for (const withoutOnEnding of [false, true]) {
    it(`the decision is on the tool span${withoutOnEnding ? ' (SDK without onEnding: the event goes to the open parent)' : ''}`, async () => {
      const hh = (h = harness({ withoutOnEnding }));
      const guard = new ToolLoopGuard({ engine: hh.loops.engine });
      const dispatch = guard.wrapDispatcher(async (_name: string, _args: unknown) => ({ hits: 0 }));
      const run = await inRun(hh, async () => {
        for (let i = 0; i < 6; i++) await searchStep(hh, dispatch);
      });
      expect(run.error).toBeInstanceOf(ToolLoopError);
      const spans = spansNamed(hh, 'execute_tool search');
      expect(spans).toHaveLength(4);
      expect(spans.map((s) => s.attributes['loop.action'])).toEqual([undefined, undefined, withoutOnEnding ? undefined : 'hinted', withoutOnEnding ? undefined : 'blocked']);
      const root = spansNamed(hh, 'invoke_agent support-bot')[0];
      const events = withoutOnEnding ? loopEvents(root) : spans.flatMap(loopEvents);
      expect(events.map((e) => `${String(e['loop.action'])}:${String(e['loop.level'])}`)).toEqual(['hinted:warning', 'blocked:critical']);
      expect(hh.detections).toHaveLength(2);
    });
  }
});
