import { context as apiContext, diag, isValidTraceId, trace, type Context, type MeterProvider, type Span } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  GEN_AI_OPERATION_EXECUTE_TOOL,
} from './conventions/attributes.js';
import { claimingAdapter, defaultAdapters, gateFor, readAgentName, readClaimedCall, readPromptName, type SpanGate } from './conventions/index.js';
import type { ConventionAdapter, SpanView } from './conventions/types.js';
import { readModelUsage } from './conventions/usage.js';
import { PriceTable } from './cost/prices.js';
import { traceLoopSummary, type TraceLoopSummary } from './cost/summary.js';
import { TraceCost, withSpend } from './cost/trace-cost.js';
import { resolveConfig, type LoopwatchConfig } from './detector/config.js';
import { DeferredTrace } from './detector/deferred-trace.js';
import { LoopEngine } from './detector/engine.js';
import type { RawToolCall } from './detector/tool-call.js';
import type { LoopDetection } from './detector/types.js';
import { ToolLoopError } from './errors.js';
import { ATTR_LOOP_ACTION, takeGuardMark } from './guard/span-mark.js';
import { argumentPreview, resolvePreview, type ArgumentPreviewOptions, type ResolvedPreview } from './otel/argument-preview.js';
import { LOOP_EVENT_NAME, LOOP_SUMMARY_EVENT_NAME, loopEventAttributes, loopSummaryAttributes } from './otel/event-attributes.js';
import { LoopLogs, type LoopLoggerProvider } from './otel/loop-logs.js';
import { LoopMetrics } from './otel/loop-metrics.js';
import {
  hrTimeToMs,
  isLocalRoot,
  parentIdOf,
  type ReadableToolSpan,
  type SpanProcessorLike,
  type WritableToolSpan,
} from './otel/span-types.js';
import { SmallMap } from './state/small-map.js';
import { TraceState, type AnnotatableSpan, type OpenToolCall } from './state/trace-state.js';
import { TraceStore } from './state/trace-store.js';

export interface LoopDetectionSpanProcessorOptions extends LoopwatchConfig {
  /** Called for every detection (both levels, both modes). Exceptions and rejections are contained. */
  readonly onLoop?: (detection: LoopDetection) => unknown;
  /**
   * Called when a trace with a detection ends (its local root span ends): what its loops cost
   * (`loop`, `afterDetection`: tokens, model calls, USD with `prices`). Contained like `onLoop`.
   * A trace dropped by `maxTraces` or `traceIdleMs` before its root ends gets no call.
   */
  readonly onTraceEnd?: (summary: TraceLoopSummary) => unknown;
  /** Prompt template name for a tool span whose own attributes carry none (before ancestors). */
  readonly promptName?: (span: ReadableToolSpan) => string | undefined;
  /** Instrumentation dialects to read, in order (default: all built-in adapters). */
  readonly conventions?: readonly ConventionAdapter[];
  /** Also write `gen_ai.operation.name` / `gen_ai.tool.name` on tool spans of other dialects (default true). */
  readonly normalizeToolSpans?: boolean;
  /** Most traces tracked at once (default 10 000); the least recently active is dropped beyond it. */
  readonly maxTraces?: number;
  /** A trace with no tool activity for this long is dropped (default 30 minutes). */
  readonly traceIdleMs?: number;
  /**
   * Off by default. On, `loop.detected` events (`loop.arguments.preview`) and detections
   * (`argumentsPreview`) carry a short preview of the looping call's arguments, with members
   * named like credentials and credential-shaped text redacted, cut at `maxLength` (default 120).
   * Redaction is best effort (see `ArgumentPreviewOptions`).
   */
  readonly argumentPreview?: boolean | ArgumentPreviewOptions;
  /**
   * Records `gen_ai.tool.loop.detections` and `gen_ai.tool.calls` (the contract's labels) through
   * this Metrics API provider: exact, cumulative counters that need no collector. Use either
   * these or the collector's count connector for a given Prometheus, not both.
   */
  readonly meterProvider?: MeterProvider;
  /** Emits each detection as a `loop.detected` log record (event) through this Logs API provider too. */
  readonly loggerProvider?: LoopLoggerProvider;
}


/** "Every adapter": when there is no gate. */
const ALL = -1;

const PROCESSOR_KEYS = new Set(['onLoop', 'onTraceEnd', 'promptName', 'conventions', 'normalizeToolSpans', 'maxTraces', 'traceIdleMs', 'argumentPreview', 'meterProvider', 'loggerProvider']);

/**
 * Finds tool-call loops in the spans an agent already emits and stops them.
 *
 * Register it next to the exporting processor (`spanProcessors: [loops, new BatchSpanProcessor(...)]`).
 * It reads tool spans through convention adapters, runs the engine per trace in `onEnding` (while
 * the span can still be written), adds a `loop.detected` event, calls `onLoop`, and aborts the
 * trace's `abortSignal()` on a critical detection. Hooks run inside the instrumented code, so
 * nothing here may throw: every hook and callback is contained and problems go to `diag`.
 */
export class LoopDetectionSpanProcessor implements SpanProcessorLike {
  readonly engine: LoopEngine;
  private readonly traces: TraceStore<TraceState>;
  private readonly adapters: readonly ConventionAdapter[];
  /** Skips spans no adapter can claim or name; undefined when an adapter must see every span. */
  private readonly gate: SpanGate | undefined;
  /**
   * The span that started last, not looked at yet. Most spans are leaves: nothing else starts or
   * ends between their start and their end, so what their start would do is done at their end,
   * from one test of their attributes instead of two (a leaf has no children to pass names on
   * to, and its place among the trace's starts is the same). Any other hook, and `abortSignal`,
   * first settles it as its start would have. Until the SDK is seen to call `onEnding` (2.3 and
   * later), spans are settled when they start.
   */
  private pendingSpan: WritableToolSpan | undefined;
  private pendingContext: Context | undefined;
  private readonly onLoop: LoopDetectionSpanProcessorOptions['onLoop'];
  private readonly onTraceEnd: LoopDetectionSpanProcessorOptions['onTraceEnd'];
  /** The configuration's `prices`, when it has some. */
  private readonly prices: PriceTable | undefined;
  private readonly promptResolver: LoopDetectionSpanProcessorOptions['promptName'];
  private readonly normalize: boolean;
  private readonly preview: ResolvedPreview | undefined;
  private readonly metrics: LoopMetrics | undefined;
  private readonly logs: LoopLogs | undefined;
  /** Content that could not be fingerprinted: always worth a warning. */
  private readonly reportProblem = (message: string): void => say('warn', message);
  /**
   * Content fingerprinted on less than all of it (caps, cycles, not JSON): a warning the first
   * time for each tool and kind, then debug, so that a tool whose output is never JSON does not
   * flood the log.
   */
  private readonly reportNote = (message: string, note: number): void => {
    const key = `${note}:${message}`;
    if (this.noted.has(key)) {
      say('debug', message);
      return;
    }
    if (this.noted.size >= 1024) this.noted.clear();
    this.noted.add(key);
    say('warn', message);
  };
  private readonly noted = new Set<string>();
  /** The SDK calls `onEnding`; until it does, `onEnd` evaluates tool spans itself. */
  private endingSupported = false;
  private isShutdown = false;

  constructor(options: LoopDetectionSpanProcessorOptions = {}) {
    const config: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(options)) if (!PROCESSOR_KEYS.has(k) && v !== undefined) config[k] = v;
    this.engine = new LoopEngine(resolveConfig(config as LoopwatchConfig));
    this.adapters = options.conventions ?? defaultAdapters;
    this.gate = gateFor(this.adapters);
    this.onLoop = options.onLoop;
    this.onTraceEnd = options.onTraceEnd;
    this.prices = PriceTable.of(options.prices, (model) => say('warn', `no price for model ${model} in the prices option; loops on it are reported in tokens only`));
    this.promptResolver = options.promptName;
    this.normalize = options.normalizeToolSpans ?? true;
    this.preview = resolvePreview(options.argumentPreview);
    this.traces = new TraceStore({ maxTraces: options.maxTraces ?? 10_000, idleMs: options.traceIdleMs ?? 30 * 60_000 });
    this.metrics = options.meterProvider ? this.contained('meterProvider', () => new LoopMetrics(options.meterProvider as MeterProvider, '', this.reportProblem)) : undefined;
    this.logs = options.loggerProvider ? this.contained('loggerProvider', () => new LoopLogs(options.loggerProvider as LoopLoggerProvider, '', this.reportProblem)) : undefined;
  }

  /** A user-supplied provider that throws when asked for a meter or logger turns that feature off, never the processor. */
  private contained<T>(what: string, make: () => T): T | undefined {
    try {
      return make();
    } catch (e) {
      this.problem(`the ${what} option`, e);
      return undefined;
    }
  }

  /** Traces currently tracked (for tests and monitoring). */
  get trackedTraces(): number {
    this.settleContained();
    return this.traces.size;
  }

  /**
   * A signal aborted with a `ToolLoopError` when a critical loop is detected in the trace of
   * `target` (a span, a context or a trace id; default: the active context). Pass it to the
   * agent's model calls. Without a trace to bind to, the signal never aborts and `diag` says why.
   */
  abortSignal(target?: Span | Context | string): AbortSignal {
    this.settleContained();
    try {
      const traceId = traceIdOf(target);
      if (traceId === undefined) {
        say('warn', 'abortSignal() found no active trace; call it inside the agent span or pass a span, context or trace id');
        return new AbortController().signal;
      }
      const state = this.stateOf(traceId);
      if (!state.controller) {
        state.controller = new AbortController();
        if (state.stopped) state.controller.abort(state.stopped);
      }
      return state.controller.signal;
    } catch (e) {
      this.problem('abortSignal', e);
      return new AbortController().signal;
    }
  }

  onStart(span: WritableToolSpan, parentContext: Context): void {
    if (this.isShutdown) return;
    try {
      if (this.pendingSpan !== undefined) this.settle();
      this.pendingSpan = span;
      this.pendingContext = parentContext;
      // Without onEnding (SDK < 2.3) a span is read-only by the time it ends: its start can't wait.
      if (!this.endingSupported) this.settle();
    } catch (e) {
      this.problem('onStart', e);
    }
  }

  /**
   * Everything about an ending span is done here, while it can still be written: its tool call,
   * and what its end means for its trace (`end`). Keys that processors registered after this one
   * add in their own `onEnding` are not read; Traceloop, which rewrites the AI SDK's spans in its
   * `onEnd`, is read before it does, in the keys the adapters know.
   */
  onEnding(span: WritableToolSpan): void {
    this.endingSupported = true;
    if (this.isShutdown) return;
    try {
      // A leaf: nothing started or ended since it started, so what its start would have done is
      // done now, from the same test of its attributes as its end.
      const leaf = this.pendingSpan === span;
      let parentContext: Context | undefined;
      if (leaf) {
        parentContext = this.pendingContext;
        this.pendingSpan = undefined;
        this.pendingContext = undefined;
      } else if (this.pendingSpan !== undefined) this.settle();
      const mask = this.test(span);
      if (leaf && mask === 0) {
        // The common case: a leaf nothing claims or names was never recorded and has nothing to
        // forget, unless it is the local root of a trace tracked for another reason (`abortSignal`).
        // In a trace loopwatch tracks it may be a model call, whose usage is what loops cost.
        const traceId = span.spanContext().traceId;
        const state = this.traces.peek(traceId);
        if (state !== undefined && state.toolRecords > 0) this.noteUsage(span, state);
        if (isLocalRoot(span)) this.traces.delete(traceId);
        return;
      }
      const ending: Ending = { span, mask, claimed: undefined, namesRead: false, prompt: undefined, agent: undefined };
      this.evaluateEnding(ending, leaf, parentContext);
      if (ending.claimed !== true) this.noteUsage(span, this.traces.peek(span.spanContext().traceId));
      this.end(span, ending);
    } catch (e) {
      this.problem('onEnding', e);
    }
  }

  /** Without onEnding (SDK < 2.3), spans are looked at here, read-only (see `end`). */
  onEnd(span: ReadableToolSpan): void {
    if (this.endingSupported || this.isShutdown) return;
    try {
      if (this.pendingSpan !== undefined) this.settle();
      this.end(span);
    } catch (e) {
      this.problem('onEnd', e);
    }
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    this.isShutdown = true;
    this.pendingSpan = undefined;
    this.pendingContext = undefined;
    this.traces.clear();
    return Promise.resolve();
  }

  /** The tool call of a span in `onEnding`, if it is one (`leaf`: see `pendingSpan`). */
  private evaluateEnding(ending: Ending, leaf: boolean, parentContext: Context | undefined): void {
    const { span, mask } = ending;
    if (leaf && this.start(span, parentContext, this.candidates(mask), ending)) return;
    const { traceId, spanId } = span.spanContext();
    const state = this.traces.peek(traceId);
    const open = state?.open?.get(spanId);
    if (state !== undefined && open !== undefined) {
      state.forgetCall(spanId);
      this.evaluate(span, state, ending, open, this.candidates(mask));
      return;
    }
    if (mask === 0) return;
    // Some instrumentations (the Mastra bridge) only mark a span as a tool call at its end.
    const candidates = this.candidates(mask);
    if (claimingAdapter(candidates, span)) this.evaluate(span, state ?? this.stateOf(traceId), ending, undefined, candidates);
    else ending.claimed = false;
  }

  private test(span: ReadableToolSpan): number {
    return this.gate === undefined ? ALL : this.gate.test(span);
  }

  private settleContained(): void {
    if (this.pendingSpan === undefined || this.isShutdown) return;
    try {
      this.settle();
    } catch (e) {
      this.problem('onStart', e);
    }
  }

  /** Looks at the span that started last, as its start would have (see `pendingSpan`). */
  private settle(): void {
    const span = this.pendingSpan;
    const parentContext = this.pendingContext;
    this.pendingSpan = undefined;
    this.pendingContext = undefined;
    if (span === undefined) return;
    const mask = this.test(span);
    if (mask === 0) {
      // The common case: neither a tool call nor named. At most its parent now has a child to
      // pass names on to; that costs a lookup, and only in traces loopwatch tracks.
      const state = this.traces.peek(span.spanContext().traceId);
      if (state !== undefined) this.passOn(state, span, parentContext);
      return;
    }
    this.start(span, parentContext, this.candidates(mask));
  }

  /** The adapters worth asking about a span, from the gate's answer. */
  private candidates(mask: number): readonly ConventionAdapter[] {
    return mask === ALL || this.gate === undefined ? this.adapters : this.gate.adaptersOf(mask);
  }

  private stateOf(traceId: string): TraceState {
    return this.traces.getOrCreate(traceId, () => new TraceState());
  }

  /** The parent of `span` has a child now: if it passes names on, it is recorded (see `TraceState`). */
  private passOn(state: TraceState, span: ReadableToolSpan, parentContext: Context | undefined): void {
    const parentId = parentIdOf(span);
    if (parentId === undefined || state.knows(parentId)) return;
    const parent = parentSpanOf(parentContext, parentId);
    const grandparentId = parent !== undefined ? parentIdOf(parent as unknown as ReadableToolSpan) : undefined;
    state.passOn(parentId, grandparentId);
  }

  /**
   * The start of a span the gate let through (a tool span, or one with names of its own, or
   * both). `leaf`: its ending, when the span is a leaf ending now (see `pendingSpan`); a tool span
   * is then evaluated at once, without being recorded as open, and the answer is true.
   */
  private start(span: WritableToolSpan, parentContext: Context | undefined, candidates: readonly ConventionAdapter[], leaf?: Ending): boolean {
    const tool = claimingAdapter(candidates, span);
    const prompt = readPromptName(candidates, span);
    const agent = readAgentName(candidates, span);
    const { traceId, spanId } = span.spanContext();
    let state = this.traces.peek(traceId);
    if (!state) {
      if (!tool && prompt === undefined && agent === undefined) return false;
      state = this.traces.add(traceId, new TraceState());
    }
    this.passOn(state, span, parentContext);
    const parentId = parentIdOf(span);
    const inherited = state.namesOf(parentId);
    const promptNow = prompt ?? inherited?.prompt;
    const agentNow = agent ?? inherited?.agent;
    if (prompt !== undefined || agent !== undefined) {
      const names = { prompt: promptNow, agent: agentNow };
      state.record(spanId, names);
      state.notice(names);
    } else if (inherited !== undefined) {
      // Only inherited: recorded when a first child starts (`passOn`), most tool spans have none.
      state.notice(inherited);
    }
    if (!tool) return false;
    if (leaf) {
      const batch = state.openBatchOf(parentId);
      const call: OpenToolCall = {
        adapter: tool,
        callIndex: ++state.nextCallIndex,
        batch: batch ?? state.newBatchKey(),
        parentId,
        parent: undefined,
        inherited,
      };
      this.evaluate(span, state, leaf, call, candidates, { complete: batch === undefined, prompt, agent, parentContext });
      return true;
    }

    this.traces.get(traceId);
    (state.open ??= new SmallMap()).set(spanId, {
      adapter: tool,
      callIndex: ++state.nextCallIndex,
      batch: state.joinBatch(parentId),
      parentId,
      parent: parentSpanOf(parentContext, parentId),
      inherited,
    });
    // Set now so that it is exported even on SDKs without onEnding.
    annotatePromptName(span, prompt ?? this.resolvePrompt(span) ?? inherited?.prompt ?? state.lastPrompt);
    return false;
  }

  /**
   * What the end of a span means for its trace. `ending`: from `onEnding`, which has evaluated the
   * span already; without it (SDK < 2.3), the span is evaluated here.
   */
  private end(span: ReadableToolSpan, ending?: Ending): void {
    const { traceId, spanId } = span.spanContext();
    const state = this.traces.peek(traceId);
    if (!state) return;
    const mask = ending !== undefined ? ending.mask : this.test(span);
    const candidates = this.candidates(mask);
    let isTool = false;
    if (ending === undefined) {
      // SDK without onEnding (< 2.3): the span is read-only now. Detect anyway, write the event on
      // the still-open parent span, and still call onLoop and abort.
      const open = state.open?.get(spanId);
      if (open !== undefined) state.forgetCall(spanId);
      if (open !== undefined || mask !== 0) isTool = this.evaluate(span, state, undefined, open, candidates);
      if (!isTool) this.noteUsage(span, state);
    }
    // The local root ends its trace, and nothing of the trace is worth remembering any more; but a
    // tool span that is its own local root (a tool server receiving remote calls) keeps it: the
    // next call of the same agent run arrives as another root.
    if (isLocalRoot(span) && !isTool) {
      const claimed = mask !== 0 && (ending?.claimed ?? claimingAdapter(candidates, span) !== undefined);
      if (!claimed) {
        if (state.firstDetection !== undefined) this.endTrace(state, state.firstDetection, ending?.span);
        this.traces.delete(traceId);
        return;
      }
    }
    if (mask !== 0) {
      const read = ending?.namesRead === true;
      const latePrompt = read ? ending.prompt : readPromptName(candidates, span);
      if (latePrompt !== undefined) state.lastPrompt = latePrompt;
      const lateAgent = read ? ending.agent : readAgentName(candidates, span);
      if (lateAgent !== undefined) state.lastAgent = lateAgent;
    }
    state.forgetSpan(spanId);
  }

  /**
   * Runs the engine on a tool span that is ending; returns whether it was a tool span. `open` is
   * its record from `onStart`; without one, the span is evaluated if an adapter claims it now.
   */
  private evaluate(
    span: ReadableToolSpan,
    state: TraceState,
    ending: Ending | undefined,
    started: OpenToolCall | undefined,
    candidates: readonly ConventionAdapter[],
    leaf?: LeafStart,
  ): boolean {
    const { traceId, spanId } = span.spanContext();
    let open = started;
    let batchComplete = true;
    if (open) {
      batchComplete = leaf ? leaf.complete : state.leaveBatch(open.parentId, open.batch);
    } else {
      // Some instrumentations (the Mastra bridge) only mark a span as a tool call at its end.
      const adapter = claimingAdapter(candidates, span);
      if (!adapter) return false;
      open = {
        adapter,
        callIndex: ++state.nextCallIndex,
        batch: `solo:${spanId}`,
        parentId: parentIdOf(span),
        parent: undefined,
        inherited: undefined,
      };
    }
    this.traces.get(traceId);
    const writable = ending?.span;
    if (ending) ending.claimed = true;
    // (a leaf's adapter was chosen from its attributes as they are now: no need to ask again)
    const fields = leaf ? open.adapter.readToolCall(span) : readClaimedCall(candidates, open.adapter, span);
    if (!fields) return true;

    const ownPrompt = leaf ? leaf.prompt : readPromptName(candidates, span);
    const ownAgent = leaf ? leaf.agent : readAgentName(candidates, span);
    if (ending) {
      ending.namesRead = true;
      ending.prompt = ownPrompt;
      ending.agent = ownAgent;
    }
    let promptName = ownPrompt ?? this.resolvePrompt(span) ?? open.inherited?.prompt;
    let agentName = ownAgent ?? open.inherited?.agent;
    if (promptName === undefined || agentName === undefined) {
      // Some instrumentations (Langfuse, the Mastra bridge) name a span after it started: the
      // parent, still open, is read again now.
      const parentNow = readableParent(open.parent ?? (leaf ? parentSpanOf(leaf.parentContext, open.parentId) : undefined));
      if (parentNow) {
        promptName ??= readPromptName(this.adapters, parentNow);
        agentName ??= readAgentName(this.adapters, parentNow);
      }
    }
    promptName ??= state.lastPrompt;
    agentName ??= state.lastAgent;
    if (writable) this.annotateToolSpan(writable, fields.toolName, promptName);
    this.metrics?.recordToolCall(fields.toolName, promptName);

    // The dispatcher guard answered this call with a hint or refused it: the tool never ran, so
    // the engine must not count it (its "result" is a hint or a ToolLoopError); the guard's
    // decision is the event.
    const guarded = takeGuardMark(span);
    if (guarded) {
      writable?.setAttribute(ATTR_LOOP_ACTION, guarded.action);
      if (!guarded.event) return true;
      const d: LoopDetection = {
        ...guarded.detection,
        traceId,
        spanId,
        callIndex: open.callIndex,
        ...(guarded.detection.promptName === undefined && promptName !== undefined ? { promptName } : {}),
        ...(guarded.detection.agentName === undefined && agentName !== undefined ? { agentName } : {}),
      };
      this.emit(d, state, open, writable, spanId, { [ATTR_LOOP_ACTION]: guarded.action });
      return true;
    }

    // one shape for every call, absent fields undefined
    const raw: RawToolCall = {
      toolName: fields.toolName,
      arguments: fields.arguments,
      result: fields.result,
      error: fields.error,
      startTime: hrTimeToMs(span.startTime),
      endTime: hrTimeToMs(span.endTime),
      batch: open.batch,
      callIndex: open.callIndex,
      spanId,
      promptName,
      agentName,
    };
    const detector = (state.detector ??= new DeferredTrace(this.engine, traceId, this.reportProblem, this.reportNote));
    const found = detector.record(raw, batchComplete);
    const completing = ++state.toolRecords;
    if (found.length === 0) return true;
    const preview = this.preview !== undefined && fields.arguments !== undefined ? argumentPreview(fields.arguments, this.preview) : undefined;
    for (const found1 of found) {
      const d = this.withCost(found1, state, completing, raw.endTime);
      this.emit(preview !== undefined ? { ...d, argumentsPreview: preview } : d, state, open, writable, spanId);
    }
    return true;
  }

  /**
   * `d` with what the model spent asking for its repetitions; the trace's first detection opens
   * its loop bill, which the loop-spend counters follow from then on.
   */
  private withCost(d: LoopDetection, state: TraceState, completing: number, completedAt: number): LoopDetection {
    const cost = (state.cost ??= this.newTraceCost());
    const { spend, opened } = cost.detection(d, completing, completedAt);
    if (opened !== undefined) this.metrics?.recordLoopSpend(opened, (state.firstDetection ?? d).promptName);
    return withSpend(d, spend);
  }

  private newTraceCost(): TraceCost {
    return new TraceCost(this.engine.config.historySize, this.prices !== undefined);
  }

  /**
   * A span of a tracked trace that is not a tool call ended: if it is a model call that reports
   * usage, after the trace's first tool call, it is kept for the detections that may count it, and
   * added to the loop-spend counters once the trace has a loop.
   */
  private noteUsage(span: ReadableToolSpan, state: TraceState | undefined): void {
    if (state === undefined || state.toolRecords === 0) return;
    const u = readModelUsage(span);
    if (u === undefined) return;
    const cost = (state.cost ??= this.newTraceCost());
    const usd = this.prices !== undefined ? this.prices.usd(u) : Number.NaN;
    const delta = cost.modelCall(state.toolRecords, hrTimeToMs(span.startTime), u.input, u.output, usd);
    if (delta !== undefined) this.metrics?.recordLoopSpend(delta, state.firstDetection?.promptName);
  }

  /** The local root of a trace with a detection ended: its `loop.summary` event (when the root can still be written) and `onTraceEnd`. */
  private endTrace(state: TraceState, first: LoopDetection, root: WritableToolSpan | undefined): void {
    const summary = traceLoopSummary(first, state.detections, state.stopped !== undefined, state.cost?.bill());
    root?.addEvent(LOOP_SUMMARY_EVENT_NAME, loopSummaryAttributes(summary));
    if (this.onTraceEnd) this.callback('onTraceEnd', this.onTraceEnd, summary);
  }

  /** Event (on the span, or its open parent on SDKs without onEnding), callback, and the stop on critical. */
  private emit(
    d: LoopDetection,
    state: TraceState,
    open: OpenToolCall,
    writable: WritableToolSpan | undefined,
    spanId: string,
    extra: Record<string, string> = {},
  ): void {
    state.detections++;
    state.firstDetection ??= d;
    if (writable) writable.addEvent(LOOP_EVENT_NAME, loopEventAttributes(d, extra));
    else if (open.parent?.isRecording()) open.parent.addEvent(LOOP_EVENT_NAME, loopEventAttributes(d, { ...extra, 'loop.span_id': spanId }));
    this.metrics?.recordDetection(d);
    this.logs?.emit(d);
    this.notify(d);
    if (d.level === 'critical' && d.mode === 'enforce') this.stop(state, d);
  }

  private annotateToolSpan(span: WritableToolSpan, toolName: string, promptName: string | undefined): void {
    annotatePromptName(span, promptName);
    if (!this.normalize) return;
    // literal keys, read faster (see the gen_ai adapter): this runs on every tool call
    const attrs = span.attributes;
    // One vocabulary downstream: the collector counts tool calls by these two keys whatever the dialect.
    if (attrs['gen_ai.operation.name'] === undefined) span.setAttribute(ATTR_GEN_AI_OPERATION_NAME, GEN_AI_OPERATION_EXECUTE_TOOL);
    if (attrs['gen_ai.tool.name'] === undefined) span.setAttribute(ATTR_GEN_AI_TOOL_NAME, toolName);
  }

  private resolvePrompt(span: ReadableToolSpan): string | undefined {
    if (!this.promptResolver) return undefined;
    try {
      const name = this.promptResolver(span);
      return typeof name === 'string' && name.length > 0 ? name : undefined;
    } catch (e) {
      this.problem('the promptName resolver', e);
      return undefined;
    }
  }

  private notify(d: LoopDetection): void {
    if (this.onLoop) this.callback('onLoop', this.onLoop, d);
  }

  /** A user callback, its exceptions and rejections contained. */
  private callback<T>(name: string, fn: (arg: T) => unknown, arg: T): void {
    try {
      const r = fn(arg);
      if (r && typeof (r as Promise<void>).then === 'function') {
        (r as Promise<void>).then(undefined, (e: unknown) => this.problem(`${name} (async)`, e));
      }
    } catch (e) {
      this.problem(name, e);
    }
  }

  private stop(state: TraceState, d: LoopDetection): void {
    if (state.stopped) return;
    const error = new ToolLoopError(d);
    state.stopped = error;
    try {
      state.controller?.abort(error);
    } catch (e) {
      this.problem('an abort listener', e);
    }
  }

  private problem(where: string, e: unknown): void {
    say('error', `${where} failed and was contained: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** A message to OpenTelemetry's diag logger; a throwing logger must not break the app (or loopwatch) either. */
function say(level: 'error' | 'warn' | 'debug', message: string): void {
  try {
    diag[level](`loopwatch: ${message}`);
  } catch {
    // nothing left to tell it with
  }
}

/** A span in `onEnding` (still writable), and what `evaluate` learnt of it for its `end`. */
interface Ending {
  readonly span: WritableToolSpan;
  /** The gate's answer. */
  readonly mask: number;
  /** Whether an adapter claims it (undefined: not asked). */
  claimed: boolean | undefined;
  /** Its own prompt and agent names, when `evaluate` read them (a tool span). */
  namesRead: boolean;
  prompt: string | undefined;
  agent: string | undefined;
}

/** What `start` learnt of a leaf tool span that it hands to `evaluate` at once. */
interface LeafStart {
  /** Its batch ends with it (no other call of the batch is running). */
  readonly complete: boolean;
  /** Its own names, as read by `start`. */
  readonly prompt: string | undefined;
  readonly agent: string | undefined;
  readonly parentContext: Context | undefined;
}

/** The prompt name on a tool span that has none of its own (a literal key: see the gen_ai adapter). */
function annotatePromptName(span: WritableToolSpan, promptName: string | undefined): void {
  if (promptName !== undefined && span.attributes['gen_ai.prompt.name'] === undefined) span.setAttribute(ATTR_GEN_AI_PROMPT_NAME, promptName);
}

/** The parent span of a span starting in `parentContext`, when that is the span `parentId`. */
function parentSpanOf(parentContext: Context | undefined, parentId: string | undefined): AnnotatableSpan | undefined {
  const parent = parentContext !== undefined ? trace.getSpan(parentContext) : undefined;
  return parent && parent.spanContext().spanId === parentId ? (parent as unknown as AnnotatableSpan) : undefined;
}

/** The open parent as a span view, when it is an SDK span (it has a name and attributes). */
function readableParent(parent: AnnotatableSpan | undefined): SpanView | undefined {
  const p = parent as Partial<SpanView> | undefined;
  return p && typeof p.name === 'string' && typeof p.attributes === 'object' && p.attributes !== null ? (p as SpanView) : undefined;
}

function traceIdOf(target: Span | Context | string | undefined): string | undefined {
  if (typeof target === 'string') return isValidTraceId(target) ? target : undefined;
  const span = target === undefined ? trace.getSpan(apiContext.active()) : isSpan(target) ? target : trace.getSpan(target);
  const id = span?.spanContext().traceId;
  return id !== undefined && isValidTraceId(id) ? id : undefined;
}

function isSpan(x: Span | Context): x is Span {
  return typeof (x as Span).spanContext === 'function';
}
