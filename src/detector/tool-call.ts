import { fingerprint, type Fingerprint, type FingerprintOptions } from '../fingerprint/canonical.js';
import type { LoopEngine } from './engine.js';
import { classifyError, type RawError } from './error-class.js';
import type { ToolCall, ToolOutcome } from './types.js';

/** A tool call with its raw content, as read from a span, a file or a dispatcher. */
export interface RawToolCall {
  readonly toolName: string;
  /** Raw arguments (object or JSON string); `undefined` when not captured. */
  readonly arguments?: unknown;
  /** Raw result; `undefined` when not captured. Ignored when `error` is set. */
  readonly result?: unknown;
  /** Present when the call failed. */
  readonly error?: RawError;
  readonly startTime: number;
  readonly endTime: number;
  readonly batch: string;
  readonly callIndex: number;
  readonly spanId?: string;
  readonly promptName?: string;
  readonly agentName?: string;
}

/**
 * Reduces a raw call to hashes. Content that cannot be fingerprinted (a throwing getter, a
 * hostile proxy) is treated as not captured and reported through `onProblem`; it never throws.
 */
export function buildToolCall(engine: LoopEngine, raw: RawToolCall, onProblem?: (message: string) => void): ToolCall {
  const policy = engine.policies.get(raw.toolName);
  const safeFingerprint = (value: unknown, options: FingerprintOptions, what: string): Fingerprint | undefined => {
    if (value === undefined) return undefined;
    try {
      return fingerprint(value, options);
    } catch (e) {
      onProblem?.(`could not fingerprint the ${what} of '${raw.toolName}': ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
  };
  const args = safeFingerprint(
    raw.arguments,
    { side: 'arguments', volatileKeys: policy.volatileArgumentKeys, now: raw.startTime },
    'arguments',
  );
  let outcome: ToolOutcome;
  if (raw.error) {
    outcome = { ok: false, ...classifyError(raw.error) };
  } else {
    const result = safeFingerprint(raw.result, { side: 'result', volatileKeys: policy.volatileResultKeys }, 'result');
    outcome = result
      ? { ok: true, resultHash: result.hash, informative: result.informative > 0 }
      : { ok: true, informative: false };
  }
  return {
    toolName: raw.toolName,
    ...(args ? { argsHash: args.hash } : {}),
    outcome,
    startTime: raw.startTime,
    endTime: raw.endTime,
    batch: raw.batch,
    callIndex: raw.callIndex,
    ...(raw.spanId !== undefined ? { spanId: raw.spanId } : {}),
    ...(raw.promptName !== undefined ? { promptName: raw.promptName } : {}),
    ...(raw.agentName !== undefined ? { agentName: raw.agentName } : {}),
  };
}
