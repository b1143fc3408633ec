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

/** Every run whose outcome matches `always` (limits hit), and of the others the first `others` by hash. */
function sampleRuns(spec: SourceSpec, runs: readonly CorpusRun[]): CorpusRun[] {
  const sample = spec.sample;
  if (!sample) return [...runs];
  const others = runs.filter((r) => !sample.always.test(r.outcome)).sort((a, b) => rank(a).localeCompare(rank(b)));
  const keep = new Set([...runs.filter((r) => sample.always.test(r.outcome)), ...others.slice(0, sample.others)]);
  return runs.filter((r) => keep.has(r));
}

/**
 * The runs a source keeps, in their original order. A source `drawnAfter` an earlier one of the
 * same repository first leaves out the runs that source keeps, so its sample is the next runs in
 * the same hash order.
 */
export function drawSample(spec: SourceSpec, runs: readonly CorpusRun[], earlier: (id: string) => SourceSpec = sourceById): CorpusRun[] {
  if (spec.drawnAfter === undefined) return sampleRuns(spec, runs);
  const before = earlier(spec.drawnAfter);
  const taken = new Set(drawSample(before, runs, earlier).map((r) => r.id));
  return sampleRuns(spec, runs.filter((r) => !taken.has(r.id)));
}
