import type { Hash } from '../fingerprint/hash.js';
import type { RecordedCall, ToolOutcome } from '../detector/types.js';

interface CallEntry {
  /** Position of its latest record (1 for the first call recorded). */
  seq: number;
  outcome: ToolOutcome;
  /** Positions of its failures since its last success, oldest first. */
  failures: number[];
}

interface ToolEntry {
  seq: number;
  outcome: ToolOutcome;
}

/**
 * What the guard reads of the calls its engine remembers, kept up to date as each is recorded
 * instead of rebuilt from the engine's history for every check: for each call (tool and
 * arguments) its latest outcome and its failures since it last succeeded, for each tool its
 * latest outcome. Only the newest `capacity` records count, as only they are in the engine's
 * history (`historySize`), so it answers exactly what a walk of that history would; what falls
 * out of it is forgotten, so it holds at most `capacity` calls and tools.
 */
export class RecentOutcomes {
  private recorded = 0;
  private readonly calls = new Map<string, CallEntry>();
  private readonly tools = new Map<string, ToolEntry>();

  constructor(private readonly capacity: number) {}

  /** The call the engine has just recorded, as its history gives it back (`TraceDetector.recentCalls(1)`). */
  add(call: RecordedCall): void {
    const seq = ++this.recorded;
    const key = callKey(call.toolName, call.argsHash);
    const entry = this.calls.get(key);
    const failures = entry ? entry.failures : [];
    if (call.outcome.ok) failures.length = 0;
    else failures.push(seq);
    // a call failing on and on: only the failures still remembered count
    while ((failures[0] ?? seq) < this.oldestKept) failures.shift();
    // re-inserted last: each map's first entry is the one recorded longest ago
    this.calls.delete(key);
    this.calls.set(key, { seq, outcome: call.outcome, failures });
    this.tools.delete(call.toolName);
    this.tools.set(call.toolName, { seq, outcome: call.outcome });
    forgetBefore(this.calls, this.oldestKept);
    forgetBefore(this.tools, this.oldestKept);
  }

  /** The latest outcome of this exact call, if the engine still remembers it. */
  latest(toolName: string, argsHash: Hash | undefined): ToolOutcome | undefined {
    const entry = this.calls.get(callKey(toolName, argsHash));
    return entry && entry.seq >= this.oldestKept ? entry.outcome : undefined;
  }

  /** The latest outcome of any call of this tool, if the engine still remembers it. */
  latestOfTool(toolName: string): ToolOutcome | undefined {
    const entry = this.tools.get(toolName);
    return entry && entry.seq >= this.oldestKept ? entry.outcome : undefined;
  }

  /** Failures of this exact call since its last success, among the calls remembered (0 when its latest attempt succeeded). */
  failuresSinceSuccess(toolName: string, argsHash: Hash | undefined): number {
    const failures = this.calls.get(callKey(toolName, argsHash))?.failures;
    if (!failures) return 0;
    let n = 0;
    for (let i = failures.length - 1; i >= 0 && (failures[i] as number) >= this.oldestKept; i--) n++;
    return n;
  }

  /** Position of the oldest record still in the engine's history. */
  private get oldestKept(): number {
    return this.recorded - this.capacity + 1;
  }
}

function callKey(toolName: string, argsHash: Hash | undefined): string {
  return argsHash === undefined ? `-\u0000${toolName}` : `${argsHash}\u0000${toolName}`;
}

/** Drops the entries last recorded before `oldest`: they are at the front, the maps being in order of last record. */
function forgetBefore(entries: Map<string, { readonly seq: number }>, oldest: number): void {
  for (const [key, entry] of entries) {
    if (entry.seq >= oldest) break;
    entries.delete(key);
  }
}
