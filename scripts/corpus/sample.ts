import { createHash } from 'node:crypto';
import type { CorpusRun } from './run.js';
import { sourceById, type SourceSpec } from './sources.js';

/**
 * Which runs of a source enter the corpus (`SourceSpec.sample`, `SourceSpec.drawnAfter`), decided
 * by the runs' outcomes and a hash of their ids before anyone reads them.
 */

function rank(r: CorpusRun): string {
  return createHash('sha256').update(r.id).digest('hex');
}

/**
 * Every run whose outcome matches `always` (limits hit) or whose id matches `alwaysRuns`, and of
 * the others the first `others` by hash.
 */
function sampleRuns(spec: SourceSpec, runs: readonly CorpusRun[]): CorpusRun[] {
  const sample = spec.sample;
  if (!sample) return [...runs];
  const kept = (r: CorpusRun): boolean => sample.always.test(r.outcome) || (sample.alwaysRuns?.test(r.id) ?? false);
  const others = runs.filter((r) => !kept(r)).sort((a, b) => rank(a).localeCompare(rank(b)));
  const keep = new Set([...runs.filter(kept), ...others.slice(0, sample.others)]);
  return runs.filter((r) => keep.has(r));
}

/** The runs no source of the chain up to `spec` has taken: what `spec` draws from. */
function untaken(spec: SourceSpec, runs: readonly CorpusRun[], earlier: (id: string) => SourceSpec): CorpusRun[] {
  if (spec.drawnAfter === undefined) return [...runs];
  const before = earlier(spec.drawnAfter);
  const pool = untaken(before, runs, earlier);
  const taken = new Set(sampleRuns(before, pool).map((r) => r.id));
  return pool.filter((r) => !taken.has(r.id));
}

/**
 * The runs a source keeps, in their original order. A source `drawnAfter` an earlier one of the
 * same repository first leaves out the runs that source and every source it was drawn after
 * keep, so its sample is the next runs in the same hash order.
 */
export function drawSample(spec: SourceSpec, runs: readonly CorpusRun[], earlier: (id: string) => SourceSpec = sourceById): CorpusRun[] {
  return sampleRuns(spec, untaken(spec, runs, earlier));
}
