import { context as apiContext, isValidTraceId, trace, type Context, type Span } from '@opentelemetry/api';
import { DeferredTrace } from '../detector/deferred-trace.js';
import { LoopEngine } from '../detector/engine.js';
import { buildToolCall, type RawToolCall } from '../detector/tool-call.js';
import { userMessageHash } from '../detector/user-message.js';
import type { LoopDetection } from '../detector/types.js';
import { argumentPreview, type ResolvedPreview } from '../otel/argument-preview.js';
import { callContained, log, reportContained } from '../otel/diag.js';
import { LoopLogs } from '../otel/loop-logs.js';
import { LoopMetrics } from '../otel/loop-metrics.js';
import { hasNoParent, type ReadableToolSpan, type SpanProcessorLike, type WritableToolSpan } from '../otel/span-types.js';
import { resolveProcessorOptions, type LoopDetectionSpanProcessorOptions } from './options.js';
import { detectionOutputs, writeDetections, type DetectionOutput } from './outputs.js';
import type { SpanReading } from './span-reading.js';
import { SpendOutputs } from './spend-outputs.js';
import { ToolSpans, type EndedToolCall } from './tool-spans.js';
import { TraceState } from './trace-state.js';
import { TraceStore } from './trace-store.js';
import { hashString } from '../fingerprint/hash.js';

const NONE: readonly LoopDetection[] = [];

/**
 * Finds tool-call loops in the spans an agent already emits and stops them.
 *
 * Register it next to the exporting processor (`spanProcessors: [loops, new BatchSpanProcessor(...)]`).
 * Each span's way is one direction: its start and end are read through the convention adapters
 * (`ToolSpans`), an ending tool span becomes a call the engine judges in its trace, and what the
 * engine finds goes to the outputs (`loop.detected` event, `onLoop`, the abort of the trace's
 * `abortSignal()`). Everything happens in `onEnding`, while the span can still be written. Hooks
 * run inside the instrumented code, so nothing here may throw: every hook is contained and
 * problems go to `diag`.
 */
export class LoopDetectionSpanProcessor implements SpanProcessorLike {
  readonly engine: LoopEngine;
  private readonly traces: TraceStore<TraceState>;
  private readonly spans: ToolSpans;
  private readonly outputs: readonly DetectionOutput[];
  private readonly spend: SpendOutputs;
  private readonly preview: ResolvedPreview | undefined;
  /**
   * The span that started last, its start not looked at yet. Most spans are leaves: nothing else
   * starts or ends between their start and their end, so what their start would do is done at
   * their end, from one reading of their attributes instead of two (a leaf has no children to
   * pass names on to, and its place among the trace's starts is the same). Any other hook, and
   * `abortSignal`, first looks at it as its start would have (`lookAtUnseenStart`). Until the SDK is
   * seen to call `onEnding` (2.3 and later), spans are looked at when they start.
   * (bench/NOTES.md, single-tool mix)
   */
  private unseenStart: WritableToolSpan | undefined;
  private unseenStartContext: Context | undefined;
  /**
   * The span the last `onStart` / `onEnding` / `onEnd` was about. A processor registered twice (the
   * same instance listed twice, or added again) is called twice in a row for the same span: the
   * second call is skipped, or every call would count twice.
   */
  private lastStarted: WritableToolSpan | undefined;
  private lastEnding: WritableToolSpan | undefined;
  private lastEnded: ReadableToolSpan | undefined;
  /** The SDK calls `onEnding`; until it does, `onEnd` looks at ending spans itself. */
  private endingSupported = false;
  private isShutdown = false;
  /** Content that could not be fingerprinted: always worth a warning. */
  private readonly reportProblem = (message: string): void => log.warn(message);
  /**
   * Content fingerprinted on less than all of it (caps, cycles, not JSON): a warning the first
   * time for each tool and kind, then debug, so that a tool whose output is never JSON does not
   * flood the log.
   */
  private readonly reportNote = (message: string, note: number): void => {
    // the hash of the message, not the message: it names the tool, and a tool name can be long
    const key = hashString(message, note);
    if (this.noted.has(key)) {
      log.debug(message);
      return;
    }
    if (this.noted.size >= 1024) this.noted.clear();
    this.noted.add(key);
    log.warn(message);
  };
  private readonly noted = new Set<number>();

  constructor(options: LoopDetectionSpanProcessorOptions = {}) {
    const o = resolveProcessorOptions(options);
    this.engine = new LoopEngine(o.config);
    this.traces = new TraceStore({ maxTraces: o.maxTraces, idleMs: o.traceIdleMs });
    // A user-supplied provider that throws when asked for a meter or logger turns that feature off, never the processor.
    const { meterProvider, loggerProvider } = o;
    const metrics = meterProvider && callContained('the meterProvider option', () => new LoopMetrics(meterProvider, '', this.reportProblem), undefined);
    const logs = loggerProvider && callContained('the loggerProvider option', () => new LoopLogs(loggerProvider, '', this.reportProblem), undefined);
    this.spend = new SpendOutputs({ prices: o.config.prices, historySize: this.engine.config.historySize, metrics, onTraceEnd: o.onTraceEnd });
    this.spans = new ToolSpans(this.traces, { ...o, onToolCall: metrics ? (tool, prompt) => metrics.recordToolCall(tool, prompt) : undefined });
    this.outputs = detectionOutputs({ onLoop: o.onLoop, onAbort: o.onAbort, metrics, logs, langfuseObservations: o.langfuseObservations });
    this.preview = o.preview;
  }

  /** Traces currently tracked (for tests and monitoring). */
  get trackedTraces(): number {
    this.lookAtUnseenStartContained();
    return this.traces.size;
  }

  /**
   * A signal aborted with a `ToolLoopError` when a critical loop is detected in the trace of
   * `target` (a span, a context or a trace id; default: the active context). Pass it to the
   * agent's model calls. Without a trace to bind to, the signal never aborts and `diag` says why.
   */
  abortSignal(target?: Span | Context | string): AbortSignal {
    // After shutdown nothing is tracked any more: a signal that never aborts, and no new state.
    if (this.isShutdown) return new AbortController().signal;
    this.lookAtUnseenStartContained();
    try {
      const traceId = traceIdOf(target);
      if (traceId === undefined) {
        log.warn('abortSignal() found no active trace; call it inside the agent span or pass a span, context or trace id');
        return new AbortController().signal;
      }
      return this.traces.getOrCreate(traceId, () => new TraceState()).signal();
    } catch (e) {
      reportContained('abortSignal', e);
      return new AbortController().signal;
    }
  }

  onStart(span: WritableToolSpan, parentContext: Context): void {
    if (this.isShutdown || span === this.lastStarted) return;
    this.lastStarted = span;
    try {
      this.lookAtUnseenStart();
      this.unseenStart = span;
      this.unseenStartContext = parentContext;
      // Without onEnding (SDK < 2.3) a span is read-only by the time it ends: its start can't wait,
      // and its parent is remembered in case it becomes a tool call only at its end.
      if (!this.endingSupported) {
        this.spans.rememberParent(span, parentContext);
        this.lookAtUnseenStart();
      }
    } catch (e) {
      reportContained('onStart', e);
    }
  }

  /**
   * Everything about an ending span is done here, while it can still be written. Keys that
   * processors registered after this one add in their own `onEnding` are not read; Traceloop,
   * which rewrites the AI SDK's spans in its `onEnd`, is read before it does, in the keys the
   * adapters know.
   */
  onEnding(span: WritableToolSpan): void {
    this.endingSupported = true;
    if (this.isShutdown || span === this.lastEnding) return;
    this.lastEnding = span;
    try {
      if (this.unseenStart === span) {
        this.leafEnding(span);
        return;
      }
      this.lookAtUnseenStart();
      const reading = this.spans.read(span);
      const ended = this.spans.ended(span, reading, undefined);
      if (ended !== undefined) this.spans.annotate(span, ended);
      this.spanEnded(span, reading, ended);
    } catch (e) {
      reportContained('onEnding', e);
    }
  }

  /** Without onEnding (SDK < 2.3), spans are looked at here, read-only: the event goes on the open parent. */
  onEnd(span: ReadableToolSpan): void {
    if (this.endingSupported || this.isShutdown || span === this.lastEnded) return;
    this.lastEnded = span;
    try {
      this.lookAtUnseenStart();
      const reading = this.spans.read(span);
      this.spanEnded(span, reading, this.spans.ended(span, reading, undefined));
    } catch (e) {
      reportContained('onEnd', e);
    }
  }

  /** A leaf ends (see `unseenStart`): its start is looked at now, from the same reading as its end. */
  private leafEnding(span: WritableToolSpan): void {
    const parentContext = this.unseenStartContext;
    this.unseenStart = this.unseenStartContext = undefined;
    const reading = this.spans.read(span);
    if (reading === undefined) {
      // Most spans. In a trace loopwatch tracks it may be a model call, whose usage is what loops
      // cost. With no parent at all, nothing can be tracked for its trace: a signal asked for
      // during the span would have made it no leaf (`lookAtUnseenStartContained`).
      if (hasNoParent(span)) return;
      const state = this.traces.peek(span.spanContext().traceId);
      if (state === undefined) return;
      this.otherSpanEnded(span, state);
      const trace = this.spans.unclaimedLeafEnded(span);
      if (trace !== undefined) this.traceEnded(trace, span);
      return;
    }
    const ended = this.spans.ended(span, reading, this.spans.startedLeaf(span, parentContext, reading));
    if (ended !== undefined) this.spans.annotate(span, ended);
    this.spanEnded(span, reading, ended);
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    this.isShutdown = true;
    this.unseenStart = this.unseenStartContext = undefined;
    this.lastStarted = this.lastEnding = this.lastEnded = undefined;
    this.traces.clear();
    return Promise.resolve();
  }

  /**
   * A span ended: its tool call (if it is one) judged and what was found written out, or, for
   * another span, its model spend kept; then its trace told, and summed up if it ended with it.
   * Detections and the summary go on the span while it can be written: in `onEnding`, which is
   * where every span ends once the SDK has it; `onEnd` only looks at spans on SDKs without it.
   */
  private spanEnded(span: ReadableToolSpan, reading: SpanReading | undefined, ended: EndedToolCall | undefined): void {
    const writable = this.endingSupported ? (span as WritableToolSpan) : undefined;
    if (ended !== undefined) {
      const found = this.detect(ended);
      if (found.length > 0) writeDetections(this.outputs, found, { ...ended, span: writable });
    } else {
      const state = this.traces.peek(span.spanContext().traceId);
      if (state !== undefined) this.otherSpanEnded(span, state);
    }
    const trace = this.spans.spanEnded(span, reading, ended !== undefined);
    if (trace !== undefined) this.traceEnded(trace, writable);
  }

  /** A tracked trace's local root ended (the trace is no longer tracked): what its loops cost. */
  private traceEnded(trace: TraceState, root: WritableToolSpan | undefined): void {
    callContained('the end of a trace', () => this.spend.traceEnded(trace, root), undefined);
  }

  /**
   * A span of a tracked trace that is no tool call ended: a model call's usage is what loops cost,
   * and what the user said in its input (a re-check they asked for) is heard by the trace's engine
   * before the calls the model asks for next.
   */
  private otherSpanEnded(span: ReadableToolSpan, state: TraceState): void {
    if (this.spans.mayReportUsage(span)) this.spend.spanEnded(span, state);
    const said = this.spans.userMessages(span);
    if (said === undefined) return;
    for (const text of said) {
      const content = userMessageHash(text);
      if (content === undefined) continue;
      if (state.detector !== undefined) {
        state.detector.userMessage(content);
        continue;
      }
      const waiting = (state.waiting ??= new DeferredTrace(this.engine, span.spanContext().traceId, this.reportProblem, this.reportNote));
      waiting.userMessage(content);
      if (waiting.made !== undefined) {
        state.detector = waiting.made;
        state.waiting = undefined;
      }
    }
  }

  /** What the engine finds in the call's trace now (or the guard's decision about it). */
  private detect(ended: EndedToolCall): readonly LoopDetection[] {
    const call = ended.call;
    const state = ended.trace;
    if (call === undefined) {
      if (ended.decision === undefined) return NONE;
      state.countDetection(ended.decision);
      return [ended.decision];
    }
    // A call alone in its trace completes nothing unless a rule fires on one call: its content is
    // not even fingerprinted (see `ToolSpans.spanEnded`).
    if (ended.alone && state.detector === undefined && state.waiting === undefined && this.engine.policies.get(call.toolName).minCallThreshold >= 2) return NONE;
    const found = this.record(state, ended, call);
    this.spend.toolCallRecorded(state, call.endTime);
    if (found.length === 0) return found;
    const priced = found.map((d) => this.spend.priced(d, state, call.endTime));
    if (this.preview === undefined || call.arguments === undefined) return priced;
    const preview = argumentPreview(call.arguments, this.preview);
    return preview === undefined ? priced : priced.map((d) => ({ ...d, argumentsPreview: preview }));
  }

  /**
   * The call recorded in its trace: into the trace's detector once it has one, else through the
   * waiting calls (`DeferredTrace`), which are let go once they made the detector.
   */
  private record(state: TraceState, ended: EndedToolCall, raw: RawToolCall): LoopDetection[] {
    const detector = state.detector;
    if (detector !== undefined) return detector.record(buildToolCall(this.engine, raw, this.reportProblem, this.reportNote), ended.batchComplete);
    const waiting = (state.waiting ??= new DeferredTrace(this.engine, ended.traceId, this.reportProblem, this.reportNote));
    const found = waiting.record(raw, ended.batchComplete);
    if (waiting.made !== undefined) {
      state.detector = waiting.made;
      state.waiting = undefined;
    }
    return found;
  }

  /** Looks at the start of the span that started last, as its start would have (see `unseenStart`). */
  private lookAtUnseenStart(): void {
    const span = this.unseenStart;
    if (span === undefined) return;
    const parentContext = this.unseenStartContext;
    this.unseenStart = this.unseenStartContext = undefined;
    this.spans.started(span, parentContext, this.spans.read(span));
  }

  private lookAtUnseenStartContained(): void {
    if (this.unseenStart === undefined || this.isShutdown) return;
    try {
      this.lookAtUnseenStart();
    } catch (e) {
      reportContained('onStart', e);
    }
  }
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

