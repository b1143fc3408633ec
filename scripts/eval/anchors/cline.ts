import { callKey, FirstHits, type Anchor } from './common.js';

/**
 * Cline (SDK `LoopDetectionTracker`, CLI defaults): identical consecutive calls (name and
 * arguments with sorted keys); a soft warning at the 3rd, a hard stop at the 5th. Results ignored.
 */
export const cline: Anchor = {
  name: 'cline',
  summary: 'identical consecutive calls (sorted args): warn 3, stop 5',
  run(run) {
    const hits = new FirstHits();
    let streak = 0;
    let last = '';
    for (const c of run.calls) {
      const key = callKey(c);
      streak = key === last ? streak + 1 : 1;
      last = key;
      if (streak >= 5) hits.stop(c.index, 'consecutive_identical');
      else if (streak >= 3) hits.warn(c.index, 'consecutive_identical');
    }
    return hits.verdict();
  },
};
