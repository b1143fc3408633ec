/**
 * The guard's incremental view of its engine's history (`RecentOutcomes`) answers exactly what a
 * walk of that history answers (`TraceDetector.recentCalls()`, as the guard read it before), for
 * any sequence of calls, past the history's size, with the real engine.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LoopEngine } from '../../src/detector/engine.js';
import type { RecordedCall, ToolCall } from '../../src/detector/types.js';
import type { Hash } from '../../src/fingerprint/hash.js';
import { GuardSession } from '../../src/guard/session.js';

/** The reference: the history walked from the newest call, as the guard did on every check. */
function walked(history: readonly RecordedCall[], toolName: string, argsHash: Hash | undefined) {
  let latest: RecordedCall['outcome'] | undefined;
  let failures = 0;
  let counting = true;
  let latestOfTool: RecordedCall['outcome'] | undefined;
  for (let i = history.length - 1; i >= 0; i--) {
    const r = history[i] as RecordedCall;
    if (r.toolName !== toolName) continue;
    latestOfTool ??= r.outcome;
    if (r.argsHash !== argsHash) continue;
    latest ??= r.outcome;
    if (counting && r.outcome.ok) counting = false;
    else if (counting) failures++;
  }
  return { latest, failures, latestOfTool };
}

const TOOLS = ['search', 'read_file', 'ghost'];
const ARGS = [11, 22, 33, undefined];

const step = fc.record({
  tool: fc.constantFrom(...TOOLS),
  args: fc.constantFrom(...ARGS),
  outcome: fc.constantFrom('ok', 'same-ok', 'fail', 'other-fail', 'unknown-tool'),
});

describe('RecentOutcomes', () => {
  it('answers what a walk of the engine history answers, for any calls, past the history size', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 60 }), (steps) => {
        const engine = new LoopEngine({ historySize: 8 });
        const session = new GuardSession(engine.createTrace('t'), 1, engine.config.historySize);
        steps.forEach((s, i) => {
          const outcome: ToolCall['outcome'] =
            s.outcome === 'ok'
              ? { ok: true, resultHash: 1000 + i, informative: true }
              : s.outcome === 'same-ok'
                ? { ok: true, resultHash: 7, informative: false }
                : { ok: false, errorClass: s.outcome === 'fail' ? 5 : 6, failureHash: s.outcome === 'fail' ? 50 : 60 + i, unknownTool: s.outcome === 'unknown-tool' };
          session.record({ toolName: s.tool, ...(s.args !== undefined ? { argsHash: s.args } : {}), outcome, startTime: i * 10, endTime: i * 10 + 5, batch: `b${i}`, callIndex: i + 1 }, true);
          const history = session.detector.recentCalls();
          for (const tool of TOOLS) {
            for (const args of ARGS) {
              const want = walked(history, tool, args);
              expect(session.outcomes.latest(tool, args)).toEqual(want.latest);
              expect(session.outcomes.failuresSinceSuccess(tool, args)).toBe(want.failures);
              expect(session.outcomes.latestOfTool(tool)).toEqual(want.latestOfTool);
            }
          }
        });
      }),
      { numRuns: 100 },
    );
  });
});
