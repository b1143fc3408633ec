import { callKey, outcomeKey } from './anchors/common.js';
import type { EvalRun } from './runs.js';

/** Repetitions after which a loop with nothing new between must be stopped (issue 27: "by the 5th"). */
export const STUCK_REPEATS = 5;

/**
 * The call (1-based) at which a run repeats one call with the same outcome for the 5th time with
 * nothing new between: every call between its first and fifth occurrence repeats an earlier call
 * and outcome of the run, and no user message came between. Compared as recorded (arguments with
 * sorted keys, outcomes as text), independently of loopwatch's fingerprints; undefined when the
 * run never does. Issue 27's target: loopwatch stops every labelled loop by this call.
 */
export function stuckFive(run: EvalRun): number | undefined {
  const seen = new Set<string>();
  /** Per call signature, the steps of its current run of repetitions (since news or a user message). */
  const runs = new Map<string, number>();
  /** Per call signature, the batch of its latest occurrence: the same call twice in one parallel batch is one call. */
  const batchOf = new Map<string, string>();
  let user = 0;
  for (const c of run.calls) {
    let heard = false;
    while (user < run.userTimes.length && (run.userTimes[user] as number) <= c.start) {
      heard = true;
      user++;
    }
    if (heard) runs.clear();
    const sig = `${callKey(c)}\0${outcomeKey(c)}`;
    const repeat = seen.has(sig);
    seen.add(sig);
    // something new ends every run of repetitions but the one it starts
    if (!repeat) runs.clear();
    const sameStep = batchOf.get(sig) === c.batch;
    batchOf.set(sig, c.batch);
    const n = (runs.get(sig) ?? 0) + (sameStep ? 0 : 1);
    runs.set(sig, Math.max(n, 1));
    if (n >= STUCK_REPEATS) return c.index;
  }
  return undefined;
}
