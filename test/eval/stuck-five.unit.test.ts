import { describe, expect, it } from 'vitest';
import type { EvalCall, EvalRun } from '../../scripts/eval/runs.js';
import { stuckFive } from '../../scripts/eval/stuck-five.js';

/** A run of calls `[name, args, result]` (or a failure `[name, args, undefined, error]`), one step each, user messages at `users` (before those calls). */
function run(calls: ReadonlyArray<readonly [string, string, string | undefined, string?]>, users: readonly number[] = []): EvalRun {
  const list: EvalCall[] = calls.map(([name, args, result, error], i) => ({
    index: i + 1,
    name,
    args,
    result,
    failed: error !== undefined,
    errorText: error,
    start: (i + 1) * 1000,
    end: (i + 1) * 1000 + 100,
    batch: `b${i}`,
  }));
  return { corpus: 'c', runId: 'r', traceId: 't', outcome: undefined, calls: list, userTimes: users.map((i) => i * 1000 - 1) };
}

describe('stuckFive: the call that repeats one call and outcome a 5th time with nothing new between', () => {
  const ls = ['bash', '{"command":"ls"}', '[]'] as const;
  const cat = ['bash', '{"command":"cat a"}', 'x'] as const;

  it('finds the 5th identical call in a row, keys in any order', () => {
    expect(stuckFive(run([ls, ls, ['bash', '{ "command": "ls" }', '[]'], ls, ls, ls]))).toBe(5);
  });

  it('counts across other repeats, not across news, a new answer or a user message', () => {
    expect(stuckFive(run([cat, ls, cat, ls, cat, ls, ls, cat, ls]))).toBe(9);
    expect(stuckFive(run([ls, ls, ['bash', '{"command":"pwd"}', '/'], ls, ls, ls]))).toBeUndefined();
    expect(stuckFive(run([ls, ls, ['bash', '{"command":"ls"}', '[a]'], ls, ls, ls]))).toBeUndefined();
    expect(stuckFive(run([ls, ls, ls, ls, ls], [3]))).toBeUndefined();
  });

  it('counts identical failures like identical answers', () => {
    const fail = ['edit', '{"path":"x"}', undefined, "'old_str' not found"] as const;
    expect(stuckFive(run([fail, fail, fail, fail, fail]))).toBe(5);
  });
});
