/**
 * The real AI SDK v7 (`ai@7` + its OpenTelemetry integration `@ai-sdk/otel`, gen_ai spans:
 * `invoke_agent`, `step N`, `chat`, `execute_tool {tool}`), driven by the SDK's own
 * `MockLanguageModelV3` through a real SDK 2.x provider; only the model is mocked. Both packages
 * declare Node >= 22, so they live in the Node 22 matrix cell test/matrix/ai-sdk-v7 (its own
 * lockfile, the packed loopwatch) instead of the root devDependencies: `npm ci` on Node 20 stays
 * free of EBADENGINE warnings. The cell's run.mjs drives three runs and prints what this asserts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cells, prepare, runNode, type CellInfo } from './support.js';

interface Span {
  name: string;
  traceId: string;
  promptName: string | null;
  agentName: string | null;
  loopLevels: string[];
}
interface Run {
  error: { isToolLoopError: boolean; name: string; toolName: string; count: number; kind: string } | null;
  text: string | null;
  traceId: string;
  detections: Array<{ level: string; callIndex: number; toolName: string; promptName: string | null; agentName: string | null; evidence: string }>;
  spans: Span[];
  executed: string[];
  modelCalls: number;
}
interface CostRun {
  error: Run['error'];
  modelCalls: number;
  detections: Array<{ level: string; callIndex: number; tokens: { input: number; output: number } | null; costUsd: number | null }>;
  summaries: Array<{ detections: number; stopped: boolean; loop: { modelCalls: number; tokens: { input: number; output: number }; costUsd?: number } | null }>;
  chatInputTokens: Array<number | null>;
}
interface Out {
  node: string;
  loop: Run;
  honest: Run;
  cost: CostRun;
  global: Run;
}

const cell = cells().find((c) => c.name === 'ai-sdk-v7') as CellInfo;
let out: Out;
beforeAll(async () => {
  const { node22 } = prepare(cell.name);
  const run = await runNode(node22, cell.dir, ['run.mjs']);
  expect(run.code, run.stderr).toBe(0);
  out = run.json<Out>();
}, 900_000);

const toolSpans = (r: Run) => r.spans.filter((s) => s.name === 'execute_tool search');

describe('AI SDK v7 with @ai-sdk/otel (gen_ai spans) with a real tracer provider, on Node 22', () => {
  it('runs the versions it is meant to test', () => {
    expect(cell.suite).toBe('ai-sdk-v7.package.test.ts');
    expect(out.node.startsWith('v22.')).toBe(true);
    expect(cell.installed('ai')).toBe('7.0.173');
    expect(cell.installed('@ai-sdk/otel')).toBe('1.0.173');
    expect(cell.installed('@opentelemetry/sdk-trace-base')).toMatch(/^2\./);
  });

  it('warns on a looping tool run, then stops it through abortSignal() passed to generateText', () => {
    const run = out.loop;
    expect(run.error).toEqual({ isToolLoopError: true, name: 'ToolLoopError', toolName: 'search', count: 5, kind: 'repeat' });
    expect(run.executed).toHaveLength(5);
    expect(run.modelCalls).toBe(5);
    expect(run.detections.map((d) => [d.level, d.callIndex, d.toolName, d.promptName, d.agentName, d.evidence])).toEqual([
      ['warning', 3, 'search', 'docs-qa-v1', 'docs-bot', 'arguments+result'],
      ['critical', 5, 'search', 'docs-qa-v1', 'docs-bot', 'arguments+result'],
    ]);
    const spans = toolSpans(run);
    expect(spans).toHaveLength(5);
    expect(spans.map((s) => s.loopLevels)).toEqual([[], [], ['warning'], [], ['critical']]);
    expect(spans.every((s) => s.promptName === 'docs-qa-v1')).toBe(true);
    // the root agent span the AI SDK made is a child of the app's span: same trace as the signal
    const agent = run.spans.find((s) => s.name.startsWith('invoke_agent'));
    expect(agent?.traceId).toBe(run.traceId);
    expect(agent?.agentName).toBe('docs-bot');
  });

  it('an honest multi-step run produces no detection', () => {
    const run = out.honest;
    expect(run.error).toBeNull();
    expect(run.text).toContain('30 days');
    expect(run.executed).toEqual(['warranty', 'refund window']);
    expect(run.detections).toEqual([]);
    expect(toolSpans(run).map((s) => s.promptName)).toEqual(['docs-qa-v1', 'docs-qa-v1']);
    expect(run.spans.flatMap((s) => s.loopLevels)).toEqual([]);
  });

  it('works through the global registration the README shows: registerTelemetry(new OpenTelemetry())', () => {
    const run = out.global;
    expect(run.error?.isToolLoopError).toBe(true);
    expect(run.executed).toHaveLength(5);
    expect(run.detections.map((d) => [d.level, d.agentName])).toEqual([
      ['warning', 'docs-bot'],
      ['critical', 'docs-bot'],
    ]);
  });
});

describe('what a loop costs, with @ai-sdk/otel (issue 16)', () => {
  // Model call n reports 1000·n input and 10·n output tokens; prices: 2 USD / 8 USD per million.
  const usd = (input: number, output: number): number => (input * 2 + output * 8) / 1e6;
  it('the chat spans are the model calls: each detection carries the tokens of the model calls between the first and the completing call', () => {
    const c = out.cost;
    expect(c.error).toMatchObject({ isToolLoopError: true, count: 5 });
    expect(c.modelCalls).toBe(5);
    expect(c.chatInputTokens).toEqual([1000, 2000, 3000, 4000, 5000]);
    expect(c.detections.map((d) => [d.level, d.callIndex, d.tokens])).toEqual([
      ['warning', 3, { input: 5000, output: 50 }],
      ['critical', 5, { input: 14000, output: 140 }],
    ]);
    expect(c.detections[1]?.costUsd).toBeCloseTo(usd(14000, 140), 9);
  });

  it("the trace's bill: invoke_agent's sums do not count twice", () => {
    expect(out.cost.summaries).toHaveLength(1);
    const s = out.cost.summaries[0];
    expect(s).toMatchObject({ detections: 2, stopped: true, loop: { modelCalls: 4, tokens: { input: 14000, output: 140 } } });
    expect(s?.loop?.costUsd).toBeCloseTo(usd(14000, 140), 9);
  });
});
