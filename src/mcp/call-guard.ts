import type { LoopEngine } from '../detector/engine.js';
import { ToolLoopError } from '../errors.js';
import type { GuardEvent } from '../guard/events.js';
import { refusalText } from '../guard/hint.js';
import type { GuardAction } from '../guard/options.js';
import type { ProceedingCall } from '../guard/calls.js';
import { isCallToolResult, type ToolAnnotations } from '../guard/tool-result.js';
import { errorText } from '../otel/diag.js';
import {
  asNotification,
  asRequest,
  asResponse,
  asToolCall,
  idKey,
  isObject,
  METHOD_CANCELLED,
  METHOD_INITIALIZE,
  METHOD_TOOLS_LIST,
  toolErrorResponse,
  type JsonRpcId,
  type ToolCallRequest,
} from './messages.js';
import { resultForEngine } from './engine-result.js';
import { DeferredReadings, type Arrival, type Relayed } from './deferred-readings.js';
import { Runs, type Run } from './runs.js';
import { clientTraceId, type McpTelemetry, type McpTransport, type ToolCallSpan } from './telemetry.js';

/** A client connection: stdio has one; Streamable HTTP one per `Mcp-Session-Id`. */
export interface McpSession {
  /** Key of its runs and requests. */
  readonly key: string;
  /** The protocol's session id (`Mcp-Session-Id`), or the proxy's own id of a stdio connection. */
  readonly sessionId: string | undefined;
}

/** What to do with a client's message: relay it, or not (and answer it, when `answer` is set). */
export type ClientVerdict = { readonly relay: true } | { readonly relay: false; readonly answer: string | undefined };

const RELAY: ClientVerdict = { relay: true };
/** Requests awaited at once; past it the oldest is given up (its span ends unanswered). */
const MAX_PENDING = 4096;
/** Ids of calls the proxy answered itself, remembered so that the client's cancellation of one stays here. */
const MAX_ANSWERED = 256;
const MAX_TOOLS = 10_000;

type Pending =
  | { readonly kind: 'call'; readonly call: ProceedingCall; readonly span: ToolCallSpan; readonly run: Run }
  | { readonly kind: 'list' }
  | { readonly kind: 'initialize' };

export interface CallGuardOptions {
  readonly engine: LoopEngine;
  readonly action: GuardAction;
  readonly idleGapMs: number;
  readonly telemetry: McpTelemetry;
  readonly transport: McpTransport;
  /** Human lines for stderr (names and counts, never arguments or results). */
  readonly say: (line: string) => void;
  readonly now?: () => number;
}

/**
 * Every `tools/call` through the guard of its run: the guard's hint or refusal is answered here
 * (the call never reaches the server), a call that proceeds is relayed and its response read
 * back into the guard. Also reads what the decisions use: `tools/list` annotations, the
 * negotiated protocol version, cancellations. Transport-free: the relays hand it parsed
 * messages and relay or answer as it says.
 */
export class McpCallGuard {
  readonly runs: Runs;
  private readonly pending = new Map<string, Pending>();
  private readonly answered = new Set<string>();
  private readonly annotations = new Map<string, ToolAnnotations>();
  /** The protocol version the server agreed to last (one server behind the proxy). */
  private protocolVersion: string | undefined;
  /** The span of the call whose decision is being taken: the guard reports decisions synchronously. */
  private current: ToolCallSpan | undefined;
  /** Server messages relayed and not read yet: read before anything else the guard is told. */
  private readonly later: DeferredReadings<McpSession>;
  /** While one is read: when it arrived (the guard's clock, and `performance.now()` for its span). */
  private arrived: Arrival | undefined;
  private readonly clock: () => number;

  constructor(private readonly options: CallGuardOptions) {
    this.clock = options.now ?? Date.now;
    this.runs = new Runs({
      engine: options.engine,
      action: options.action,
      idleGapMs: options.idleGapMs,
      onDecision: (event, run) => this.decided(event, run),
      // a result read after its relay is the call's end as it arrived, so decisions do not depend on when it is read
      now: () => this.arrived?.at ?? this.clock(),
    });
    this.later = new DeferredReadings<McpSession>((session, msg, arrival) => this.read(session, msg, arrival), this.clock, (e) => this.internalError(e));
  }

  /** Can the guard answer a call itself? Not in observe mode: every message is relayed, and may be before it is judged. */
  get mayAnswer(): boolean {
    return this.options.engine.config.mode === 'enforce';
  }

  /** Requests are awaited: the server's messages must be read (otherwise they are relayed unread). */
  get waiting(): boolean {
    return this.pending.size > 0;
  }

  /** Is a response with this id awaited in this session? (Else it is relayed unread.) */
  awaits(session: McpSession, id: JsonRpcId): boolean {
    return this.pending.has(pendingKey(session, id));
  }

  /**
   * A server message the caller is relaying, to be read once its relay is written (`parse` gives
   * it parsed, or undefined when it is not JSON; `bytes`: its size, for the bound on what waits):
   * the caller calls what this returns when its last bytes are written, and the message is read
   * soon after (see DeferredReadings), or before the next thing the guard is told, whichever
   * comes first, so that every decision reads the same history as if it had been read at once.
   */
  readLater(session: McpSession, parse: () => unknown, bytes: number): Relayed {
    return this.later.add(session, parse, bytes);
  }

  /** Reads every server message waiting (`readLater`): before the proxy stops, for instance. */
  readPending(): void {
    this.later.drain();
  }

  /** A message from the client (parsed; a batch's elements one by one: see batch.ts); the caller relays it or answers it as told. */
  fromClient(session: McpSession, msg: unknown): ClientVerdict {
    this.later.drain();
    const request = asRequest(msg);
    if (request) {
      const call = asToolCall(request);
      if (call) return this.toolCall(session, call);
      if (request.method === METHOD_TOOLS_LIST) this.await(session, request.id, { kind: 'list' });
      else if (request.method === METHOD_INITIALIZE) this.await(session, request.id, { kind: 'initialize' });
      return RELAY;
    }
    const note = asNotification(msg);
    if (note?.method === METHOD_CANCELLED) {
      const requestId = note.params?.requestId;
      if (typeof requestId !== 'string' && typeof requestId !== 'number') return RELAY;
      const key = pendingKey(session, requestId);
      // a call answered here never reached the server: its cancellation stays here too
      if (this.answered.has(key)) return { relay: false, answer: undefined };
      const p = this.pending.get(key);
      if (p?.kind === 'call') {
        this.pending.delete(key);
        p.call.cancelled();
        p.span.end({ kind: 'cancelled' });
      }
    }
    return RELAY;
  }

  /** A message or a batch from the server (parsed): the responses to awaited requests are read; everything is relayed by the caller. */
  fromServer(session: McpSession, msg: unknown): void {
    this.later.drain();
    this.read(session, msg, undefined);
  }

  private read(session: McpSession, msg: unknown, arrived: Arrival | undefined): void {
    if (Array.isArray(msg)) {
      for (const element of msg) this.read(session, element, arrived);
      return;
    }
    const response = asResponse(msg);
    if (!response) return;
    const key = pendingKey(session, response.id);
    const p = this.pending.get(key);
    if (!p) return;
    this.pending.delete(key);
    if (p.kind === 'list') return this.readTools(response.result);
    if (p.kind === 'initialize') {
      const version = isObject(response.result) ? response.result.protocolVersion : undefined;
      if (typeof version === 'string') this.protocolVersion = version;
      return;
    }
    const before = this.arrived;
    this.arrived = arrived;
    try {
      this.within(p.span, () => {
        if (response.error) {
          p.call.failed({ name: 'JsonRpcError', message: response.error.message });
          p.span.end({ kind: 'error', code: response.error.code }, arrived?.perfAt);
        } else {
          const isError = isCallToolResult(response.result) && response.result.isError === true;
          // a failure is read as its text (its class), a result as its fingerprint: only that one is bounded
          p.call.succeeded(isError ? response.result : resultForEngine(response.result));
          p.span.end({ kind: 'result', isError }, arrived?.perfAt);
        }
      });
    } finally {
      this.arrived = before;
    }
  }

  /** A request that will get no response through the proxy (the upstream failed or refused it): a call awaited for it ends unanswered. */
  forget(session: McpSession, id: unknown): void {
    this.later.drain();
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const key = pendingKey(session, id);
    const p = this.pending.get(key);
    if (p) this.giveUp(key, p);
  }

  /** The session's transport closed: its awaited calls end unanswered, its run is forgotten. */
  endSession(session: McpSession): void {
    this.later.drain();
    const prefix = `${session.key}\u0000`;
    for (const [key, p] of this.pending) {
      if (!key.startsWith(prefix)) continue;
      this.pending.delete(key);
      if (p.kind === 'call') {
        p.call.cancelled();
        p.span.end({ kind: 'unanswered' });
      }
    }
    this.runs.endSession(session.key);
  }

  private toolCall(session: McpSession, call: ToolCallRequest): ClientVerdict {
    const run = this.runs.runOf(session.key, clientTraceId(call.meta));
    const span = this.options.telemetry.startToolCall({
      toolName: call.name,
      requestId: call.id,
      sessionId: session.sessionId,
      transport: this.options.transport,
      protocolVersion: this.protocolVersion,
      meta: call.meta,
    });
    const annotations = this.annotations.get(call.name);
    let checked;
    try {
      checked = this.within(span, () => run.guard.check(call.name, call.arguments, annotations ? { annotations } : {}));
    } catch (e) {
      if (!(e instanceof ToolLoopError)) throw e;
      span.end({ kind: 'answered', action: 'blocked' });
      return this.answer(session, call.id, refusalText(e.detection));
    }
    if (checked.action === 'hint') {
      span.end({ kind: 'answered', action: 'hinted' });
      return this.answer(session, call.id, checked.hint.message);
    }
    this.await(session, call.id, { kind: 'call', call: checked, span, run });
    return RELAY;
  }

  private answer(session: McpSession, id: JsonRpcId, text: string): ClientVerdict {
    const key = pendingKey(session, id);
    if (this.answered.size >= MAX_ANSWERED) this.answered.delete(this.answered.values().next().value as string);
    this.answered.add(key);
    return { relay: false, answer: toolErrorResponse(id, text) };
  }

  private await(session: McpSession, id: JsonRpcId, p: Pending): void {
    const key = pendingKey(session, id);
    const earlier = this.pending.get(key);
    // A client reusing the id of a request still awaited: the earlier one will get no answer of its own.
    if (earlier?.kind === 'call') this.giveUp(key, earlier);
    if (this.pending.size >= MAX_PENDING) {
      const oldest = this.pending.entries().next();
      if (!oldest.done) this.giveUp(oldest.value[0], oldest.value[1]);
    }
    this.pending.set(key, p);
  }

  private giveUp(key: string, p: Pending): void {
    this.pending.delete(key);
    if (p.kind !== 'call') return;
    p.call.cancelled();
    p.span.end({ kind: 'unanswered' });
  }

  private readTools(result: unknown): void {
    const tools = isObject(result) ? result.tools : undefined;
    if (!Array.isArray(tools)) return;
    for (const tool of tools) {
      if (!isObject(tool) || typeof tool.name !== 'string') continue;
      const a = isObject(tool.annotations) ? tool.annotations : undefined;
      const declared: { -readonly [K in keyof ToolAnnotations]: ToolAnnotations[K] } = {};
      if (typeof a?.readOnlyHint === 'boolean') declared.readOnlyHint = a.readOnlyHint;
      if (typeof a?.destructiveHint === 'boolean') declared.destructiveHint = a.destructiveHint;
      if (typeof a?.idempotentHint === 'boolean') declared.idempotentHint = a.idempotentHint;
      if (Object.keys(declared).length === 0) {
        this.annotations.delete(tool.name);
        continue;
      }
      if (this.annotations.size >= MAX_TOOLS && !this.annotations.has(tool.name)) continue;
      this.annotations.set(tool.name, declared);
    }
  }

  /** Runs `fn` with `span` as the one the guard's decisions go to. */
  private within<T>(span: ToolCallSpan, fn: () => T): T {
    const before = this.current;
    this.current = span;
    try {
      return fn();
    } finally {
      this.current = before;
    }
  }

  private decided(event: GuardEvent, run: Run): void {
    try {
      const d = event.detection;
      // a refusal of a loop already stopped is not a new detection: the span says `blocked`, no event
      const action = event.action === 'hinted' || event.action === 'blocked' ? event.action : undefined;
      if (!event.alreadyStopped) this.current?.loopDetected(d, action, this.arrived?.perfAt);
      const verdict = event.wouldBe ? `would be ${event.wouldBe} in enforce mode` : event.action;
      if (!event.alreadyStopped || event.strike > 0) {
        this.options.say(`${verdict}: ${d.kind} ${d.level} on '${d.toolName}' (${run.key}${run.sequence > 0 ? ` #${run.sequence + 1}` : ''}): ${d.message}`);
      }
    } catch (e) {
      this.options.say(`could not record a decision: ${errorText(e)}`);
    }
  }

  private internalError(e: unknown): void {
    this.options.say(`internal error while reading a server message (relayed): ${errorText(e)}`);
  }
}

function pendingKey(session: McpSession, id: JsonRpcId): string {
  return `${session.key}\u0000${idKey(id)}`;
}
