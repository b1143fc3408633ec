import { findToolAdapter, readAgentName, readPromptName, readUserMessages } from '../conventions/index.js';
import type { ConventionAdapter } from '../conventions/types.js';
import type { LoopEngine } from '../detector/engine.js';
import { buildToolCall } from '../detector/tool-call.js';
import { userMessageHash } from '../detector/user-message.js';
import type { Hash } from '../fingerprint/hash.js';
import type { PriceTable } from '../cost/prices.js';
import type { LoopSpend } from '../cost/trace-cost.js';
import type { TraceDetector } from '../detector/trace-detector.js';
import type { LoopDetection, ToolCall } from '../detector/types.js';
import { replaySequence, START_QUANTUM_MS } from '../sequence/call-sequence.js';
import { TraceSpend } from '../cost/trace-spend.js';
import { RecencyList, type Linked } from './recency.js';
import { ModelCallQueue, modelCallOf, type ModelCallRecord } from './replay-cost.js';
import type { ReplaySpan } from './types.js';

/** A tool call read from a span, waiting for its trace to be complete. */
interface PendingCall {
  readonly call: ToolCall;
  /** Arrival order: exporters receive spans in the order they ended. */
  readonly seq: number;
  readonly spanId: string;
  readonly parentId: string | undefined;
  readonly start: number;
  readonly end: number;
  /** Reported in an earlier completion of the same trace (see `ReplayOptions.retainTraces`). */
  readonly reported: boolean;
}

/**
 * The user messages a span recorded (a model call's input), heard when the span ended, as the
 * live processor hears them: before every call that ends after it.
 */
interface UserInput {
  readonly end: number;
  /** Arrival order, as `PendingCall.seq` (ties of end times). */
  readonly seq: number;
  readonly messages: readonly Hash[];
}

/** Parent and names of every span seen in an open trace: enough to walk up to an ancestor's prompt. */
interface SpanLink {
  readonly parentId: string | undefined;
  readonly prompt: string | undefined;
  readonly agent: string | undefined;
}

/**
 * What the replayer's own state costs in memory, as estimates (bytes of heap per trace, span link,
 * tool call and model call, measured in bench/NOTES.md): with `ReplayOptions.weigh` they bound a
 * trace, the held traces and the remembered ones in bytes, not only their payloads.
 */
export const STATE_BYTES = { trace: 640, link: 160, call: 480, model: 200 } as const;

/** What makes two detections of a trace the same one for reporting: kind, level and fingerprint. */
const detectionKey = (d: LoopDetection): string => `${d.kind} ${d.level} ${d.fingerprint}`;

class PendingTrace<P> implements Linked<PendingTrace<P>> {
  newer: PendingTrace<P> | undefined;
  older: PendingTrace<P> | undefined;
  /** Bytes of the payloads held (`ReplayOptions.weigh`). */
  payloadBytes = 0;
  /** Estimated bytes of the calls, links and model calls (see `STATE_BYTES`). */
  stateBytes = 0;
  calls: PendingCall[] = [];
  /** Model calls with usage (what loops cost). */
  models: ModelCallRecord[] = [];
  /** What the user said, and when (see `UserInput`). */
  userInputs: UserInput[] = [];
  links = new Map<string, SpanLink>();
  /** What the caller handed in with each span (serve: the span itself, to forward). */
  readonly payloads: P[] = [];
  lastPrompt: string | undefined;
  lastAgent: string | undefined;
  rootSeen = false;
  /** Span counter at this trace's latest span. */
  lastActivity = 0;
  /** Clock (ms) at this trace's latest span; only with `ReplayOptions.clock`. */
  lastTime = 0;
  /** Spans added since the trace was opened (or continued). */
  spanCount = 0;
  /** Late spans of a trace completed before (see `ReplayOptions.retainTraces`). */
  continued = false;
  /** The loop spend reported when the trace was completed before. */
  previousLoopSpend: LoopSpend | undefined;
  /** Detections reported when the trace was completed before, by `detectionKey`. */
  reportedDetections: ReadonlyMap<string, number> | undefined;
  /** Prompt template of the first detection, once there is one. */
  loopPrompt: string | undefined;
  hasLoop = false;
  constructor(readonly traceId: string) {}
}

/** What a completed trace leaves behind for its late spans (see `ReplayOptions.retainTraces`). */
interface RetainedTrace extends Linked<RetainedTrace> {
  readonly traceId: string;
  /** Estimated bytes of its calls, links and model calls. */
  readonly stateBytes: number;
  readonly calls: PendingCall[];
  readonly models: ModelCallRecord[];
  readonly userInputs: UserInput[];
  readonly loopSpend: LoopSpend | undefined;
  readonly reportedDetections: ReadonlyMap<string, number> | undefined;
  readonly loopPrompt: string | undefined;
  readonly hasLoop: boolean;
  readonly links: Map<string, SpanLink>;
  readonly lastPrompt: string | undefined;
  readonly lastAgent: string | undefined;
  readonly rootSeen: boolean;
}

/** One tool call of a finished trace: name, order, timing and outcome, never arguments or results. */
export interface ReplayedCall {
  readonly toolName: string;
  /** 1-based, by start time (as `LoopDetection.callIndex`). */
  readonly callIndex: number;
  /** Epoch milliseconds. */
  readonly startTime: number;
  readonly endTime: number;
  readonly ok: boolean;
  readonly spanId: string;
  /** Prompt template name of the call (its own, an ancestor's, or the trace's last), when known. */
  readonly promptName: string | undefined;
}

/** A finished trace and what the engine found in it. */
export interface ReplayedTrace<P = unknown> {
  readonly traceId: string;
  readonly toolCalls: number;
  readonly detections: readonly LoopDetection[];
  /** When each detection happened: the end (epoch ms) of the call that completed it, in `detections` order. */
  readonly detectionTimes: readonly number[];
  /** The trace's tool calls by start time. */
  readonly calls: readonly ReplayedCall[];
  readonly promptName: string | undefined;
  /** Start of the first tool call (epoch ms); NaN without tool calls. */
  readonly startTime: number;
  /** The payloads handed to `add` with this trace's spans, in arrival order. */
  readonly payloads: readonly P[];
  /**
   * What the trace's loops cost (see `LoopSpend`): with a detection and model calls that report
   * usage. For a continued trace, the whole trace's loop spend, not only what is new.
   */
  readonly loopSpend?: LoopSpend | undefined;
  /** For a continued trace: the loop spend reported when it was completed before (what counters have counted already). */
  readonly previousLoopSpend?: LoopSpend | undefined;
  /**
   * Prompt template of the trace's first detection (an earlier completion's, for a continued
   * trace): where its loop spend is counted.
   */
  readonly loopPrompt?: string | undefined;
  /**
   * This trace had been completed before and these are its late spans: `calls`, `toolCalls` and
   * `detections` cover only what is new (the earlier calls still count for the engine).
   */
  readonly continued: boolean;
}

/**
 * Why a trace was completed: it may help to tell a finished trace from one cut by a bound.
 * `bound`: completed early to make room (open traces, held spans or bytes); `cut`: the trace
 * alone outgrew `maxTraceBytes`, and its later spans continue it.
 */
export type CompletionReason = 'root' | 'quiet' | 'linger' | 'bound' | 'cut' | 'finish';

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
  private readonly retained = new Map<string, RetainedTrace>();
  private readonly retainedOrder = new RecencyList<RetainedTrace>();
  private readonly maxOpen: number;
  private readonly maxHeld: number;
  private readonly maxRetained: number;
  private readonly maxHeldBytes: number;
  private readonly maxTraceBytes: number;
  private readonly maxRetainedBytes: number;
  spans = 0;
  toolCalls = 0;
  traces = 0;
  /** Spans ignored because their trace already had a span with the same id. */
  duplicateSpans = 0;
  /** Spans of the traces still open. */
  heldSpans = 0;
  /** Bytes of the open traces: payloads (`weigh`) and state (`STATE_BYTES`); 0 without `weigh`. */
  heldBytes = 0;
  /** Estimated bytes of the remembered traces. */
  retainedBytes = 0;
  /** Completed traces not remembered because their state alone was too large (their late spans start over). */
  forgottenTraces = 0;
  private seq = 0;

  private readonly linger: number;
  private readonly clock: (() => number) | undefined;
  private readonly quietAfterRoot: number;
  private readonly traceWait: number;

  constructor(private readonly options: ReplayOptions<P>) {
    this.maxOpen = options.maxOpenTraces ?? 50_000;
    this.maxHeld = options.maxHeldSpans ?? Number.POSITIVE_INFINITY;
    this.maxRetained = options.retainTraces ?? 0;
    this.maxHeldBytes = options.maxHeldBytes ?? Number.POSITIVE_INFINITY;
    this.maxTraceBytes = options.maxTraceBytes ?? Number.POSITIVE_INFINITY;
    this.maxRetainedBytes = options.maxRetainedBytes ?? Number.POSITIVE_INFINITY;
    this.linger = options.lingerSpans ?? 20_000;
    this.clock = options.clock;
    this.traceWait = options.traceWaitMs ?? 30_000;
    this.quietAfterRoot = Math.min(options.quietAfterRootMs ?? 1_000, this.traceWait);
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
      const before = this.maxRetained > 0 ? this.retained.get(span.traceId) : undefined;
      if (before) {
        this.forget(before);
        trace.stateBytes = before.stateBytes;
        trace.calls = before.calls;
        trace.models = before.models;
        trace.userInputs = before.userInputs;
        trace.links = before.links;
        trace.lastPrompt = before.lastPrompt;
        trace.lastAgent = before.lastAgent;
        trace.rootSeen = before.rootSeen;
        trace.continued = true;
        trace.previousLoopSpend = before.loopSpend;
        trace.reportedDetections = before.reportedDetections;
        trace.loopPrompt = before.loopPrompt;
        trace.hasLoop = before.hasLoop;
      }
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
    const detections: LoopDetection[] = [];
    const detectionTimes: number[] = [];
    let replayed: ReplayedCall[] = [];
    let loopSpend: LoopSpend | undefined;
    if (calls.length > 0) {
      const promptOf = new Map<PendingCall, string | undefined>();
      for (const c of calls) promptOf.set(c, this.resolve(trace, c.spanId, 'prompt') ?? trace.lastPrompt);
      const detector = this.options.engine.createTrace(trace.traceId);
      const spend = new TraceSpend(this.options.engine.config.historySize, this.options.prices !== undefined);
      const models = new ModelCallQueue(trace.models, spend);
      const unreported: ReplayedCall[] = [];
      const reportedBefore = trace.reportedDetections;
      const found = new Map<string, number>();
      const heard = trace.userInputs.length > 0 ? new HeardInputs(trace.userInputs) : undefined;
      replaySequence(calls, (c, place) => {
        // what the user said in a model call that ended first: the engine hears it before the call
        heard?.before(c, detector);
        const prompt = promptOf.get(c);
        const agent = this.resolve(trace, c.spanId, 'agent') ?? trace.lastAgent;
        if (!c.reported) unreported.push({ toolName: c.call.toolName, callIndex: place.callIndex, startTime: c.start, endTime: c.end, ok: c.call.outcome.ok, spanId: c.spanId, promptName: prompt });
        const call: ToolCall = {
          ...c.call,
          batch: place.batch,
          callIndex: place.callIndex,
          ...(prompt !== undefined ? { promptName: prompt } : {}),
          ...(agent !== undefined ? { agentName: agent } : {}),
        };
        models.toolCall(c.end, c.seq);
        for (const d of detector.record(call, place.batchComplete)) {
          const { priced } = spend.detection(d, c.end);
          if (!trace.hasLoop) {
            trace.hasLoop = true;
            trace.loopPrompt = d.promptName;
          }
          // The whole history gives the whole trace's detections; those of each kind, level and
          // fingerprint up to the number reported before were reported then. Matching by call
          // instead loses a detection when late spans are earlier calls: the critical then falls
          // on a call that was reported with a warning.
          const key = detectionKey(d);
          const n = (found.get(key) ?? 0) + 1;
          found.set(key, n);
          if (n <= (reportedBefore?.get(key) ?? 0)) continue;
          detections.push(priced);
          detectionTimes.push(c.end);
        }
      });
      for (const [key, n] of reportedBefore ?? []) if (n > (found.get(key) ?? 0)) found.set(key, n);
      trace.reportedDetections = found.size > 0 ? found : undefined;
      // the trace's calls by start time
      replayed = unreported.sort((a, b) => a.callIndex - b.callIndex);
      models.finish();
      loopSpend = spend.loopSpend();
    }
    // a loop, not Math.min(...spread): a spread of 200 000 calls overflows the call stack
    let first = calls.length > 0 ? Number.POSITIVE_INFINITY : Number.NaN;
    for (const c of calls) if (c.start < first) first = c.start;
    if (this.maxRetained > 0) this.retain(trace, loopSpend);
    this.options.onTrace(
      {
        traceId: trace.traceId,
        toolCalls: replayed.length,
        detections,
        detectionTimes,
        calls: replayed,
        promptName: trace.lastPrompt,
        startTime: first,
        payloads: trace.payloads,
        continued: trace.continued,
        loopSpend,
        previousLoopSpend: trace.previousLoopSpend,
        loopPrompt: trace.loopPrompt,
      },
      reason,
    );
  }

  /** Remembers a completed trace for its late spans: calls marked reported, payloads dropped. */
  private retain(trace: PendingTrace<P>, loopSpend: LoopSpend | undefined): void {
    const stateBytes = trace.stateBytes - STATE_BYTES.trace;
    if (stateBytes + STATE_BYTES.trace > this.maxRetainedBytes / 2) {
      this.forgottenTraces++;
      return;
    }
    const kept: RetainedTrace = {
      newer: undefined,
      older: undefined,
      traceId: trace.traceId,
      stateBytes,
      calls: trace.calls.map((c) => (c.reported ? c : { ...c, reported: true })),
      models: trace.models,
      userInputs: trace.userInputs,
      loopSpend,
      reportedDetections: trace.reportedDetections,
      loopPrompt: trace.loopPrompt,
      hasLoop: trace.hasLoop,
      links: trace.links,
      lastPrompt: trace.lastPrompt,
      lastAgent: trace.lastAgent,
      rootSeen: trace.rootSeen,
    };
    this.retained.set(trace.traceId, kept);
    this.retainedOrder.touch(kept);
    this.retainedBytes += stateBytes + STATE_BYTES.trace;
    while (this.retained.size > this.maxRetained || this.retainedBytes > this.maxRetainedBytes) {
      const oldest = this.retainedOrder.oldest;
      if (!oldest) break;
      this.forget(oldest);
    }
  }

  private forget(kept: RetainedTrace): void {
    this.retained.delete(kept.traceId);
    this.retainedOrder.remove(kept);
    this.retainedBytes -= kept.stateBytes + STATE_BYTES.trace;
  }

  /** The span's own name, else the nearest ancestor's (a bounded walk: links may be cyclic in bad files). */
  private resolve(trace: PendingTrace<P>, spanId: string, kind: 'prompt' | 'agent'): string | undefined {
    let id: string | undefined = spanId;
    for (let hops = 0; id !== undefined && hops < 256; hops++) {
      const link = trace.links.get(id);
      if (!link) return undefined;
      const name = kind === 'prompt' ? link.prompt : link.agent;
      if (name !== undefined) return name;
      id = link.parentId;
    }
    return undefined;
  }
}

/**
 * A trace's user inputs, told to the engine in the order the live processor heard them: it hears a
 * model call's input when the model call ends and records a tool call when it ends, so by end
 * time; within the start quantum (a tool started in the millisecond its model call ended may seem
 * to end first, as may a model call started in the millisecond a tool ended), by arrival, which is
 * the order spans ended in.
 */
class HeardInputs {
  private readonly inputs: UserInput[];
  private readonly told: boolean[];
  /** Every input before it has been told. */
  private next = 0;

  constructor(inputs: readonly UserInput[]) {
    this.inputs = [...inputs].sort((a, b) => a.end - b.end || a.seq - b.seq);
    this.told = new Array<boolean>(this.inputs.length).fill(false);
  }

  /** Tells `detector` every input heard before the call `c` was recorded. */
  before(c: PendingCall, detector: TraceDetector): void {
    const inputs = this.inputs;
    for (let u = inputs[this.next]; u !== undefined && (this.told[this.next] === true || u.end < c.end - START_QUANTUM_MS); u = inputs[++this.next]) {
      if (this.told[this.next] !== true) this.tell(this.next, detector);
    }
    for (let k = this.next; k < inputs.length; k++) {
      const u = inputs[k] as UserInput;
      if (u.end > c.end + START_QUANTUM_MS) break;
      if (this.told[k] !== true && u.seq < c.seq) this.tell(k, detector);
    }
  }

  private tell(k: number, detector: TraceDetector): void {
    this.told[k] = true;
    for (const m of this.inputs[k]?.messages ?? []) detector.userMessage(m);
  }
}

/** The user messages a span records, as the engine hears them; undefined when it records none. */
function userInputOf(adapters: readonly ConventionAdapter[], span: ReplaySpan, seq: number): UserInput | undefined {
  const texts = readUserMessages(adapters, span);
  if (texts === undefined) return undefined;
  const messages: Hash[] = [];
  for (const text of texts) {
    const h = userMessageHash(text);
    if (h !== undefined) messages.push(h);
  }
  return messages.length > 0 ? { end: span.endTime, seq, messages } : undefined;
}

