import { callKey, FirstHits, outcomeKey, type Anchor } from './common.js';

/**
 * OpenClaw (`tool-loop-detection.ts`, defaults: history 30, warning 10, critical 20, breaker 30):
 * `generic_repeat` warns when the same (tool, arguments) appears 10 times among the last 30
 * calls and stops at a no-progress streak of 20 (the same call returning the same result);
 * `ping_pong` warns at an alternating tail of two signatures 10 long and stops at 20 when both
 * sides' results are stable; the global breaker stops at a no-progress streak of 30. Results are
 * compared as recorded (OpenClaw strips a few tool-specific volatile fields first).
 */
export const openClaw: Anchor = {
  name: 'openclaw',
  summary: 'same call 10x in last 30 warn; same call+result streak 20 stop; ping-pong 10/20',
  run(run) {
    const hits = new FirstHits();
    const keys: string[] = [];
    const outs: string[] = [];
    for (const c of run.calls) {
      keys.push(callKey(c));
      outs.push(outcomeKey(c));
      const n = keys.length;
      const key = keys[n - 1] as string;
      const out = outs[n - 1] as string;
      const window = keys.slice(-30);
      if (window.filter((k) => k === key).length >= 10) hits.warn(c.index, 'generic_repeat');
      // no-progress streak: the most recent calls with these arguments all returned this result
      let streak = 0;
      for (let i = n - 1; i >= 0; i--) {
        if (keys[i] !== key) continue;
        if (outs[i] !== out) break;
        streak++;
      }
      if (streak >= 20) hits.stop(c.index, 'generic_repeat');
      // ping-pong: the tail alternates between exactly two signatures
      let tail = 1;
      const other = keys[n - 2];
      if (other !== undefined && other !== key) {
        tail = 2;
        while (tail < n && keys[n - 1 - tail] === (tail % 2 === 0 ? key : other)) tail++;
      }
      if (tail >= 10) hits.warn(c.index, 'ping_pong');
      if (tail >= 20) {
        const stable = (parity: number): boolean => {
          const seen = new Set<string>();
          for (let i = 0; i < tail; i++) if (i % 2 === parity) seen.add(outs[n - 1 - i] as string);
          return seen.size === 1;
        };
        if (stable(0) && stable(1)) hits.stop(c.index, 'ping_pong');
      }
      if (streak >= 30) hits.stop(c.index, 'global_circuit_breaker');
    }
    return hits.verdict();
  },
};
