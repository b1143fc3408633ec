/**
 * The real AI SDK v6 (`generateText`, `tool`, `stepCountIs`) driven by its own mock model
 * (`MockLanguageModelV3`), with the tools wrapped by the guard. Nothing is mocked but the model.
 */
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolLoopError } from '../../src/errors.js';
import { isLoopHint, ToolLoopGuard, type GuardAction } from '../../src/guard/index.js';
import { lastToolOutputs, loopingModel, text, toolCalls } from './support/mock-model.js';

afterEach(() => diag.disable());

function searchTools(executed: string[]) {
  return {
    search: tool({
      description: 'Search the order database',
      inputSchema: z.object({ q: z.string() }),
      execute: async ({ q }) => {
        executed.push(q);
        return { hits: [], note: 'no order matches' };
      },
    }),
  };
}

const orderLoop = [{ toolName: 'search', input: { q: 'order 1234' } }];

async function loopRun(action: GuardAction, listens: boolean) {
  const executed: string[] = [];
  const guard = new ToolLoopGuard({ action });
  const { model, steps, prompts } = loopingModel(orderLoop, { listens });
  const run = await generateText({
    model,
    prompt: 'Where is order 1234?',
    tools: guard.wrapTools(searchTools(executed)),
    stopWhen: stepCountIs(20),
    abortSignal: guard.signal,
  }).then(
    (value) => ({ value, error: undefined }),
    (error: unknown) => ({ value: undefined, error }),
  );
  return { ...run, executed, steps: steps(), prompts, guard };
}

describe('guarded AI SDK tools (ai v6, MockLanguageModelV3)', () => {
  it('hint mode: the model gets the hint as the tool result in its next step, and the run finishes', async () => {
    const run = await loopRun('hint', true);
    expect(run.error).toBeUndefined();
    expect(run.value?.text).toBe('I could not find that order; please check the number.');
    expect(run.executed).toEqual(['order 1234', 'order 1234']); // the 3rd call never ran
    expect(run.steps).toBe(4);
    const shown = lastToolOutputs(run.prompts[3] ?? []);
    expect(shown).toEqual([{ type: 'json', value: expect.objectContaining({ type: 'loopwatch.hint', toolName: 'search', count: 3 }) }]);
    const hinted = run.value?.steps[2]?.toolResults[0]?.output;
    expect(isLoopHint(hinted)).toBe(true); // callers can tell the hint from a real result
    expect(isLoopHint(run.value?.steps[1]?.toolResults[0]?.output)).toBe(false);
    expect(JSON.stringify(run.prompts)).not.toMatch(/This call was not run[^"]*order 1234/); // the hint does not echo arguments
  });

  it('abort mode: generateText rejects with ToolLoopError carrying tool name and count', async () => {
    const run = await loopRun('abort', false);
    expect(run.value).toBeUndefined();
    expect(run.error).toBeInstanceOf(ToolLoopError);
    expect(run.error).toMatchObject({ name: 'ToolLoopError', toolName: 'search', count: 5, kind: 'repeat' });
    expect(run.executed).toHaveLength(4); // the 5th was stopped before it ran
    expect(run.steps).toBe(5); // and no model call after it
  });

  it('graduated, with a model that ignores the hint: stopped at the next attempt', async () => {
    const run = await loopRun('graduated', false);
    expect(run.error).toMatchObject({ name: 'ToolLoopError', toolName: 'search', count: 4 });
    expect(run.executed).toHaveLength(2);
    expect(run.steps).toBe(4);
  });

  it('an honest run passes untouched', async () => {
    const executed: string[] = [];
    const guard = new ToolLoopGuard();
    const results = { lookup: { status: 'shipped', carrier: 'DHL' }, tracking: { eta: '2026-11-24' } };
    const tools = guard.wrapTools({
      lookup_order: tool({ inputSchema: z.object({ id: z.string() }), execute: async ({ id }) => (executed.push(`lookup:${id}`), results.lookup) }),
      get_tracking: tool({ inputSchema: z.object({ id: z.string() }), execute: async ({ id }) => (executed.push(`tracking:${id}`), results.tracking) }),
    });
    const script = [
      toolCalls(1, [{ toolName: 'lookup_order', input: { id: '1' } }]),
      toolCalls(2, [{ toolName: 'get_tracking', input: { id: '1' } }, { toolName: 'lookup_order', input: { id: '2' } }]),
      toolCalls(3, [{ toolName: 'lookup_order', input: { id: '1' } }]), // a re-check: fine
      text('Order 1 arrives on 2026-11-24.'),
    ];
    let n = 0;
    const model = new MockLanguageModelV3({ doGenerate: async () => script[n++] ?? text('done') });
    const result = await generateText({ model, prompt: 'Where are my orders?', tools, stopWhen: stepCountIs(20), abortSignal: guard.signal });
    expect(result.text).toBe('Order 1 arrives on 2026-11-24.');
    expect(executed).toEqual(['lookup:1', 'tracking:1', 'lookup:2', 'lookup:1']);
    const outputs = result.steps.flatMap((s) => s.toolResults.map((r) => r.output));
    expect(outputs).toEqual([results.lookup, results.tracking, results.lookup, results.lookup]);
    expect(guard.recentCalls().map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
  });

  it("a tool's toModelOutput sees real results; the model reads a hint as text", async () => {
    const guard = new ToolLoopGuard({ action: 'hint' });
    const seen: unknown[] = [];
    const tools = guard.wrapTools({
      search: tool({
        inputSchema: z.object({ q: z.string() }),
        execute: async () => ({ rows: [] as string[] }),
        toModelOutput: ({ output }) => {
          seen.push(output);
          return { type: 'text', value: `${output.rows.length} rows` };
        },
      }),
    });
    const { model, prompts } = loopingModel(orderLoop);
    await generateText({ model, prompt: 'find it', tools, stopWhen: stepCountIs(10) });
    expect(seen).toEqual([{ rows: [] }, { rows: [] }]); // never handed the hint object
    const hintPart = lastToolOutputs(prompts[3] ?? [])[0] as { type: string; value: string };
    expect(hintPart.type).toBe('text');
    expect(hintPart.value).toMatch(/^\[loopwatch\] This call was not run: 'search' already ran twice/);
  });

  it('a streaming tool (async generator) keeps its preliminary results and is guarded the same way', async () => {
    const guard = new ToolLoopGuard({ action: 'hint' });
    let runs = 0;
    const tools = guard.wrapTools({
      search: tool({
        inputSchema: z.object({ q: z.string() }),
        async *execute() {
          runs++;
          yield { status: 'searching' as const };
          yield { status: 'done' as const, hits: 0 };
        },
      }),
    });
    const { model } = loopingModel(orderLoop);
    const result = await generateText({ model, prompt: 'find it', tools, stopWhen: stepCountIs(10) });
    expect(runs).toBe(2);
    expect(result.steps[0]?.toolResults[0]?.output).toEqual({ status: 'done', hits: 0 });
    expect(isLoopHint(result.steps[2]?.toolResults[0]?.output)).toBe(true);
    expect(result.text).toContain('could not find');
  });

  it('parallel calls in one step are one step: identical parallel calls share one strike', async () => {
    const executed: string[] = [];
    const guard = new ToolLoopGuard();
    const twice = [...orderLoop, ...orderLoop];
    const { model } = loopingModel(twice);
    const result = await generateText({ model, prompt: 'x', tools: guard.wrapTools(searchTools(executed)), stopWhen: stepCountIs(10), abortSignal: guard.signal });
    // duplicates inside one step are one call for the engine: steps 1-2 ran (4 executions), step 3 was hinted, twice
    expect(executed).toHaveLength(4);
    expect(result.steps[2]?.toolResults.map((r) => isLoopHint(r.output))).toEqual([true, true]);
    expect(guard.stopped).toBeUndefined();
  });

  it('keeps every other tool property, passes client-side tools through, and ignores a second wrap by the same guard', async () => {
    const executed: string[] = [];
    const guard = new ToolLoopGuard({ action: 'hint' });
    const base = { ...searchTools(executed), ask_user: tool({ description: 'client side', inputSchema: z.object({ question: z.string() }) }) };
    const once = guard.wrapTools(base);
    const twice = guard.wrapTools(once);
    expect(twice.search.execute).toBe(once.search.execute);
    expect(twice.search.inputSchema).toBe(base.search.inputSchema);
    expect(twice.ask_user).toBe(base.ask_user);
    const { model } = loopingModel(orderLoop);
    await generateText({ model, prompt: 'x', tools: { search: twice.search }, stopWhen: stepCountIs(10) });
    expect(executed).toHaveLength(2); // each call recorded once: the hint comes at the 3rd, not earlier
  });

  it('a user message that says something new is a new turn, by itself (newTurn: auto); the same words again are not', async () => {
    const executed: string[] = [];
    const guard = new ToolLoopGuard();
    const tools = guard.wrapTools(searchTools(executed));
    const twoSearchesThenAnswer = () => {
      let n = 0;
      return new MockLanguageModelV3({ doGenerate: async () => (++n <= 2 ? toolCalls(n, orderLoop) : text('not found')) });
    };
    await generateText({ model: twoSearchesThenAnswer(), prompt: 'Where is order 1234?', tools, stopWhen: stepCountIs(10) });
    const second = await generateText({ model: twoSearchesThenAnswer(), prompt: 'Please look again: order 1234', tools, stopWhen: stepCountIs(10) });
    expect(executed).toHaveLength(4);
    expect(second.steps.flatMap((s) => s.toolResults).some((r) => isLoopHint(r.output))).toBe(false);

    // the same conversation rebuilt as new objects (a chat server's next request in the same turn) is not a new turn
    const rebuilt = new ToolLoopGuard();
    const rebuiltTools = rebuilt.wrapTools(searchTools([]));
    const history = () => [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Where is order 1234?' }] }];
    await generateText({ model: twoSearchesThenAnswer(), messages: history(), tools: rebuiltTools, stopWhen: stepCountIs(10) });
    const sameTurn = await generateText({ model: twoSearchesThenAnswer(), messages: history(), tools: rebuiltTools, stopWhen: stepCountIs(10) });
    expect(isLoopHint(sameTurn.steps[0]?.toolResults[0]?.output)).toBe(true);
    // the user saying the same words again adds nothing: the loop goes on, and the search is refused
    const sameWords = await generateText({
      model: twoSearchesThenAnswer(),
      messages: [...history(), { role: 'assistant', content: 'not found' }, { role: 'user', content: 'Where is order 1234?' }],
      tools: rebuiltTools,
      stopWhen: stepCountIs(10),
    });
    expect(sameWords.steps[0]?.toolResults).toEqual([]);
    expect(rebuilt.recentCalls().at(-1)?.status).toBe('blocked');
    // something new: a new turn, the search runs again
    const executedAgain: string[] = [];
    const fresh = rebuilt.wrapTools(searchTools(executedAgain));
    await generateText({
      model: twoSearchesThenAnswer(),
      messages: [...history(), { role: 'assistant', content: 'not found' }, { role: 'user', content: 'It was placed yesterday, please look again.' }],
      tools: fresh,
      stopWhen: stepCountIs(10),
    });
    expect(executedAgain).toHaveLength(2);

    // with newTurn: 'manual' and no reset(), the second turn's first search continues the first turn's loop
    const manual = new ToolLoopGuard();
    const manualTools = manual.wrapTools(searchTools([]), { newTurn: 'manual' });
    await generateText({ model: twoSearchesThenAnswer(), prompt: 'Where is order 1234?', tools: manualTools, stopWhen: stepCountIs(10) });
    const again = await generateText({ model: twoSearchesThenAnswer(), prompt: 'Please look again: order 1234', tools: manualTools, stopWhen: stepCountIs(10) });
    expect(isLoopHint(again.steps[0]?.toolResults[0]?.output)).toBe(true);
  });

  it('warns once when the guard stops a run whose generateText was not given guard.signal; no tool runs again', async () => {
    await new Promise((r) => setTimeout(r, 5)); // let checks pending from earlier tests finish first
    const warnings: string[] = [];
    diag.setLogger({ error: () => undefined, warn: (...m: unknown[]) => warnings.push(m.join(' ')), info: () => undefined, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.WARN);
    const executed: string[] = [];
    const guard = new ToolLoopGuard({ action: 'abort' });
    const { model, steps } = loopingModel(orderLoop, { listens: false });
    const result = await generateText({ model, prompt: 'x', tools: guard.wrapTools(searchTools(executed)), stopWhen: stepCountIs(8) });
    expect(executed).toHaveLength(4);
    expect(steps()).toBe(8); // the SDK went on to its step limit, every further call refused
    expect(result.steps[4]?.content.find((p) => p.type === 'tool-error')).toMatchObject({ error: expect.any(ToolLoopError) });
    await new Promise((r) => setTimeout(r, 5)); // the check waits for span processors to abort their signal first
    expect(warnings.filter((w) => w.includes('guard.signal'))).toHaveLength(1);
  });
});
