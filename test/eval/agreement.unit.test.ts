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

/**
 * Runs where `same_result`'s warning lands a call or two apart on the two sides: it compares the
 * wording of answers by a sketch (an estimate), and pseudonymized words hash differently, so a
 * similarity at the sketch's margin can fall either way (test/fixtures/real/FINDINGS.md). Every
 * other detection of these runs must still agree.
 */
const SKETCH_MARGIN = new Set([
  'bfcl-memory-qwen3 Qwen3-4B-Instruct-2507/memory_rec_sum_prereq_6-customer-6',
  'bfcl-memory-qwen3 Qwen3-4B-Instruct-2507/memory_rec_sum_prereq_8-customer-8',
  'bfcl-memory-qwen3 Qwen3-4B-Instruct-2507/memory_rec_sum_prereq_24-student-2',
]);

/** A run's detections without `same_result`'s: `call:kind/rule:level:count`, space-separated. */
function withoutSameResult(detections: string): string {
  return detections
    .split(' ')
    .filter((d) => !d.includes('/same_result:'))
    .join(' ');
}

describe.skipIf(present.length === 0)('pseudonymized vs original runs (needs .tmp/real-originals)', () => {
  it('every run: the same loopwatch detections, the same anchor verdicts, the same fingerprint and user message classes', () => {
    const all = agreementAll();
    expect(all.map((a) => a.corpus)).toEqual(present.map((s) => s.id));
    for (const a of all) {
      const unexplained = a.mismatches.filter(
        (m) => !(m.detector === 'loopwatch' && SKETCH_MARGIN.has(`${a.corpus} ${m.runId}`) && withoutSameResult(m.original) === withoutSameResult(m.pseudonymized)),
      );
      expect(unexplained, a.corpus).toEqual([]);
      expect(a.sameFingerprintClasses).toBe(a.runs);
      expect(a.sameUserMessageClasses).toBe(a.runs);
    }
    // replays every run twice (original and pseudonymized) through loopwatch and every anchor
  }, 600_000);
});
