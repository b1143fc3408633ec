import { callKey, FirstHits, outcomeKey, type Anchor } from './common.js';

/**
 * selectools (`LoopDetector.default()`, policy RAISE, so every finding stops the run): 3
 * consecutive identical calls (sorted arguments); 3 consecutive calls of one tool with the same
 * result, whatever the arguments (stall); tool names alternating between two tools 3 times.
 */
export const selectools: Anchor = {
  name: 'selectools',
  summary: 'repeat 3, same tool+result 3 (args ignored), A/B names x3: raise',
  run(run) {
    const hits = new FirstHits();
    const calls = run.calls;
    for (let n = 1; n <= calls.length; n++) {
      const c = calls[n - 1];
      if (!c) continue;
      if (n >= 3) {
        const last3 = calls.slice(n - 3, n);
        if (last3.every((x) => callKey(x) === callKey(c))) hits.stop(c.index, 'repeat');
        if (last3.every((x) => x.name === c.name && outcomeKey(x) === outcomeKey(c))) hits.stop(c.index, 'stall');
      }
      if (n >= 6) {
        const names = calls.slice(n - 6, n).map((x) => x.name);
        if (names[0] !== names[1] && names.every((x, i) => x === names[i % 2])) hits.stop(c.index, 'ping_pong');
      }
    }
    return hits.verdict();
  },
};
