import { ToolLoopError } from '../../../src/errors.js';
import type { GuardEvent } from '../../../src/guard/events.js';
import { ToolLoopGuard } from '../../../src/guard/guard.js';
import { isLoopHint } from '../../../src/guard/hint.js';
import type { ToolLoopGuardOptions } from '../../../src/guard/options.js';
import type { ScriptItem, Step } from '../../support/agent-run.js';

export type Fate = 'ran' | 'hinted' | 'blocked';

export interface GuardRun {
  /** What happened to each scripted call, in script order (calls after a stop are absent). */
  readonly fates: Fate[];
  readonly events: GuardEvent[];
  readonly executed: number;
  readonly error: ToolLoopError | undefined;
  /** 1-based index of the first call that was hinted or blocked. */
  firstIntervention(): number | undefined;
  readonly guard: ToolLoopGuard;
}

/**
 * Drives a scripted agent through a guard, the way a model that ignores hints would: every
 * scripted call is attempted in order (parallel steps together), a hinted call is skipped, and
 * the run ends at the first `ToolLoopError`. A fake clock honours `idleMs` and `durationMs`.
 */
export async function runGuarded(script: readonly ScriptItem[], options: ToolLoopGuardOptions<unknown> = {}): Promise<GuardRun> {
  let clock = Date.parse('2026-11-21T10:00:00Z');
  const events: GuardEvent[] = [];
  const guard = new ToolLoopGuard({
    ...options,
    now: () => clock,
    onDecision: (e) => {
      events.push(e);
    },
  }) as ToolLoopGuard;
  const fates: Fate[] = [];
  let executed = 0;
  let error: ToolLoopError | undefined;
  for (const [stepNo, item] of script.entries()) {
    const batch: readonly Step[] = Array.isArray(item) ? (item as readonly Step[]) : [item as Step];
    const start = clock + (batch[0]?.idleMs ?? 1_000);
    clock = start;
    const outcomes = await Promise.allSettled(
      batch.map((s, k) =>
        guard.run(
          s.tool,
          s.args,
          async () => {
            executed++;
            clock = Math.max(clock, start + k + (s.durationMs ?? 100));
            if (s.error) throw Object.assign(new Error(s.error.message ?? 'failed'), s.error.type ? { name: s.error.type } : {});
            return s.result;
          },
          { batch: `step-${stepNo}` },
        ),
      ),
    );
    for (const o of outcomes) {
      if (o.status === 'fulfilled') fates.push(isLoopHint(o.value) ? 'hinted' : 'ran');
      else if (o.reason instanceof ToolLoopError) {
        fates.push('blocked');
        error ??= o.reason;
      } else fates.push('ran'); // the tool's own failure
    }
    if (error) break;
  }
  return {
    fates,
    events,
    executed,
    error,
    guard,
    firstIntervention: () => {
      const i = fates.findIndex((f) => f !== 'ran');
      return i < 0 ? undefined : i + 1;
    },
  };
}
