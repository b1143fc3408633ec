/**
 * Issue 19, misuse: the same processor registered twice on one provider (or listed twice) sees
 * every hook twice for the same span; it must still report each loop once, at the same calls.
 */
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { LoopDetectionSpanProcessor, type LoopDetection } from '../../src/index.js';

async function run(twice: boolean): Promise<Array<[string, number]>> {
  const detections: LoopDetection[] = [];
  const loops = new LoopDetectionSpanProcessor({ onLoop: (d) => void detections.push(d) });
  const provider = new BasicTracerProvider({ spanProcessors: twice ? [loops, loops] : [loops] });
  const tracer = provider.getTracer('agent');
  const agent = tracer.startSpan('invoke_agent support', {}, ROOT_CONTEXT);
  const ctx = trace.setSpan(context.active(), agent);
  for (let i = 0; i < 6; i++) {
    tracer.startSpan('execute_tool search', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"q":"x"}', 'gen_ai.tool.call.result': '{"hits":[]}' } }, ctx).end();
  }
  agent.end();
  await provider.shutdown();
  return detections.map((d) => [d.level, d.callIndex]);
}

describe('the processor registered twice', () => {
  it('reports each loop once, at the same calls as when registered once', async () => {
    const once = await run(false);
    expect(once).toEqual([
      ['warning', 3],
      ['critical', 5],
    ]);
    expect(await run(true)).toEqual(once);
  });
});
