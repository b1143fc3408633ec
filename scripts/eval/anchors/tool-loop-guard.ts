import { callKey, FirstHits, type Anchor } from './common.js';

/** tool-loop-guard (`LoopGuard(window=8, threshold=3)`): a call whose key is already twice among the last 8 raises. */
export const toolLoopGuard: Anchor = {
  name: 'tool-loop-guard',
  summary: 'same name+args 3 times within the last 8 calls: raise',
  run(run) {
    const hits = new FirstHits();
    const window: string[] = [];
    for (const c of run.calls) {
      const key = callKey(c);
      window.push(key);
      if (window.length > 8) window.shift();
      if (window.filter((k) => k === key).length >= 3) hits.stop(c.index, 'repeat_in_window');
    }
    return hits.verdict();
  },
};
