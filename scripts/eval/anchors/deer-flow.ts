import type { EvalCall } from '../runs.js';
import { FirstHits, type Anchor } from './common.js';

/**
 * deer-flow (`LoopDetectionMiddleware`, defaults): each model turn's tool calls form one key, the
 * order-independent multiset of `name:salient arguments` (path, url, query, command, pattern,
 * glob, cmd; the whole arguments otherwise); among the last 20 turn keys, the 3rd occurrence of
 * a key warns and the 5th strips the tool calls (critical). Results ignored.
 */
const SALIENT = ['path', 'url', 'query', 'command', 'pattern', 'glob', 'cmd'];

function salient(c: EvalCall): string {
  try {
    const args = JSON.parse(c.args) as Record<string, unknown>;
    const picked = SALIENT.filter((k) => k in args).map((k) => `${k}=${JSON.stringify(args[k])}`);
    return `${c.name}:${picked.length > 0 ? picked.join('&') : c.args}`;
  } catch {
    return `${c.name}:${c.args}`;
  }
}

export const deerFlow: Anchor = {
  name: 'deer-flow',
  summary: 'turn multiset of name+salient args, window 20: warn 3, stop 5',
  run(run) {
    const hits = new FirstHits();
    const window: string[] = [];
    let i = 0;
    while (i < run.calls.length) {
      const batch = (run.calls[i] as EvalCall).batch;
      const turn: EvalCall[] = [];
      while (i < run.calls.length && (run.calls[i] as EvalCall).batch === batch) turn.push(run.calls[i++] as EvalCall);
      const key = turn.map(salient).sort().join('\n');
      window.push(key);
      if (window.length > 20) window.shift();
      const count = window.filter((k) => k === key).length;
      const at = (turn[turn.length - 1] as EvalCall).index;
      if (count >= 5) hits.stop(at, 'identical_call_set');
      else if (count >= 3) hits.warn(at, 'identical_call_set');
    }
    return hits.verdict();
  },
};
