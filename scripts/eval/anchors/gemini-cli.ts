import { FirstHits, type Anchor } from './common.js';

/**
 * Gemini CLI (`LoopDetectionService`, tool-call part): key = name + JSON of the arguments as
 * recorded (key order matters); over the last 25 keys, a loop when the last k·5 keys are five
 * repeats of the last k (k = 1..5). Strike 1 injects a hint (warning) and the window starts
 * again; strike 2 halts (critical). Results ignored; the LLM judge and content checks are not
 * reimplemented.
 */
export const geminiCli: Anchor = {
  name: 'gemini-cli',
  summary: 'name+args cycles k=1..5 repeated 5 times: hint, then halt',
  run(run) {
    const hits = new FirstHits();
    let window: string[] = [];
    let strikes = 0;
    for (const c of run.calls) {
      window.push(`${c.name}:${c.args}`);
      if (window.length > 25) window = window.slice(-25);
      if (!looping(window)) continue;
      strikes++;
      if (strikes === 1) hits.warn(c.index, 'tool_call_cycle');
      else hits.stop(c.index, 'tool_call_cycle');
      window = [];
    }
    return hits.verdict();
  },
};

function looping(keys: readonly string[]): boolean {
  for (let k = 1; k <= 5; k++) {
    const need = k * 5;
    if (keys.length < need) break;
    const tail = keys.slice(-need);
    if (tail.every((key, i) => key === tail[i % k])) return true;
  }
  return false;
}
