import type { RunLabel } from './labels.js';

/** One detector's verdict on one run: the calls (1-based) of its first intervention and first stop. */
export interface RunVerdict {
  readonly runId: string;
  readonly warning: number | undefined;
  readonly critical: number | undefined;
  /** What fired first (a rule or kind name), for the findings. */
  readonly rule: string | undefined;
}

export interface DetectorScore {
  readonly detector: string;
  /** Labelled runs scored (`unclear` and unlabelled runs left out). */
  readonly runs: number;
  readonly calls: number;
  readonly honest: number;
  readonly honestWarned: number;
  readonly honestStopped: number;
  readonly loops: number;
  readonly loopsCaught: number;
  readonly loopsStopped: number;
  /** Median of (first intervention − stuck call) over the loops caught; negative is earlier. */
  readonly medianToWarning: number | undefined;
  readonly medianToCritical: number | undefined;
  readonly unlabelled: number;
  readonly unclear: number;
}

export function median(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function scoreDetector(
  detector: string,
  verdicts: readonly RunVerdict[],
  labels: ReadonlyMap<string, RunLabel>,
  callsOf: ReadonlyMap<string, number>,
): DetectorScore {
  let runs = 0;
  let calls = 0;
  let honest = 0;
  let honestWarned = 0;
  let honestStopped = 0;
  let loops = 0;
  let loopsCaught = 0;
  let loopsStopped = 0;
  let unlabelled = 0;
  let unclear = 0;
  const toWarning: number[] = [];
  const toCritical: number[] = [];
  for (const v of verdicts) {
    const l = labels.get(v.runId);
    if (!l) {
      unlabelled++;
      continue;
    }
    if (l.label === 'unclear') {
      unclear++;
      continue;
    }
    runs++;
    calls += callsOf.get(v.runId) ?? 0;
    if (l.label === 'honest') {
      honest++;
      if (v.warning !== undefined) honestWarned++;
      if (v.critical !== undefined) honestStopped++;
      continue;
    }
    loops++;
    if (v.warning !== undefined) {
      loopsCaught++;
      if (l.stuckAt !== undefined) toWarning.push(v.warning - l.stuckAt);
    }
    if (v.critical !== undefined) {
      loopsStopped++;
      if (l.stuckAt !== undefined) toCritical.push(v.critical - l.stuckAt);
    }
  }
  return {
    detector,
    runs,
    calls,
    honest,
    honestWarned,
    honestStopped,
    loops,
    loopsCaught,
    loopsStopped,
    medianToWarning: median(toWarning),
    medianToCritical: median(toCritical),
    unlabelled,
    unclear,
  };
}

/**
 * The anchor loopwatch must match on a corpus: of the anchors that stop no honest run there, the
 * one that stops the most loops (the first listed on a tie). Undefined when every anchor stops an
 * honest run.
 */
export function bestAnchor(scores: readonly DetectorScore[], loopwatch = 'loopwatch'): DetectorScore | undefined {
  let best: DetectorScore | undefined;
  for (const s of scores) {
    if (s.detector === loopwatch || s.honestStopped > 0) continue;
    if (!best || s.loopsStopped > best.loopsStopped) best = s;
  }
  return best;
}
