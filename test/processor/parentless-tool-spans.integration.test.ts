/**
 * Issue 18, first use: without a registered context manager every tool span is its own trace and
 * nothing can be detected; the processor says so once through diag.
 */
import { context, diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { LoopDetectionSpanProcessor } from '../../src/index.js';

function captureWarnings(): string[] {
  const seen: string[] = [];
  const at = (...args: unknown[]): void => void seen.push(args.map(String).join(' '));
  const none = (): void => undefined;
  const logger: DiagLogger = { error: none, warn: at, info: none, debug: none, verbose: none };
  diag.disable();
  diag.setLogger(logger, DiagLogLevel.WARN);
  return seen;
}

afterEach(async () => {
  diag.disable();
  context.disable();
});

async function run(withContextManager: boolean): Promise<{ warnings: string[]; detections: number }> {
  const warnings = captureWarnings();
  if (withContextManager) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  let detections = 0;
  const provider = new BasicTracerProvider({ spanProcessors: [new LoopDetectionSpanProcessor({ onLoop: () => void detections++ })] });
  const tracer = provider.getTracer('agent');
  await tracer.startActiveSpan('invoke_agent support', async (agent) => {
    for (let i = 0; i < 6; i++) {
      const tool = tracer.startSpan('execute_tool search', {
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"q":"x"}', 'gen_ai.tool.call.result': '{"hits":[]}' },
      });
      tool.end();
    }
    agent.end();
  });
  await provider.shutdown();
  return { warnings: warnings.filter((w) => w.includes('has no parent span')), detections };
}

describe('tool spans with no parent', () => {
  it('without a context manager: no detection, and diag says why, once', async () => {
    const r = await run(false);
    expect(r.detections).toBe(0);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toContain("the tool span 'search' has no parent span");
    expect(r.warnings[0]).toContain('context manager');
  });

  it('with one: the loop is found and nothing is said', async () => {
    const r = await run(true);
    expect(r.detections).toBe(2);
    expect(r.warnings).toEqual([]);
  });
});
