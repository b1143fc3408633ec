import { describe, expect, it } from 'vitest';
import { splitCorpus, type Corpus, type EvalRun } from '../../scripts/eval/runs.js';
import { splitOf } from '../../scripts/eval/split.js';

describe('the held-out test split', () => {
  it('puts about a third of the runs in test, the same way every time', () => {
    const ids = Array.from({ length: 3000 }, (_, i) => `run/${i}`);
    const test = ids.filter((id) => splitOf('src', id) === 'test');
    expect(test.length / ids.length).toBeGreaterThan(0.3);
    expect(test.length / ids.length).toBeLessThan(0.37);
    expect(ids.filter((id) => splitOf('src', id) === 'test')).toEqual(test);
  });

  it('depends on the source as well as the run id', () => {
    const ids = Array.from({ length: 300 }, (_, i) => `run/${i}`);
    const a = ids.map((id) => splitOf('a', id));
    const b = ids.map((id) => splitOf('b', id));
    expect(a).not.toEqual(b);
  });

  it('gives each split only its own runs and their spans', () => {
    const ids = Array.from({ length: 30 }, (_, i) => `r${i}`);
    const runs = ids.map((runId, i) => ({ corpus: 'src', runId, traceId: `t${i}`, outcome: undefined, calls: [], userTimes: [] }) satisfies EvalRun);
    const spans = ids.map((_, i) => ({ traceId: `t${i}` }));
    const whole = { id: 'src', kind: 'real', runs, spans } as unknown as Corpus;
    const dev = splitCorpus(whole, 'dev');
    const test = splitCorpus(whole, 'test');
    expect(dev.runs.length + test.runs.length).toBe(30);
    expect(test.runs.length).toBeGreaterThan(0);
    expect(test.runs.every((r) => splitOf('src', r.runId) === 'test')).toBe(true);
    expect(new Set(test.spans.map((s) => s.traceId))).toEqual(new Set(test.runs.map((r) => r.traceId)));
    expect(dev.spans.some((s) => test.runs.some((r) => r.traceId === s.traceId))).toBe(false);
  });
});

describe('the best anchor', () => {
  it('is the anchor that stops the most loops among those that stop no honest run', async () => {
    const { bestAnchor } = await import('../../scripts/eval/score.js');
    const score = (detector: string, honestStopped: number, loopsStopped: number) =>
      ({ detector, honestStopped, loopsStopped }) as Parameters<typeof bestAnchor>[0][number];
    const scores = [score('loopwatch', 0, 1), score('a', 0, 2), score('b', 3, 9), score('c', 0, 4)];
    expect(bestAnchor(scores)?.detector).toBe('c');
    expect(bestAnchor([score('loopwatch', 0, 9), score('b', 1, 9)])).toBeUndefined();
  });
});
