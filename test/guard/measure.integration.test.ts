/**
 * The closing measurement: one looping scenario (a search whose answer never changes,
 * a model repeating the call, step limit 20), counted in tool executions and model calls.
 */
import { generateText, stepCountIs, tool } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolLoopGuard, type GuardAction } from '../../src/guard/index.js';
import { loopingModel } from './support/mock-model.js';
import { disableContext, harness, inRun } from './support/otel-harness.js';

afterAll(() => disableContext());

interface Measured {
  readonly executions: number;
  readonly modelCalls: number;
  readonly ended: string;
}

const STEP_LIMIT = 20;

async function measure(protection: { guard?: GuardAction; processor?: boolean }, listens: boolean): Promise<Measured> {
  let executions = 0;
  const tools = {
    search: tool({
      inputSchema: z.object({ q: z.string() }),
      execute: async () => {
        executions++;
        return { hits: [] as string[], note: 'no order matches' };
      },
    }),
  };
  const { model, steps } = loopingModel([{ toolName: 'search', input: { q: 'order 1234' } }], { listens });
  const guard = protection.guard ? new ToolLoopGuard({ action: protection.guard }) : undefined;
  const h = protection.processor ? harness() : undefined;
  const go = (signal?: AbortSignal) =>
    generateText({
      model,
      prompt: 'Where is order 1234?',
      tools: guard ? guard.wrapTools(tools) : tools,
      stopWhen: stepCountIs(STEP_LIMIT),
      ...(signal ? { abortSignal: signal } : {}),
      ...(h ? { experimental_telemetry: { isEnabled: true, tracer: h.tracer } } : {}),
    });
  let ended: string;
  try {
    if (h) {
      const run = await inRun(h, (processorSignal) => go(guard ? AbortSignal.any([guard.signal, processorSignal]) : processorSignal));
      if (run.error) throw run.error;
      ended = 'answered / step limit';
    } else {
      const r = await go(guard?.signal);
      ended = r.finishReason === 'stop' ? 'model answered' : 'step limit';
    }
  } catch (e) {
    ended = `${(e as Error).name} (count ${String((e as { count?: number }).count)})`;
  } finally {
    await h?.shutdown();
  }
  return { executions, modelCalls: steps(), ended };
}

describe('tool executions for one looping scenario (step limit 20)', () => {
  it('no protection < processor < abort < graduated/hint', async () => {
    const rows: Record<string, Measured> = {
      'no protection': await measure({}, false),
      'processor + abortSignal()': await measure({ processor: true }, false),
      'guard abort': await measure({ guard: 'abort' }, false),
      'guard hint (model reads the hint)': await measure({ guard: 'hint' }, true),
      'guard hint (model ignores hints)': await measure({ guard: 'hint' }, false),
      'guard graduated (model reads the hint)': await measure({ guard: 'graduated' }, true),
      'guard graduated (model ignores the hint)': await measure({ guard: 'graduated' }, false),
    };
    console.table(rows);
    expect(rows['no protection']).toMatchObject({ executions: 20, modelCalls: 20 });
    expect(rows['processor + abortSignal()']).toMatchObject({ executions: 5, modelCalls: 5, ended: 'ToolLoopError (count 5)' });
    expect(rows['guard abort']).toMatchObject({ executions: 4, modelCalls: 5, ended: 'ToolLoopError (count 5)' });
    expect(rows['guard hint (model reads the hint)']).toMatchObject({ executions: 2, modelCalls: 4, ended: 'model answered' });
    expect(rows['guard hint (model ignores hints)']).toMatchObject({ executions: 2, modelCalls: 6, ended: 'ToolLoopError (count 6)' });
    expect(rows['guard graduated (model reads the hint)']).toMatchObject({ executions: 2, modelCalls: 4, ended: 'model answered' });
    expect(rows['guard graduated (model ignores the hint)']).toMatchObject({ executions: 2, modelCalls: 4, ended: 'ToolLoopError (count 4)' });
  });
});
