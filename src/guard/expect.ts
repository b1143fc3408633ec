import { hashString, type Hash } from '../fingerprint/hash.js';
import type { RecordedCall, ToolOutcome } from '../detector/types.js';

const FRESH_TAG = 0x6a11;
let freshSeq = 0;

function sameArgs(a: Hash | undefined, b: Hash | undefined): boolean {
  return a === b;
}

/**
 * The outcome a call is expected to have before it runs, so that the engine can judge it:
 * - the call ran before (same tool, same arguments): its latest outcome. A loop is the same
 *   call giving the same answer, and the engine only flags it when that answer repeated, so
 *   polling whose status moves, a transient retry that then succeeded, or output that keeps
 *   changing are judged exactly as the engine judges them after the fact;
 * - the tool was reported as not existing: that again (a missing tool does not appear);
 * - otherwise new work with a new answer, which no repetition rule can match.
 */
export function expectedOutcome(history: readonly RecordedCall[], toolName: string, argsHash: Hash | undefined): ToolOutcome {
  for (let i = history.length - 1; i >= 0; i--) {
    const r = history[i];
    if (r && r.toolName === toolName && sameArgs(r.argsHash, argsHash)) return r.outcome;
  }
  for (let i = history.length - 1; i >= 0; i--) {
    const r = history[i];
    if (r && r.toolName === toolName) {
      if (!r.outcome.ok && r.outcome.unknownTool) return r.outcome;
      break;
    }
  }
  return { ok: true, resultHash: hashString(String(freshSeq++), FRESH_TAG), informative: true };
}

/** Failures of this exact call since its last success (0 when its latest attempt succeeded). */
export function consecutiveFailures(history: readonly RecordedCall[], toolName: string, argsHash: Hash | undefined): number {
  let n = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const r = history[i];
    if (!r || r.toolName !== toolName || !sameArgs(r.argsHash, argsHash)) continue;
    if (r.outcome.ok) break;
    n++;
  }
  return n;
}
