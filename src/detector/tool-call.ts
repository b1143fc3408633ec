import {
  fingerprint,
  MAX_DEPTH,
  MAX_JSON_TEXT,
  MAX_NODES,
  NOTE_CYCLE,
  NOTE_DEPTH,
  NOTE_HUGE_TEXT,
  NOTE_MALFORMED_JSON,
  NOTE_NODES,
  type Fingerprint,
  type FingerprintOptions,
} from '../fingerprint/canonical.js';
import { combine, combineAll, type Hash } from '../fingerprint/hash.js';
import type { LoopEngine } from './engine.js';
import { classifyError } from './error-class.js';
import type { RawToolCall, ToolCall, ToolOutcome } from './types.js';

export type { RawToolCall } from './types.js';

/**
 * Told about content that could not be fingerprinted (a throwing getter, a hostile proxy: the
 * value counts as not captured). Messages name the tool and the problem, never the content.
 */
export type ProblemReporter = (message: string) => void;

/** Told about content fingerprinted on less than all of it, or as text (`note`: a `NOTE_*` bit). */
export type NoteReporter = (message: string, note: number) => void;

/** A count with its digits in groups of three: 200 000. */
const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+$)/g, ' ');

const NOTE_TEXT: ReadonlyArray<readonly [number, string]> = [
  [NOTE_DEPTH, `are nested deeper than ${MAX_DEPTH} levels; what is deeper counts as one value`],
  [NOTE_NODES, `hold more than ${grouped(MAX_NODES)} values; only the first ones count`],
  [NOTE_CYCLE, 'refer to themselves; the cycle counts as one value'],
  [NOTE_MALFORMED_JSON, 'look like JSON but are not valid JSON; they are fingerprinted as text'],
  [NOTE_HUGE_TEXT, `are text over ${MAX_JSON_TEXT / (1024 * 1024)} MiB; they are fingerprinted as text, not searched for JSON`],
];

function safeFingerprint(
  value: unknown,
  options: FingerprintOptions,
  toolName: string,
  what: string,
  onProblem: ProblemReporter | undefined,
  onNote: NoteReporter | undefined,
): Fingerprint | undefined {
  let fp: Fingerprint;
  try {
    fp = fingerprint(value, options);
  } catch (e) {
    onProblem?.(`could not fingerprint the ${what} of '${toolName}' (treated as not captured): ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
  if (fp.notes !== 0 && onNote) {
    for (const [note, text] of NOTE_TEXT) if ((fp.notes & note) !== 0) onNote(`the ${what} of '${toolName}' ${text}`, note);
  }
  return fp;
}

const FAILURE_TAG = 0x6e13;

/** A failure's content: its class, and what its message and output said (see `ToolOutcome`). */
function failureHash(errorClass: Hash, message: Hash | undefined, output: Hash | undefined): Hash {
  if (message === undefined && output === undefined) return errorClass;
  return combineAll(FAILURE_TAG, errorClass, message ?? Number.NaN, output ?? Number.NaN);
}

/**
 * Reduces a raw call to hashes. Content that cannot be fingerprinted (a throwing getter, a
 * hostile proxy) is treated as not captured and reported through `onProblem`; content hashed on
 * less than all of it goes to `onNote`. It never throws.
 */
export function buildToolCall(engine: LoopEngine, raw: RawToolCall, onProblem?: ProblemReporter, onNote?: NoteReporter): ToolCall {
  const toolName = raw.toolName;
  const policy = engine.policies.get(toolName);
  const args =
    raw.arguments === undefined
      ? undefined
      : safeFingerprint(raw.arguments, { side: 'arguments', volatileKeys: policy.volatileArgumentKeys, now: raw.startTime }, toolName, 'arguments', onProblem, onNote);
  let outcome: ToolOutcome;
  if (raw.error) {
    const error = classifyError(raw.error);
    const options = { side: 'result', volatileKeys: policy.volatileResultKeys } as const;
    const message = raw.error.message === undefined || raw.error.message === '' ? undefined : safeFingerprint(raw.error.message, options, toolName, 'error message', onProblem, onNote);
    const output = raw.result === undefined ? undefined : safeFingerprint(raw.result, options, toolName, 'result', onProblem, onNote);
    outcome = { ok: false, ...error, failureHash: failureHash(error.errorClass, message?.hash, output?.hash) };
  } else {
    const result =
      raw.result === undefined ? undefined : safeFingerprint(raw.result, { side: 'result', volatileKeys: policy.volatileResultKeys }, toolName, 'result', onProblem, onNote);
    const targets = args?.targets;
    outcome = result
      ? {
          ok: true,
          resultHash: targets === undefined ? result.hash : combine(result.hash, targets),
          informative: result.informative > 0,
          ...(result.saysError ? { saysError: true } : {}),
        }
      : { ok: true, informative: false };
  }
  // one shape for every call, absent fields undefined: made whole at once, never grown
  return {
    toolName,
    argsHash: args?.hash,
    actionHash: args?.action,
    wording: args?.wording,
    wordingLength: args?.wording === undefined ? undefined : args.wordingLength,
    outcome,
    startTime: raw.startTime,
    endTime: raw.endTime,
    batch: raw.batch,
    callIndex: raw.callIndex,
    spanId: raw.spanId,
    promptName: raw.promptName,
    agentName: raw.agentName,
  };
}
