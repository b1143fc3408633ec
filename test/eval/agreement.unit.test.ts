import { describe, expect, it } from 'vitest';
import { exists, originalOtlpFile } from '../../scripts/corpus/files.js';
import { SOURCES } from '../../scripts/corpus/sources.js';
import { agreementAll } from '../../scripts/eval/agreement.js';

/**
 * Detection on the pseudonymized corpus equals detection on the original runs. The originals are
 * never committed: this runs where they were re-created (`npm run corpus:extract && npm run
 * corpus:build`, from the fetched repositories) and is skipped elsewhere, CI included.
 */
const present = SOURCES.filter((s) => exists(originalOtlpFile(s.id)));

describe.skipIf(present.length === 0)('pseudonymized vs original runs (needs .tmp/real-originals)', () => {
  it('every run: the same loopwatch detections, the same anchor verdicts, the same fingerprint and user message classes', () => {
    const all = agreementAll();
    expect(all.map((a) => a.corpus)).toEqual(present.map((s) => s.id));
    for (const a of all) {
      expect(a.mismatches, a.corpus).toEqual([]);
      expect(a.sameFingerprintClasses).toBe(a.runs);
      expect(a.sameUserMessageClasses).toBe(a.runs);
    }
    // replays every run twice (original and pseudonymized) through loopwatch and every anchor
  }, 600_000);
});
