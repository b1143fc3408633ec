import type { LoopEngine } from '../detector/engine.js';
import type { GuardAction } from '../guard/options.js';
import type { GuardEvent } from '../guard/events.js';
import { ToolLoopGuard } from '../guard/guard.js';

/** A desktop client keeps one server across many chats: a session quiet this long starts a new run. */
export const DEFAULT_IDLE_GAP_MS = 5 * 60_000;
/** Runs remembered at once (sessions and client traces): past it, the least recently active is forgotten. */
const MAX_RUNS = 512;

export interface RunsOptions {
  readonly engine: LoopEngine;
  readonly action: GuardAction;
  readonly idleGapMs: number;
  /** Every decision of every run's guard, with the run it belongs to. */
  readonly onDecision: (event: GuardEvent, run: Run) => void;
  readonly now?: () => number;
}

/** One run: a client's trace, or a session's calls between idle gaps. History, hints and refusals are its own. */
export interface Run {
  /** `trace:<trace id>` or `session:<session key>`. */
  readonly key: string;
  readonly guard: ToolLoopGuard;
  /** How many runs this session had before (0 for a trace). */
  sequence: number;
  lastActive: number;
}

/**
 * The runs of a proxy: a call is in its client's trace when it carries W3C trace context (the
 * trace is the agent's run, as the OpenTelemetry MCP conventions propagate it), otherwise in its
 * session's current run, which ends after `idleGapMs` without a call. Each run has its own
 * `ToolLoopGuard` on the shared engine; a stop refuses the stopped loop only (`stopScope: 'loop'`):
 * the proxy cannot abort the client, whose model goes on with its other tools.
 */
export class Runs {
  private readonly runs = new Map<string, Run>();
  private readonly now: () => number;

  constructor(private readonly options: RunsOptions) {
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.runs.size;
  }

  /** The run of a call in `session` with the client's `traceId` (if given), started or continued now. */
  runOf(session: string, traceId: string | undefined): Run {
    const now = this.now();
    const key = traceId !== undefined ? `trace:${traceId}` : `session:${session}`;
    let run = this.runs.get(key);
    if (run && traceId === undefined && now - run.lastActive > this.options.idleGapMs) {
      run.guard.reset();
      run.sequence++;
    }
    if (!run) {
      run = this.create(key);
      if (this.runs.size >= MAX_RUNS) this.forgetOldest();
    }
    // re-inserted last: the Map's order is the order of last activity
    this.runs.delete(key);
    this.runs.set(key, run);
    run.lastActive = now;
    return run;
  }

  /** A session ended (its transport closed): its run is forgotten. */
  endSession(session: string): void {
    this.runs.delete(`session:${session}`);
  }

  private create(key: string): Run {
    const holder: { run?: Run } = {};
    const guard = new ToolLoopGuard({
      engine: this.options.engine,
      action: this.options.action,
      stopScope: 'loop',
      id: key,
      now: this.now,
      onDecision: (event) => {
        if (holder.run) this.options.onDecision(event, holder.run);
      },
    });
    const run: Run = { key, guard, sequence: 0, lastActive: this.now() };
    holder.run = run;
    return run;
  }

  private forgetOldest(): void {
    const oldest = this.runs.keys().next();
    if (!oldest.done) this.runs.delete(oldest.value);
  }
}
