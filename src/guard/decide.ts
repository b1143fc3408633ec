import type { LoopDetection } from '../detector/types.js';
import type { GuardAction } from './options.js';

export type Intended = 'hint' | 'abort' | 'allow' | 'delay';

export interface DecisionInput {
  readonly action: GuardAction;
  readonly maxHints: number;
  /** The detection the guard acts on (the strongest of the preview). */
  readonly detection: LoopDetection;
  /** Hints and blocks already given on this loop in this turn. */
  readonly strikes: number;
  /** The call's last attempt failed with an error judged transient. */
  readonly transientRetry: boolean;
}

/**
 * The guard's policy, as one pure function:
 * - a retry after a transient failure that has only reached the warning level runs (after the
 *   backoff delay, if configured): a retry that then succeeds is normal, and stopping it would
 *   turn a blip into a failed run. At critical, retrying stops like any other loop;
 * - `abort`: critical stops, a warning lets the call run (reported);
 * - `graduated`: the first strike hints, critical or any later strike stops;
 * - `hint`: hints until `maxHints` strikes on the same loop, then stops.
 */
export function decide(input: DecisionInput): Intended {
  const { detection, strikes } = input;
  const critical = detection.level === 'critical';
  if (input.transientRetry && (detection.rule === 'repeated_failure' || detection.rule === 'changing_failure') && !critical) return 'delay';
  switch (input.action) {
    case 'abort':
      return critical ? 'abort' : 'allow';
    case 'graduated':
      return critical || strikes >= 1 ? 'abort' : 'hint';
    case 'hint':
      return strikes < input.maxHints ? 'hint' : 'abort';
  }
}

/** The detection to act on: the first critical one, else the first (the engine lists cycles first). */
export function strongest(found: readonly LoopDetection[]): LoopDetection | undefined {
  return found.find((d) => d.level === 'critical') ?? found[0];
}
