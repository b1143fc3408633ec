import { readFileSync } from 'node:fs';
import { exists, labelsFile } from '../corpus/files.js';

/**
 * Hand labels, one file per corpus (`test/fixtures/real/labels/<corpus>.json`): for each run,
 * `loop` or `honest` (`unclear` runs are left out of the scores), the 1-based tool call at which
 * the run was obviously stuck (loops), a one-line reason in the labeller's words, and how much
 * of the run was read (`full`, `skim`: the call sequence with shortened arguments and results,
 * `no`: not read, labelled from its outcome and the absence of any detection).
 */

export type Label = 'loop' | 'honest' | 'unclear';

export interface RunLabel {
  readonly label: Label;
  readonly stuckAt?: number;
  readonly reason: string;
  readonly read: 'full' | 'skim' | 'no';
}

export interface LabelFile {
  readonly corpus: string;
  readonly runs: Readonly<Record<string, RunLabel>>;
}

export class LabelError extends Error {
  override readonly name = 'LabelError';
}

const LABELS: readonly Label[] = ['loop', 'honest', 'unclear'];
const READ = ['full', 'skim', 'no'];

/** The labels of a corpus, checked: a bad entry is an error naming the file and the run. */
export function loadLabels(corpus: string, path = labelsFile(corpus)): Map<string, RunLabel> {
  const out = new Map<string, RunLabel>();
  if (!exists(path)) return out;
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new LabelError(`${path}: invalid JSON: ${(e as Error).message}`);
  }
  const runs = (doc as { runs?: unknown }).runs;
  if (typeof runs !== 'object' || runs === null) throw new LabelError(`${path}: expected {"corpus": ..., "runs": {run id: label}}`);
  for (const [id, v] of Object.entries(runs)) {
    const l = v as Partial<RunLabel>;
    const where = `${path}: run "${id}"`;
    if (!LABELS.includes(l.label as Label)) throw new LabelError(`${where}: label must be one of ${LABELS.join(', ')}`);
    if (typeof l.reason !== 'string' || l.reason.trim() === '') throw new LabelError(`${where}: a reason is required`);
    if (!READ.includes(l.read as string)) throw new LabelError(`${where}: read must be one of ${READ.join(', ')}`);
    if (l.label === 'loop' && (typeof l.stuckAt !== 'number' || !Number.isInteger(l.stuckAt) || l.stuckAt < 1)) {
      throw new LabelError(`${where}: a loop needs stuckAt, the 1-based tool call at which it was obviously stuck`);
    }
    out.set(id, l as RunLabel);
  }
  return out;
}
