/**
 * A candidate rule measured on the corpus, not a detector: `npx tsx scripts/eval/drought.ts`.
 * A "novelty drought" is a run of calls that bring nothing new: each call's (tool, arguments,
 * outcome) already occurred in the trace since the last user message. Prints, for drought lengths
 * K, how many labelled honest runs reach K and how many labelled loops do (see FINDINGS.md, 1).
 */
import { callKey, outcomeKey } from './anchors/common.js';
import { loadLabels } from './labels.js';
import { loadRealCorpora, loadSyntheticCorpus, type EvalRun } from './runs.js';

/** The 1-based call at which the run has had `k` calls in a row with nothing new, or undefined. */
export function droughtAt(run: EvalRun, k: number, resetOnUser = true): number | undefined {
  const seen = new Set<string>();
  let drought = 0;
  let user = 0;
  for (const c of run.calls) {
    while (resetOnUser && user < run.userTimes.length && (run.userTimes[user] as number) <= c.start) {
      drought = 0;
      user++;
    }
    const key = `${callKey(c)}\u0001${outcomeKey(c)}`;
    if (seen.has(key)) drought++;
    else {
      drought = 0;
      seen.add(key);
    }
    if (drought >= k) return c.index;
  }
  return undefined;
}

function main(): void {
  const corpora = [...loadRealCorpora(), loadSyntheticCorpus()];
  for (const resetOnUser of [true, false]) {
    for (const k of [4, 5, 6, 8, 10]) {
      const honest: string[] = [];
      let loops = 0;
      let caught = 0;
      for (const c of corpora) {
        const labels = loadLabels(c.id);
        for (const run of c.runs) {
          const label = labels.get(run.runId);
          if (!label || label.label === 'unclear') continue;
          const at = droughtAt(run, k, resetOnUser);
          if (label.label === 'loop') {
            loops++;
            if (at !== undefined) caught++;
          } else if (at !== undefined) honest.push(`${c.id} ${run.runId}@${at}`);
        }
      }
      console.log(`drought ${k}${resetOnUser ? ', reset by user messages' : ''}: honest runs flagged ${honest.length}${honest.length > 0 ? ` (${honest.join(', ')})` : ''}; loops caught ${caught}/${loops}`);
    }
  }
}

if (process.argv[1]?.endsWith('drought.ts')) main();
