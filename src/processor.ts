import { context as apiContext, diag, isValidTraceId, trace, type Context, type Span } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  GEN_AI_OPERATION_EXECUTE_TOOL,
} from './conventions/attributes.js';
import { defaultAdapters, findToolAdapter, readAgentName, readPromptName } from './conventions/index.js';
import type { ConventionAdapter, SpanView } from './conventions/types.js';
import { resolveConfig, type LoopwatchConfig } from './detector/config.js';
import { LoopEngine } from './detector/engine.js';
import { buildToolCall } from './detector/tool-call.js';
import type { LoopDetection } from './detector/types.js';
import { ToolLoopError } from './errors.js';
import { ATTR_LOOP_ACTION, takeGuardMark } from './guard/span-mark.js';
import { LOOP_EVENT_NAME, loopEventAttributes } from './otel/event-attributes.js';
import {
  hrTimeToMs,
  isLocalRoot,
  parentIdOf,
  type ReadableToolSpan,
  type SpanProcessorLike,
  type WritableToolSpan,
} from './otel/span-types.js';
import { TraceState, type AnnotatableSpan, type OpenToolCall } from './state/trace-state.js';
import { TraceStore } from './state/trace-store.js';

export interface LoopDetectionSpanProcessorOptions extends LoopwatchConfig {
  /** Called for every detection (both levels, both modes). Exceptions and rejections are contained. */
  readonly onLoop?: (detection: LoopDetection) => unknown;
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
}

const PROCESSOR_KEYS = new Set(['onLoop', 'promptName', 'conventions', 'normalizeToolSpans', 'maxTraces', 'traceIdleMs']);

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
  private readonly onLoop: LoopDetectionSpanProcessorOptions['onLoop'];
  private readonly promptResolver: LoopDetectionSpanProcessorOptions['promptName'];
  private readonly normalize: boolean;
  /** The SDK calls `onEnding`; until it does, `onEnd` evaluates tool spans itself. */
  private endingSupported = false;
  private isShutdown = false;

  constructor(options: LoopDetectionSpanProcessorOptions = {}) {
    const config: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(options)) if (!PROCESSOR_KEYS.has(k) && v !== undefined) config[k] = v;
    this.engine = new LoopEngine(resolveConfig(config as LoopwatchConfig));
    this.adapters = options.conventions ?? defaultAdapters;
    this.onLoop = options.onLoop;
    this.promptResolver = options.promptName;
    this.normalize = options.normalizeToolSpans ?? true;
    this.traces = new TraceStore({ maxTraces: options.maxTraces ?? 10_000, idleMs: options.traceIdleMs ?? 30 * 60_000 });
  }

  /** Traces currently tracked (for tests and monitoring). */
  get trackedTraces(): number {
    return this.traces.size;
  }

  /**
   * A signal aborted with a `ToolLoopError` when a critical loop is detected in the trace of
   * `target` (a span, a context or a trace id; default: the active context). Pass it to the
   * agent's model calls. Without a trace to bind to, the signal never aborts and `diag` says why.
   */
  abortSignal(target?: Span | Context | string): AbortSignal {
    try {
      const traceId = traceIdOf(target);
      if (traceId === undefined) {
        diag.warn('loopwatch: abortSignal() found no active trace; call it inside the agent span or pass a span, context or trace id');
        return new AbortController().signal;
      }
      const state = this.traces.getOrCreate(traceId, () => new TraceState());
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
      this.start(span, parentContext);
    } catch (e) {
      this.problem('onStart', e);
    }
  }

  onEnding(span: WritableToolSpan): void {
    this.endingSupported = true;
    if (this.isShutdown) return;
    try {
      const state = this.traces.peek(span.spanContext().traceId);
      if (state) this.evaluate(span, state, span);
      else if (findToolAdapter(this.adapters, span)) this.evaluate(span, this.stateFor(span), span);
    } catch (e) {
      this.problem('onEnding', e);
    }
  }

  onEnd(span: ReadableToolSpan): void {
    if (this.isShutdown) return;
    try {
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
    this.traces.clear();
    return Promise.resolve();
  }

  private stateFor(span: ReadableToolSpan): TraceState {
    return this.traces.getOrCreate(span.spanContext().traceId, () => new TraceState());
  }

  private start(span: WritableToolSpan, parentContext: Context): void {
    const adapters = this.adapters;
    const tool = findToolAdapter(adapters, span);
    const prompt = readPromptName(adapters, span);
    const agent = readAgentName(adapters, span);
    const { traceId, spanId } = span.spanContext();
    let state = this.traces.peek(traceId);
    if (!state) {
      // The common case for ordinary spans: nothing to remember, a few property reads spent.
      if (!tool && prompt === undefined && agent === undefined) return;
      state = this.traces.getOrCreate(traceId, () => new TraceState());
    }
    const parentId = parentIdOf(span);
    const inheritedPrompt = parentId !== undefined ? state.prompts?.get(parentId) : undefined;
    const inheritedAgent = parentId !== undefined ? state.agents?.get(parentId) : undefined;
    if (prompt !== undefined || inheritedPrompt !== undefined) state.rememberName('prompt', spanId, prompt ?? inheritedPrompt ?? '');
    if (agent !== undefined || inheritedAgent !== undefined) state.rememberName('agent', spanId, agent ?? inheritedAgent ?? '');
    if (!tool) return;

    this.traces.get(traceId);
    const parentSpan = trace.getSpan(parentContext);
    const open: OpenToolCall = {
      adapter: tool,
      callIndex: ++state.nextCallIndex,
      batch: state.joinBatch(parentId),
      parentId,
      parent: parentSpan && parentSpan.spanContext().spanId === parentId ? (parentSpan as unknown as AnnotatableSpan) : undefined,
    };
    state.open.set(spanId, open);
    // Set now so that it is exported even on SDKs without onEnding.
    const promptName = prompt ?? this.resolvePrompt(span) ?? inheritedPrompt ?? state.lastPrompt;
    if (promptName !== undefined && span.attributes[ATTR_GEN_AI_PROMPT_NAME] === undefined) {
      span.setAttribute(ATTR_GEN_AI_PROMPT_NAME, promptName);
    }
  }

  private end(span: ReadableToolSpan): void {
    const { traceId, spanId } = span.spanContext();
    const state = this.traces.peek(traceId);
    if (!state) return;
    let isTool = state.open.has(spanId);
    if (!this.endingSupported) {
      // SDK without onEnding (< 2.3): the span is read-only now. Detect anyway, write the event on
      // the still-open parent span, and still call onLoop and abort.
      isTool = this.evaluate(span, state, undefined) || isTool;
    }
    const latePrompt = readPromptName(this.adapters, span);
    if (latePrompt !== undefined) state.lastPrompt = latePrompt;
    const lateAgent = readAgentName(this.adapters, span);
    if (lateAgent !== undefined) state.lastAgent = lateAgent;
    state.forgetSpan(spanId);
    // A tool span that is its own local root (a tool server receiving remote calls) keeps the
    // trace: the next call of the same agent run arrives as another root.
    if (isLocalRoot(span) && !isTool && !findToolAdapter(this.adapters, span)) this.traces.delete(traceId);
  }

  /** Runs the engine on a tool span that is ending; returns whether it was a tool span. */
  private evaluate(span: ReadableToolSpan, state: TraceState, writable: WritableToolSpan | undefined): boolean {
    const { traceId, spanId } = span.spanContext();
    let open = state.open.get(spanId);
    let batchComplete = true;
    if (open) {
      state.open.delete(spanId);
      batchComplete = state.leaveBatch(open.parentId, open.batch);
    } else {
      // Some instrumentations (the Mastra bridge) only mark a span as a tool call at its end.
      const adapter = findToolAdapter(this.adapters, span);
      if (!adapter) return false;
      open = { adapter, callIndex: ++state.nextCallIndex, batch: `solo:${spanId}`, parentId: parentIdOf(span), parent: undefined };
    }
    this.traces.get(traceId);
    const fields = open.adapter.readToolCall(span);
    if (!fields) return true;

    const parentId = open.parentId;
    // Some instrumentations (Langfuse, the Mastra bridge) name a span after it started: the parent,
    // still open, is read again now.
    const parentNow = readableParent(open.parent);
    const promptName =
      readPromptName(this.adapters, span) ??
      this.resolvePrompt(span) ??
      (parentId !== undefined ? state.prompts?.get(parentId) : undefined) ??
      (parentNow ? readPromptName(this.adapters, parentNow) : undefined) ??
      state.lastPrompt;
    const agentName =
      readAgentName(this.adapters, span) ??
      (parentId !== undefined ? state.agents?.get(parentId) : undefined) ??
      (parentNow ? readAgentName(this.adapters, parentNow) : undefined) ??
      state.lastAgent;
    if (writable) this.annotateToolSpan(writable, fields.toolName, promptName);

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

    const call = buildToolCall(
      this.engine,
      {
        toolName: fields.toolName,
        ...(fields.arguments !== undefined ? { arguments: fields.arguments } : {}),
        ...(fields.result !== undefined ? { result: fields.result } : {}),
        ...(fields.error ? { error: fields.error } : {}),
        startTime: hrTimeToMs(span.startTime),
        endTime: hrTimeToMs(span.endTime),
        batch: open.batch,
        callIndex: open.callIndex,
        spanId,
        ...(promptName !== undefined ? { promptName } : {}),
        ...(agentName !== undefined ? { agentName } : {}),
      },
      (message) => diag.warn(`loopwatch: ${message}`),
    );
    const detector = (state.detector ??= this.engine.createTrace(traceId));
    for (const d of detector.record(call, batchComplete)) this.emit(d, state, open, writable, spanId);
    return true;
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
    if (writable) writable.addEvent(LOOP_EVENT_NAME, loopEventAttributes(d, extra));
    else if (open.parent?.isRecording()) open.parent.addEvent(LOOP_EVENT_NAME, loopEventAttributes(d, { ...extra, 'loop.span_id': spanId }));
    this.notify(d);
    if (d.level === 'critical' && d.mode === 'enforce') this.stop(state, d);
  }

  private annotateToolSpan(span: WritableToolSpan, toolName: string, promptName: string | undefined): void {
    const attrs = span.attributes;
    if (promptName !== undefined && attrs[ATTR_GEN_AI_PROMPT_NAME] === undefined) span.setAttribute(ATTR_GEN_AI_PROMPT_NAME, promptName);
    if (!this.normalize) return;
    // One vocabulary downstream: the collector counts tool calls by these two keys whatever the dialect.
    if (attrs[ATTR_GEN_AI_OPERATION_NAME] === undefined) span.setAttribute(ATTR_GEN_AI_OPERATION_NAME, GEN_AI_OPERATION_EXECUTE_TOOL);
    if (attrs[ATTR_GEN_AI_TOOL_NAME] === undefined) span.setAttribute(ATTR_GEN_AI_TOOL_NAME, toolName);
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
    if (!this.onLoop) return;
    try {
      const r = this.onLoop(d) as unknown;
      if (r && typeof (r as Promise<void>).then === 'function') {
        (r as Promise<void>).then(undefined, (e: unknown) => this.problem('onLoop (async)', e));
      }
    } catch (e) {
      this.problem('onLoop', e);
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
    try {
      diag.error(`loopwatch: ${where} failed and was contained: ${e instanceof Error ? e.message : String(e)}`);
    } catch {
      // a throwing diag logger must not break the app either
    }
  }
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
