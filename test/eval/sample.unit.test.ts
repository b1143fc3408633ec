import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CorpusRun } from '../../scripts/corpus/run.js';
import { drawSample } from '../../scripts/corpus/sample.js';
import type { SourceSpec } from '../../scripts/corpus/sources.js';

const run = (id: string, outcome = 'pass'): CorpusRun => ({ id, source: 's', agent: 'a', model: 'm', outcome, recordedTimes: false, turns: [] });
const spec = (id: string, more: Partial<SourceSpec>): SourceSpec =>
  ({ id, title: id, repo: 'o/r', licence: 'MIT', origin: 'o', format: 'toolathlon', paths: /x/, agent: 'a', ...more }) as SourceSpec;
const byHash = (ids: readonly string[]): string[] => [...ids].sort((a, b) => createHash('sha256').update(a).digest('hex').localeCompare(createHash('sha256').update(b).digest('hex')));

describe('the sample of a source', () => {
  const runs = [...Array.from({ length: 20 }, (_, i) => run(`task-${i}`)), run('limit-0', 'max_turns_reached'), run('limit-1', 'max_turns_reached')];
  const first = spec('first', { sample: { always: /^(?!pass$)/, others: 5 } });
  const second = spec('second', { sample: { always: /^(?!pass$)/, others: 5 }, drawnAfter: 'first' });
  const third = spec('third', { sample: { always: /^(?!pass$)/, others: 100 }, drawnAfter: 'second' });
  const sources = (id: string): SourceSpec => ({ first, second, third })[id as 'first' | 'second' | 'third'];

  it('keeps every run that hit a limit and the first others by hash of the run id, in their order', () => {
    const kept = drawSample(first, runs, sources).map((r) => r.id);
    const others = byHash(runs.filter((r) => r.outcome === 'pass').map((r) => r.id)).slice(0, 5);
    expect(kept).toEqual(runs.map((r) => r.id).filter((id) => id.startsWith('limit') || others.includes(id)));
  });

  it('draws after an earlier source: none of its runs, the next ones in the same hash order', () => {
    const taken = new Set(drawSample(first, runs, sources).map((r) => r.id));
    const fresh = drawSample(second, runs, sources).map((r) => r.id);
    expect(fresh.filter((id) => taken.has(id))).toEqual([]);
    expect(new Set(fresh)).toEqual(new Set(byHash(runs.filter((r) => r.outcome === 'pass').map((r) => r.id)).slice(5, 10)));
  });

  it('draws after a chain of draws: none of the runs any earlier draw took', () => {
    const taken = new Set([...drawSample(first, runs, sources), ...drawSample(second, runs, sources)].map((r) => r.id));
    const rest = drawSample(third, runs, sources).map((r) => r.id);
    expect(taken.size).toBe(12);
    expect(rest).toEqual(runs.map((r) => r.id).filter((id) => !taken.has(id)));
  });

  it('keeps every run whose id the source names whatever its hash', () => {
    const named = spec('named', { sample: { always: /^(?!pass$)/, others: 0, alwaysRuns: /task-1\d$/ } });
    expect(drawSample(named, runs, sources).map((r) => r.id)).toEqual(runs.map((r) => r.id).filter((id) => /task-1\d$|limit/.test(id)));
  });
});
