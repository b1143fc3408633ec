import { hashString, type Hash } from '../fingerprint/hash.js';
import type { ToolOutcome } from '../detector/types.js';
import type { RecentOutcomes } from './recent-outcomes.js';

const FRESH_TAG = 0x6a11;
let freshSeq = 0;

/**
 * The outcome a call is expected to have before it runs, so that the engine can judge it:
 * - the call ran before (same tool, same arguments): its latest outcome. A loop is the same
 *   call giving the same answer, and the engine only flags it when that answer repeated, so
 *   polling whose status moves, a transient retry that then succeeded, or output that keeps
 *   changing are judged exactly as the engine judges them after the fact;
 * - the tool was reported as not existing: that again (a missing tool does not appear);
 * - otherwise new work with a new answer, which no repetition rule can match.
 */
export function expectedOutcome(recent: RecentOutcomes, toolName: string, argsHash: Hash | undefined): ToolOutcome {
  const same = recent.latest(toolName, argsHash);
  if (same) return same;
  const ofTool = recent.latestOfTool(toolName);
  if (ofTool && !ofTool.ok && ofTool.unknownTool) return ofTool;
  return { ok: true, resultHash: hashString(String(freshSeq++), FRESH_TAG), informative: true };
}
