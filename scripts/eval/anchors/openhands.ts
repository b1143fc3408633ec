import type { EvalCall } from '../runs.js';
import { callKey, FirstHits, outcomeKey, type Anchor } from './common.js';

/**
 * OpenHands SDK (`StuckDetector`, default thresholds): over the events since the last user
 * message (at most 20), stuck when the last 4 (action, observation) pairs are identical, when the
 * last 4 identical actions all failed (the 3rd gets a one-time nudge: warning), or when the last
 * 6 actions and observations alternate A/B. The action's thought text, which OpenHands also
 * compares, is not in the traces; so this is, if anything, quicker to fire than the original.
 */
export const openHands: Anchor = {
  name: 'openhands',
  summary: '4 identical action+observation; 3 same failing action nudge, 4 stuck; A/B x3',
  run(run) {
    const hits = new FirstHits();
    let since: EvalCall[] = [];
    let user = 0;
    for (const c of run.calls) {
      while (user < run.userTimes.length && (run.userTimes[user] as number) <= c.start) {
        since = [];
        user++;
      }
      since.push(c);
      if (since.length > 20) since = since.slice(-20);
      const a = since.map(callKey);
      const o = since.map(outcomeKey);
      const n = since.length;
      const same = (k: number): boolean => n >= k && a.slice(-k).every((x) => x === a[n - 1]);
      if (same(4) && o.slice(-4).every((x) => x === o[n - 1])) hits.stop(c.index, 'repeating_action_observation');
      const failing = (k: number): boolean => same(k) && since.slice(-k).every((x) => x.failed);
      if (failing(4)) hits.stop(c.index, 'repeating_action_error');
      else if (failing(3)) hits.warn(c.index, 'repeating_action_error');
      if (n >= 6) {
        const [a0, a1, a2, a3, a4, a5] = a.slice(-6);
        const [o0, o1, o2, o3, o4, o5] = o.slice(-6);
        if (a0 !== a1 && a0 === a2 && a2 === a4 && a1 === a3 && a3 === a5 && o0 === o2 && o2 === o4 && o1 === o3 && o3 === o5) {
          hits.stop(c.index, 'alternating_pattern');
        }
      }
    }
    return hits.verdict();
  },
};
