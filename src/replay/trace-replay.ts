import { findToolAdapter, readAgentName, readPromptName } from '../conventions/index.js';
import type { ConventionAdapter } from '../conventions/types.js';
import type { PriceTable } from '../cost/prices.js';
import type { LoopEngine } from '../detector/engine.js';
import { buildToolCall } from '../detector/tool-call.js';
import { evaluateTrace } from './evaluate-trace.js';
import { RecencyList } from './recency.js';
import { modelCallOf } from './replay-cost.js';
import { RetainedTraces } from './retained-traces.js';
import { PendingTrace, STATE_BYTES } from './trace-state.js';
import type { CompletionReason, ReplayedTrace, ReplaySpan } from './types.js';
import { userInputOf } from './user-inputs.js';

export interface ReplayOptions<P = unknown> {
  readonly engine: LoopEngine;
  readonly adapters: readonly ConventionAdapter[];
  readonly onTrace: (trace: ReplayedTrace<P>, reason: CompletionReason) => void;
  /** Open traces kept before the oldest is evaluated early (bounded memory on endless input). */
  readonly maxOpenTraces?: number;
  /** A trace whose root has arrived is evaluated after this many spans of other traces (default 20 000). */
  readonly lingerSpans?: number;
  /** Spans held (with their payloads) before the least recently active trace is evaluated early. */
  readonly maxHeldSpans?: number;
  /** Bytes a payload holds in memory (serve: its span's estimated size); enables the byte bounds below. */
  readonly weigh?: (payload: P) => number;
  /** Bytes held by open traces (payloads and state) before the least recently active one is evaluated early. */
  readonly maxHeldBytes?: number;
  /** Bytes one open trace may hold: past it, the trace is evaluated as it is (`cut`) and its later spans continue it. */
  readonly maxTraceBytes?: number;
  /** Bytes of remembered traces (see `retainTraces`): the oldest are forgotten first; one larger than half of it is not kept. */
  readonly maxRetainedBytes?: number;
  /**
   * Wall-clock completion (serve) instead of counting spans of other traces (scan): the
   * replayer reads this clock (ms) and `expire` completes traces quiet for long enough.
   */
  readonly clock?: () => number;
  /** With `clock`: a trace whose local root has arrived is complete after this long without a new span. */
  readonly quietAfterRootMs?: number;
  /** With `clock`: any trace is complete after this long without a new span. */
  readonly traceWaitMs?: number;
  /**
   * Completed traces remembered (their calls and span links, not their payloads) so that late
   * spans continue them instead of starting over: the engine then sees the whole history, and
   * what was reported is not reported again. 0 (default) keeps nothing.
   */
  readonly retainTraces?: number;
  /** Prices model calls, so that detections and loop spends carry USD as well as tokens. */
  readonly prices?: PriceTable | undefined;
  readonly onProblem?: (message: string) => void;
}

const SWEEP_EVERY = 1024;

/**
 * Rebuilds what the live processor saw from exported spans. Spans arrive roughly in end order
 * with traces interleaved, but not reliably: a collector's tail sampler regroups a trace and may
 * write its root before some children. So calls are kept per trace until the trace has had its
 * root and then been idle for `lingerSpans` spans of other traces (or the input ends), then
 * numbered by start time, grouped into batches (overlapping calls under one parent) and replayed
 * step by step, each batch complete at its last call: the same input the processor gives the
 * engine, so `scan` reports what the processor would have reported.
 */
export class TraceReplayer<P = undefined> {
  private readonly open = new Map<string, PendingTrace<P>>();
  /** The open traces by last activity: the idle ones are at the old end. */
  private readonly recency = new RecencyList<PendingTrace<P>>();
  private readonly retained: RetainedTraces;
  private readonly maxOpen: number;
  private readonly maxHeld: number;
  private readonly maxHeldBytes: number;
  private readonly maxTraceBytes: number;
  spans = 0;
  toolCalls = 0;
  traces = 0;
  /** Spans ignored because their trace already had a span with the same id. */
  duplicateSpans = 0;
  /** Spans of the traces still open. */
  heldSpans = 0;
  /** Bytes of the open traces: payloads (`weigh`) and state (`STATE_BYTES`); 0 without `weigh`. */
  heldBytes = 0;
  private seq = 0;

  private readonly linger: number;
  private readonly clock: (() => number) | undefined;
  private readonly quietAfterRoot: number;
  private readonly traceWait: number;

  constructor(private readonly options: ReplayOptions<P>) {
    this.maxOpen = options.maxOpenTraces ?? 50_000;
    this.maxHeld = options.maxHeldSpans ?? Number.POSITIVE_INFINITY;
    this.retained = new RetainedTraces(options.retainTraces ?? 0, options.maxRetainedBytes ?? Number.POSITIVE_INFINITY);
    this.maxHeldBytes = options.maxHeldBytes ?? Number.POSITIVE_INFINITY;
    this.maxTraceBytes = options.maxTraceBytes ?? Number.POSITIVE_INFINITY;
    this.linger = options.lingerSpans ?? 20_000;
    this.clock = options.clock;
    this.traceWait = options.traceWaitMs ?? 30_000;
    this.quietAfterRoot = Math.min(options.quietAfterRootMs ?? 1_000, this.traceWait);
  }

  /** Estimated bytes of the remembered traces. */
  get retainedBytes(): number {
    return this.retained.bytes;
  }

  /** Completed traces not remembered because their state alone was too large (their late spans start over). */
  get forgottenTraces(): number {
    return this.retained.forgotten;
  }

  /** Traces still open. */
  get openTraces(): number {
    return this.open.size;
  }

  add(span: ReplaySpan, payload?: P): void {
    this.spans++;
    this.heldSpans++;
    let trace = this.open.get(span.traceId);
    if (!trace) {
      trace = new PendingTrace<P>(span.traceId);
      this.open.set(span.traceId, trace);
      const before = this.retained.take(span.traceId);
      if (before) trace.continueFrom(before);
      trace.stateBytes += STATE_BYTES.trace;
      this.heldBytes += trace.stateBytes;
    }
    this.recency.touch(trace);
    trace.lastActivity = this.spans;
    trace.spanCount++;
    if (this.clock) trace.lastTime = this.clock();
    if (payload !== undefined) {
      trace.payloads.push(payload);
      const bytes = this.options.weigh?.(payload) ?? 0;
      trace.payloadBytes += bytes;
      this.heldBytes += bytes;
    }
    if (this.open.size > this.maxOpen) {
      const oldest = this.recency.oldest;
      if (oldest) this.complete(oldest, 'bound');
    }
    while (this.heldSpans > this.maxHeld && this.open.size > 1) {
      const oldest = this.recency.oldest;
      if (!oldest || oldest === trace) break;
      this.complete(oldest, 'bound');
    }
    if (!this.clock && this.spans % SWEEP_EVERY === 0) this.sweep();
    // The same span again (an export retried, a batch read twice): its call must not count twice,
    // or honest runs turn into loops. Known ids are the trace's span links: bounded by the open
    // (and retained) traces, dropped with them. The payload is still kept: the caller sees it all.
    if (trace.links.has(span.spanId)) {
      this.duplicateSpans++;
      this.bound(trace);
      return;
    }
    const adapters = this.options.adapters;
    const prompt = readPromptName(adapters, span);
    const agent = readAgentName(adapters, span);
    trace.links.set(span.spanId, { parentId: span.parentSpanId, prompt, agent });
    this.addState(trace, STATE_BYTES.link);
    if (prompt !== undefined) trace.lastPrompt = prompt;
    if (agent !== undefined) trace.lastAgent = agent;

    const adapter = findToolAdapter(adapters, span);
    const fields = adapter?.readToolCall(span);
    if (fields) {
      this.toolCalls++;
      const call = buildToolCall(
        this.options.engine,
        {
          toolName: fields.toolName,
          ...(fields.arguments !== undefined ? { arguments: fields.arguments } : {}),
          ...(fields.result !== undefined ? { result: fields.result } : {}),
          ...(fields.error ? { error: fields.error } : {}),
          startTime: span.startTime,
          endTime: span.endTime,
          batch: '',
          callIndex: 0,
          spanId: span.spanId,
        },
        this.options.onProblem,
      );
      trace.calls.push({ call, seq: this.seq++, spanId: span.spanId, parentId: span.parentSpanId, start: span.startTime, end: span.endTime, reported: false });
      this.addState(trace, STATE_BYTES.call);
    } else {
      const model = modelCallOf(span, this.seq, this.options.prices);
      if (model !== undefined) {
        this.seq++;
        trace.models.push(model);
        this.addState(trace, STATE_BYTES.model);
      }
      const said = userInputOf(adapters, span, this.seq);
      if (said !== undefined) {
        this.seq++;
        trace.userInputs.push(said);
        // a hash and three numbers: held and remembered like a model call's record
        this.addState(trace, STATE_BYTES.model);
      }
    }
    if (span.parentSpanId === undefined || span.parentIsRemote === true) trace.rootSeen = true;
    this.bound(trace);
  }

  private addState(trace: PendingTrace<P>, bytes: number): void {
    trace.stateBytes += bytes;
    this.heldBytes += bytes;
  }

  /**
   * The byte bounds, after a span was added to `trace`: a trace past its share is evaluated as it
   * is (its later spans continue it), then the least recently active traces make room.
   */
  private bound(trace: PendingTrace<P>): void {
    if (trace.payloadBytes + trace.stateBytes > this.maxTraceBytes) this.complete(trace, 'cut');
    while (this.heldBytes > this.maxHeldBytes) {
      const oldest = this.recency.oldest;
      if (!oldest || (oldest === trace && this.open.size === 1)) break;
      this.complete(oldest, 'bound');
    }
  }

  /** Evaluates traces idle long enough: after their root, or (rootless, e.g. remote parents) after longer. */
  private sweep(): void {
    for (const trace of this.recency.values()) {
      const idle = this.spans - trace.lastActivity;
      if (idle < this.linger) break;
      if (trace.rootSeen || idle >= this.linger * 4) this.complete(trace, 'linger');
    }
  }

  /**
   * With a clock: completes the traces whose local root has arrived and that have been quiet for
   * `quietAfterRootMs`, and any trace quiet for `traceWaitMs`. Returns how many it completed.
   */
  expire(now = this.clock?.() ?? 0): number {
    let done = 0;
    // completing removes the entry being visited, which the list's iteration allows
    for (const trace of this.recency.values()) {
      const quiet = now - trace.lastTime;
      // in order of last activity: every trace after this one has been quiet for less
      if (quiet < this.quietAfterRoot) break;
      if (trace.rootSeen || quiet >= this.traceWait) {
        this.complete(trace, trace.rootSeen ? 'root' : 'quiet');
        done++;
      }
    }
    return done;
  }

  /** Evaluates every trace still open (end of input, or a server shutting down). */
  finish(): void {
    for (const trace of [...this.recency.values()]) this.complete(trace, 'finish');
  }

  private complete(trace: PendingTrace<P>, reason: CompletionReason): void {
    this.open.delete(trace.traceId);
    this.recency.remove(trace);
    this.heldSpans -= trace.spanCount;
    this.heldBytes -= trace.payloadBytes + trace.stateBytes;
    this.traces++;
    const calls = trace.calls;
    const verdict = calls.length > 0 ? evaluateTrace(trace, this.options.engine, this.options.prices) : undefined;
    // a loop, not Math.min(...spread): a spread of 200 000 calls overflows the call stack
    let first = calls.length > 0 ? Number.POSITIVE_INFINITY : Number.NaN;
    for (const c of calls) if (c.start < first) first = c.start;
    if (this.retained.enabled) this.retained.keep(trace, verdict?.loopSpend);
    this.options.onTrace(
      {
        traceId: trace.traceId,
        toolCalls: verdict?.calls.length ?? 0,
        detections: verdict?.detections ?? [],
        detectionTimes: verdict?.detectionTimes ?? [],
        calls: verdict?.calls ?? [],
        promptName: trace.lastPrompt,
        startTime: first,
        payloads: trace.payloads,
        continued: trace.continued,
        loopSpend: verdict?.loopSpend,
        previousLoopSpend: trace.previousLoopSpend,
        loopPrompt: trace.loopPrompt,
      },
      reason,
    );
  }
}
