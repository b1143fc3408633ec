import { ToolLoopError } from '../errors.js';
import { MAX_USER_MESSAGES_READ } from '../detector/user-message.js';
import { hashString } from '../fingerprint/hash.js';
import { log } from '../otel/diag.js';
import type { CallGuard, ProceedingCall } from './calls.js';
import { isLoopHint } from './hint.js';
import { sleep } from './transient.js';

/** The parts of AI SDK `ToolExecutionOptions` the guard reads; typed here so `ai` stays a dev dependency. */
interface ExecutionOptionsLike {
  readonly messages?: readonly unknown[];
  readonly abortSignal?: AbortSignal;
}

type Execute = (input: unknown, options: ExecutionOptionsLike) => unknown;
type ToModelOutput = (options: { toolCallId: string; input: unknown; output: unknown }) => unknown;

export interface WrapToolsOptions {
  /**
   * `auto` (default): the user messages of the conversation the SDK hands each tool are told to
   * the guard (`guard.userMessage`) when they change (more of them, or different text in the last
   * one): one that says something new starts a new turn. `manual`: tell the guard yourself.
   */
  readonly newTurn?: 'auto' | 'manual';
}

// Per step the SDK passes every tool call the same `messages` array: its identity is the step.
const stepKeys = new WeakMap<object, string>();
let stepSeq = 0;
// The turn each guard is in: the number of user messages and a hash of the last one's text.
const turnMarkers = new WeakMap<object, string>();
// Per message object, so a conversation's text is hashed once, not on every tool call.
const messageHashes = new WeakMap<object, number>();
const warnedUnwired = new WeakSet<object>();
// Executes this module made, and for which guard: wrapping twice with one guard would record every call twice.
const guardedBy = new WeakMap<object, object>();

function stepKey(messages: unknown): string | undefined {
  if (typeof messages !== 'object' || messages === null) return undefined;
  let key = stepKeys.get(messages);
  if (key === undefined) {
    key = `ai-step:${stepSeq++}`;
    stepKeys.set(messages, key);
  }
  return key;
}

/** A user message's text parts (images and files are left out: costly, and text tells turns apart). */
function messageText(m: object): string {
  const content = (m as { content?: unknown }).content;
  const parts = Array.isArray(content) ? content : [content];
  return parts.map((p: unknown) => (typeof p === 'string' ? p : typeof p === 'object' && p !== null && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('\n');
}

/** Hash of a user message's text, per message object (a conversation's text is hashed once, not on every tool call). */
function messageHash(m: object): number {
  let h = messageHashes.get(m);
  if (h === undefined) {
    h = hashString(messageText(m));
    messageHashes.set(m, h);
  }
  return h;
}

/**
 * Which user turn the conversation is in: the count of user messages and the last one's text.
 * Within a run the SDK hands every step the same history; a new user message changes both. A
 * chat server that rebuilds message objects on every request (client-side tool results) keeps
 * the same marker, so that is not taken for a new turn.
 */
function turnMarker(messages: readonly unknown[] | undefined): string | undefined {
  if (!Array.isArray(messages)) return undefined;
  let users = 0;
  let last: object | undefined;
  for (const m of messages as unknown[]) {
    if (typeof m === 'object' && m !== null && (m as { role?: unknown }).role === 'user') {
      users++;
      last = m;
    }
  }
  return last ? `${users}:${messageHash(last)}` : undefined;
}

function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

function isAsyncGeneratorFunction(f: Execute): boolean {
  return Object.prototype.toString.call(f) === '[object AsyncGeneratorFunction]';
}

/**
 * Guards an AI SDK `tools` object: each tool's `execute` is checked before it runs and its
 * outcome recorded after. A hint is returned as the tool's result (the model reads it in its next
 * step); an abort throws `ToolLoopError`, which the SDK turns into a tool error, and aborts
 * `guard.signal`, which ends `generateText` / `streamText` when it was passed as `abortSignal`.
 * Tools without `execute` (client-side tools) and every other property pass through unchanged; a
 * tool's own `toModelOutput` is shown the hint as text, never handed the hint object.
 */
export function guardAiSdkTools<T extends object, H>(guard: CallGuard<H>, tools: T, options: WrapToolsOptions = {}): T {
  const out: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute: unknown = typeof tool === 'object' && tool !== null ? (tool as { execute?: unknown }).execute : undefined;
    const wrappable = typeof execute === 'function' && guardedBy.get(execute) !== guard;
    out[name] = wrappable ? wrapTool(guard, name, tool as object, options) : tool;
  }
  return out as T;
}

function wrapTool<H>(guard: CallGuard<H>, name: string, tool: object, options: WrapToolsOptions): object {
  const original = (tool as { execute: Execute }).execute.bind(tool);
  const begin = (input: unknown, execOptions: ExecutionOptionsLike | undefined): ReturnType<CallGuard<H>['check']> => {
    if (options.newTurn !== 'manual') noteTurn(guard, execOptions?.messages);
    try {
      const batch = stepKey(execOptions?.messages);
      return guard.check(name, input, batch !== undefined ? { batch } : {});
    } catch (e) {
      if (e instanceof ToolLoopError) warnIfUnwired(guard, execOptions?.abortSignal);
      throw e;
    }
  };
  const signals = (execOptions: ExecutionOptionsLike | undefined): Array<AbortSignal | undefined> => [execOptions?.abortSignal, guard.signal];

  const execute: Execute = isAsyncGeneratorFunction((tool as { execute: Execute }).execute)
    ? async function* guardedStream(input, execOptions) {
        const call = begin(input, execOptions);
        if (call.action === 'hint') {
          yield call.hint;
          return;
        }
        await delay(call, signals(execOptions));
        let stream: unknown;
        try {
          stream = original(input, execOptions);
        } catch (e) {
          call.failed(e);
          throw e;
        }
        yield* streamAndRecord(call, stream);
      }
    : (input, execOptions) => {
        let call: ReturnType<typeof begin>;
        try {
          call = begin(input, execOptions);
        } catch (e) {
          return Promise.reject(e as Error);
        }
        if (call.action === 'hint') return Promise.resolve(call.hint);
        if (call.delayMs > 0) {
          const proceeding = call;
          return delay(proceeding, signals(execOptions)).then(() => settle(proceeding, () => original(input, execOptions), true));
        }
        return settle(call, () => original(input, execOptions), false);
      };

  guardedBy.set(execute, guard);
  const wrapped: Record<string, unknown> = { ...tool, execute };
  const toModelOutput = (tool as { toModelOutput?: unknown }).toModelOutput;
  if (typeof toModelOutput === 'function') {
    const own = (toModelOutput as ToModelOutput).bind(tool);
    wrapped.toModelOutput = (o: { toolCallId: string; input: unknown; output: unknown }) =>
      isLoopHint(o.output) ? { type: 'text', value: o.output.message } : own(o);
  }
  return wrapped;
}

async function delay(call: ProceedingCall, signals: Array<AbortSignal | undefined>): Promise<void> {
  if (call.delayMs <= 0) return;
  try {
    await sleep(call.delayMs, signals);
  } catch (reason) {
    call.cancelled();
    throw reason;
  }
}

/**
 * Runs a non-streaming execute and records its outcome. Without a delay the tool is called
 * synchronously, so a tool that returns a stream is still returned as one; after a delay the
 * shape is already a promise, so an unexpected stream is drained to its last value (its final result).
 */
function settle(call: ProceedingCall, run: () => unknown, drainStreams: boolean): unknown {
  let result: unknown;
  try {
    result = run();
  } catch (e) {
    call.failed(e);
    throw e;
  }
  if (isAsyncIterable(result)) {
    if (!drainStreams) return streamAndRecord(call, result);
    return (async () => {
      let last: unknown;
      for await (const part of streamAndRecord(call, result)) last = part;
      return last;
    })();
  }
  return Promise.resolve(result).then(
    (value) => {
      call.succeeded(value);
      return value;
    },
    (error: unknown) => {
      call.failed(error);
      throw error;
    },
  );
}

async function* streamAndRecord(call: ProceedingCall, stream: unknown): AsyncGenerator<unknown> {
  let last: unknown;
  try {
    if (!isAsyncIterable(stream)) {
      last = await stream;
      yield last;
    } else {
      for await (const part of stream) {
        last = part;
        yield part;
      }
    }
    call.succeeded(last);
  } catch (e) {
    call.failed(e);
    throw e;
  } finally {
    call.cancelled(); // a consumer that stopped early: no outcome to record (a no-op once settled)
  }
}

function noteTurn(guard: CallGuard<unknown>, messages: readonly unknown[] | undefined): void {
  let said: string[];
  try {
    const marker = turnMarker(messages);
    if (marker === undefined || turnMarkers.get(guard) === marker) return;
    turnMarkers.set(guard, marker);
    said = userTexts(messages ?? []);
  } catch {
    return; // unreadable messages: no turn information, the guard keeps its state
  }
  for (const text of said) guard.userMessage(text);
}

/** The text of the newest user messages, oldest first (at most `MAX_USER_MESSAGES_READ`). */
function userTexts(messages: readonly unknown[]): string[] {
  const out: string[] = [];
  for (let i = messages.length - 1; i >= 0 && out.length < MAX_USER_MESSAGES_READ; i--) {
    const m = messages[i];
    if (typeof m === 'object' && m !== null && (m as { role?: unknown }).role === 'user') out.push(messageText(m));
  }
  return out.reverse();
}

/**
 * The guard stopped the run, but the SDK's signal did not follow: the loop would go on as tool
 * errors. Checked a moment later, because a span processor sharing the trace aborts its own
 * signal only when the tool span ends, after this execute has returned.
 */
function warnIfUnwired(guard: CallGuard<unknown>, sdkSignal: AbortSignal | undefined): void {
  if (sdkSignal?.aborted || warnedUnwired.has(guard)) return;
  warnedUnwired.add(guard); // one check per guard
  const timer = setTimeout(() => {
    if (sdkSignal?.aborted) return;
    log.warn(
      'the guard stopped a tool loop, but the AI SDK call was not given guard.signal as abortSignal; ' +
        'the SDK reports the ToolLoopError to the model as a tool error and the run goes on (every further tool call is refused)',
    );
  }, 0);
  (timer as { unref?: () => void }).unref?.();
}
