import { describe, expect, it } from 'vitest';
import type { ReplaySpan } from '../../src/replay/types.js';
import { precisionCensus } from '../../scripts/eval/precision.js';
import { runsOf, type Corpus } from '../../scripts/eval/runs.js';

/** One run: an agent root and its tool calls, ten seconds apart (each its own batch). */
function corpusOf(calls: ReadonlyArray<{ tool: string; args: string; result: string }>): Corpus {
  const traceId = 'a'.repeat(32);
  const t0 = Date.UTC(2026, 10, 1);
  const root: ReplaySpan = {
    traceId,
    spanId: 'r'.repeat(16),
    parentSpanId: undefined,
    name: 'invoke_agent test',
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'corpus.run.id': 'run-1' },
    startTime: t0,
    endTime: t0 + 10_000 * (calls.length + 1),
    service: undefined,
  };
  const tools = calls.map(
    (c, i): ReplaySpan => ({
      traceId,
      spanId: String(i + 1).padStart(16, '0'),
      parentSpanId: root.spanId,
      name: `execute_tool ${c.tool}`,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': c.tool,
        'gen_ai.tool.call.arguments': c.args,
        'gen_ai.tool.call.result': c.result,
      },
      startTime: t0 + 10_000 * (i + 1),
      endTime: t0 + 10_000 * (i + 1) + 50,
      service: undefined,
    }),
  );
  const spans = [root, ...tools];
  return { id: 'test', kind: 'synthetic', spans, runs: runsOf('test', spans) };
}

const RESULT = 'found 0 orders for this customer';

describe('the fingerprint precision census', () => {
  it('finds a repeat that only key order hides, and the detection it decides', () => {
    const c = precisionCensus(
      corpusOf([
        { tool: 'search', args: '{"q":"late order","limit":5}', result: RESULT },
        { tool: 'search', args: '{"limit":5,"q":"late order"}', result: RESULT },
        { tool: 'search', args: '{"q": "late order", "limit": 5}', result: RESULT },
      ]),
    );
    expect(c.argumentClasses).toBe(1);
    expect(c.argumentCalls).toBe(3);
    // one class of results too: the same text three times is one text, not a merge
    expect(c.resultClasses).toBe(0);
    expect(c.byCause['JSON key order or layout']).toBe(1);
    expect(c.runsWithMerges).toBe(1);
    // with the fingerprint, three equal calls: a repeat; with the exact text, three different calls
    expect(c.changed).toHaveLength(1);
    expect(c.changed[0]?.merged).toMatch(/^3:repeat\//);
    expect(c.changed[0]?.undone).not.toMatch(/repeat/);
  });

  it('tells whitespace in text from volatile values, and decides nothing when the calls differ anyway', () => {
    // arguments that differ in wording only: a target (an id, a path) is part of the result's identity
    const c = precisionCensus(
      corpusOf([
        { tool: 'run_tests', args: '{"q":"all tests"}', result: 'Ran 6 tests in 0.001s\n\nOK' },
        { tool: 'run_tests', args: '{"q":"every test"}', result: 'Ran 6 tests in 0.066s\n\nOK' },
        { tool: 'view', args: '{"q":"the parser"}', result: 'def f():\n    return 1' },
        { tool: 'view', args: '{"q":"the lexer"}', result: 'def f():\n        return 1' },
      ]),
    );
    expect(c.resultClasses).toBe(2);
    expect(c.resultCalls).toBe(4);
    expect(c.byCause['volatile values or other']).toBe(1);
    expect(c.byCause['whitespace in text']).toBe(1);
    expect(c.argumentClasses).toBe(0);
    expect(c.changed).toEqual([]);
  });

  it('leaves merged results that inform nothing as they are, and counts them', () => {
    const c = precisionCensus(
      corpusOf([
        { tool: 'save', args: '{"note":"first try"}', result: '{"status":"ok"}' },
        { tool: 'save', args: '{"note":"second try"}', result: '{ "status": "ok" }' },
      ]),
    );
    expect(c.resultClasses).toBe(1);
    expect(c.keptMerged).toBe(1);
  });

  it('counts nothing on calls whose texts are all different or all equal', () => {
    const c = precisionCensus(
      corpusOf([
        { tool: 'search', args: '{"q":"a"}', result: 'one' },
        { tool: 'search', args: '{"q":"b"}', result: 'two' },
        { tool: 'search', args: '{"q":"b"}', result: 'two' },
      ]),
    );
    expect([c.argumentClasses, c.resultClasses, c.runsWithMerges, c.changed.length]).toEqual([0, 0, 0, 0]);
  });
});
