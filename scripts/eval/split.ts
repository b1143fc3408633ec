import { createHash } from 'node:crypto';

/**
 * The held-out test split. A third of each source marked `heldOut` is chosen by a hash of its
 * run id, fixed before anyone reads the runs: rule changes are made and judged on the dev split,
 * and the test split is scored at the end, so a change that only fits the runs that drove it
 * shows as a gap between the two rows. Sources added before the split existed have been read in
 * full: all dev.
 */

export type Split = 'dev' | 'test';

export const SPLITS: readonly Split[] = ['dev', 'test'];

/** `test` for one run in three, by SHA-256 of source and run id; stable across machines and orders. */
export function splitOf(sourceId: string, runId: string): Split {
  const digest = createHash('sha256').update(`${sourceId}\0${runId}`).digest();
  return digest.readUInt32BE(0) % 3 === 0 ? 'test' : 'dev';
}
