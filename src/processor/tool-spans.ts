import type { Context } from '@opentelemetry/api';
import { ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_PROMPT_NAME, ATTR_GEN_AI_TOOL_NAME, GEN_AI_OPERATION_EXECUTE_TOOL } from '../conventions/attributes.js';
import { gateOf, readAgentName, readPromptName, type SpanGate } from '../conventions/index.js';
import type { ConventionAdapter, SpanView } from '../conventions/types.js';
import type { RawToolCall } from '../detector/tool-call.js';
import type { LoopDetection } from '../detector/types.js';
import { ATTR_LOOP_ACTION, takeGuardMark } from '../guard/span-mark.js';
import { callContained, log } from '../otel/diag.js';
import { hasNoParent, hrTimeToMs, isLocalRoot, parentIdOf, parentSpanOf, type AnnotatableSpan, type ReadableToolSpan, type WritableToolSpan } from '../otel/span-types.js';
import type { DetectionSite } from './outputs.js';
import { SpanReading } from './span-reading.js';
import { TraceState, type SpanNames, type StartedToolSpan } from './trace-state.js';
import type { TraceStore } from './trace-store.js';

/** A tool span that ended, as the processor hands it on: where it happened, and its call. */
export interface EndedToolCall extends DetectionSite {
  /** The call, for the engine; undefined when its fields could not be read or the guard answered it. */
  readonly call: RawToolCall | undefined;
  /** No other call of its batch is still running. */
  readonly batchComplete: boolean;
  /**
   * The dispatcher guard's decision, when the guard answered the call with a hint or refused it:
   * the tool never ran, so the engine must not count it; the decision is the event.
   */
  readonly decision: LoopDetection | undefined;
  /** It has no parent at all: its trace began with it and ends with it, one call in all (see `hasNoParent`). */
  readonly alone: boolean;
}

export interface ToolSpanOptions {
  readonly adapters: readonly ConventionAdapter[];
  readonly promptName: ((span: ReadableToolSpan) => string | undefined) | undefined;
  readonly normalize: boolean;
  /** Told of every tool call the adapters could name (the `gen_ai.tool.calls` counter). */
  readonly onToolCall?: ((toolName: string, promptName: string | undefined) => void) | undefined;
  /** Told when a tracked trace's local root ends, before its state is dropped (the root, while it can be written). */
  readonly onTraceEnd?: ((state: TraceState, root: WritableToolSpan | undefined) => void) | undefined;
}

/**
 * Span → tool call: reads spans through the convention adapters, keeps what a trace's spans pass
 * on to its tool calls (prompt and agent names, parallel batches, call order), and turns an ending
 * tool span into the call the engine judges. Spans no adapter can claim or name are turned away
 * by the gate, without asking the adapters.
 */
export class ToolSpans {
  private readonly adapters: readonly ConventionAdapter[];
  /** Undefined when an adapter must see every span (one of them declares no gate). */
  private readonly gate: SpanGate | undefined;
  private readonly promptResolver: ToolSpanOptions['promptName'];
  private readonly normalize: boolean;
  private readonly onToolCall: ToolSpanOptions['onToolCall'];
  private readonly onTraceEnd: ToolSpanOptions['onTraceEnd'];
  /**
   * SDKs without `onEnding` only: the parent context of every span at its start, for a span that
   * becomes a tool call only at its end (Traceloop names its tool spans after they start), whose
   * event then goes on the still-open parent. A WeakMap: gone with the span.
   */
  private parentsAtStart: WeakMap<ReadableToolSpan, Context> | undefined;
  /** Told once: a tool span with no parent (see `ended`). */
  private parentlessSaid = false;

  constructor(
    private readonly traces: TraceStore<TraceState>,
    options: ToolSpanOptions,
  ) {
    this.adapters = options.adapters;
    this.gate = gateOf(options.adapters);
    this.promptResolver = options.promptName;
    this.normalize = options.normalize;
    this.onToolCall = options.onToolCall;
    this.onTraceEnd = options.onTraceEnd;
  }

  /** On SDKs without `onEnding`: remembers where the span started (see `parentsAtStart`). */
  rememberParent(span: ReadableToolSpan, parentContext: Context): void {
    (this.parentsAtStart ??= new WeakMap()).set(span, parentContext);
  }

  /** What the adapters say about the span now; undefined when none can claim or name it (most spans). */
  read(span: ReadableToolSpan): SpanReading | undefined {
    const gate = this.gate;
    if (gate === undefined) return new SpanReading(span, this.adapters);
    const mask = gate.test(span);
    return mask === 0 ? undefined : new SpanReading(span, gate.adaptersOf(mask));
  }

  /**
   * The start of `span`, as `reading` saw it (undefined: the gate turned it away). `atEnd`: the
   * start is looked at only now that the span ends, nothing having started or ended in between
   * (a leaf); a tool span is then not recorded as open but its start returned, for `ended`.
   */
  started(span: WritableToolSpan, parentContext: Context | undefined, reading: SpanReading | undefined, atEnd: boolean): StartedToolSpan | undefined {
    const { traceId, spanId } = span.spanContext();
    if (reading === undefined) {
      // Neither a tool call nor named: at most its parent now has a child to pass names on to,
      // and only in a trace loopwatch tracks.
      const state = this.traces.peek(traceId);
      if (state !== undefined) this.recordParentNames(state, span, parentContext);
      return undefined;
    }
    const tool = reading.claim();
    const prompt = reading.promptName();
    const agent = reading.agentName();
    let state = this.traces.peek(traceId);
    if (!state) {
      if (!tool && prompt === undefined && agent === undefined) return undefined;
      state = this.traces.add(traceId, new TraceState());
    }
    this.recordParentNames(state, span, parentContext);
    const parentId = parentIdOf(span);
    const inherited = state.namesOf(parentId);
    if (prompt !== undefined || agent !== undefined) {
      const names: SpanNames = { prompt: prompt ?? inherited?.prompt, agent: agent ?? inherited?.agent };
      state.recordNames(spanId, names);
      state.setLatestNames(names);
    } else if (inherited !== undefined) {
      // Only inherited: recorded when a first child starts (`recordParentNames`); most tool spans have none.
      state.setLatestNames(inherited);
    }
    if (!tool) return undefined;
    if (atEnd) {
      // It joins and leaves the batch open under its parent at once, never the last to end.
      const batch = state.joinEndedCall(parentId);
      return {
        adapter: tool,
        callIndex: ++state.nextCallIndex,
        batch: batch ?? state.newBatchKey(),
        batchComplete: batch === undefined,
        parentId,
        parentContext,
        inherited,
      };
    }
    this.traces.get(traceId);
    state.addOpenToolSpan(spanId, {
      adapter: tool,
      callIndex: ++state.nextCallIndex,
      batch: state.joinBatch(parentId),
      batchComplete: undefined,
      parentId,
      parentContext,
      inherited,
    });
    // Set now so that it is exported even on SDKs without onEnding.
    annotatePromptName(span, prompt ?? this.resolvePrompt(span) ?? inherited?.prompt ?? state.lastPrompt);
    return undefined;
  }

  /**
   * The tool call of an ending span, if it is one: started as one (`started`: its start, for a
   * leaf; else its record as an open tool span), or claimed by an adapter only now (the Mastra
   * bridge marks its spans at their end). `writable`: the span, while it can still be written.
   */
  ended(span: ReadableToolSpan, reading: SpanReading | undefined, started: StartedToolSpan | undefined, writable: WritableToolSpan | undefined): EndedToolCall | undefined {
    const { traceId, spanId } = span.spanContext();
    let state = this.traces.peek(traceId);
    let start = started ?? state?.takeOpenToolSpan(spanId);
    if (start === undefined) {
      const adapter = reading?.claim();
      if (adapter === undefined) return undefined;
      state ??= this.traces.getOrCreate(traceId, () => new TraceState());
      start = { adapter, callIndex: ++state.nextCallIndex, batch: `solo:${spanId}`, batchComplete: true, parentId: parentIdOf(span), parentContext: this.parentsAtStart?.get(span), inherited: undefined };
    }
    if (state === undefined) return undefined; // (a start record without its trace: dropped meanwhile)
    const batchComplete = start.batchComplete ?? state.leaveBatch(start.parentId, start.batch);
    this.traces.get(traceId);
    const fields = reading !== undefined ? reading.readCall(start.adapter) : start.adapter.readToolCall(span);
    if (!fields) return endedToolCall(state, traceId, spanId, writable, start, undefined, batchComplete, undefined, undefined);
    if (start.parentId === undefined && !this.parentlessSaid) {
      // The commonest reason for "no detections": without a registered context manager every
      // tool span starts a trace of its own, and loops are found among the calls of one trace.
      this.parentlessSaid = true;
      log.warn(
        `the tool span '${fields.toolName}' has no parent span, so it is a trace of its own and no loop can be found across such calls. ` +
          'Start tool spans inside the agent\'s span with a context manager registered (provider.register(), NodeSDK.start()); ' +
          'a tool server whose tool spans are roots can ignore this. Said once.',
      );
    }

    let promptName = reading?.promptName() ?? this.resolvePrompt(span) ?? start.inherited?.prompt;
    let agentName = reading?.agentName() ?? start.inherited?.agent;
    if (promptName === undefined || agentName === undefined) {
      // Langfuse and the Mastra bridge name a span after it started: the still-open parent is read again now.
      const parentNow = spanView(parentSpanOf(start.parentContext, start.parentId));
      if (parentNow) {
        promptName ??= readPromptName(this.adapters, parentNow);
        agentName ??= readAgentName(this.adapters, parentNow);
      }
    }
    promptName ??= state.lastPrompt;
    agentName ??= state.lastAgent;
    if (writable) this.annotateToolSpan(writable, fields.toolName, promptName);
    this.onToolCall?.(fields.toolName, promptName);

    const mark = takeGuardMark(span);
    if (mark) {
      writable?.setAttribute(ATTR_LOOP_ACTION, mark.action);
      const d = mark.detection;
      const decision: LoopDetection | undefined = mark.event
        ? {
            ...d,
            traceId,
            spanId,
            callIndex: start.callIndex,
            ...(d.promptName === undefined && promptName !== undefined ? { promptName } : {}),
            ...(d.agentName === undefined && agentName !== undefined ? { agentName } : {}),
          }
        : undefined;
      return endedToolCall(state, traceId, spanId, writable, start, undefined, batchComplete, decision, { [ATTR_LOOP_ACTION]: mark.action });
    }

    // one shape for every call, absent fields undefined
    const call: RawToolCall = {
      toolName: fields.toolName,
      arguments: fields.arguments,
      result: fields.result,
      error: fields.error,
      startTime: hrTimeToMs(span.startTime),
      endTime: hrTimeToMs(span.endTime),
      batch: start.batch,
      callIndex: start.callIndex,
      spanId,
      promptName,
      agentName,
    };
    return endedToolCall(state, traceId, spanId, writable, start, call, batchComplete, undefined, undefined);
  }

  /**
   * What the end of `span` means for its trace. The local root ends it, and nothing of the trace
   * is worth remembering any more, unless the root is a tool call itself (a tool server receiving
   * remote calls: the next call of the same agent run arrives as another root); a tool span with no
   * parent at all began its trace, and ends it like any root, so nothing is kept for it and nothing
   * is left to evict (bench: parentless tool spans, 7.34× → 1.61× a bare pipeline, with the trace
   * store's list). Names a span got after it started (Langfuse, the Mastra bridge) become the
   * trace's latest.
   */
  spanEnded(span: ReadableToolSpan, reading: SpanReading | undefined, wasToolCall: boolean, writable: WritableToolSpan | undefined): void {
    const { traceId, spanId } = span.spanContext();
    const state = this.traces.peek(traceId);
    if (!state) return;
    if (isLocalRoot(span) && (!wasToolCall || hasNoParent(span))) {
      this.endTrace(traceId, state, writable);
      return;
    }
    if (reading !== undefined) {
      const latePrompt = reading.promptName();
      if (latePrompt !== undefined) state.lastPrompt = latePrompt;
      const lateAgent = reading.agentName();
      if (lateAgent !== undefined) state.lastAgent = lateAgent;
    }
    state.forgetEndedSpan(spanId);
  }

  /**
   * A leaf the gate turned away ended: it was never recorded and has nothing to forget, unless it
   * is the local root of a trace tracked for another reason (`abortSignal`).
   */
  unclaimedLeafEnded(span: WritableToolSpan): void {
    if (!isLocalRoot(span)) return;
    const traceId = span.spanContext().traceId;
    const state = this.traces.peek(traceId);
    if (state !== undefined) this.endTrace(traceId, state, span);
  }

  private endTrace(traceId: string, state: TraceState, root: WritableToolSpan | undefined): void {
    const onTraceEnd = this.onTraceEnd;
    if (onTraceEnd !== undefined) callContained('the end of a trace', () => onTraceEnd(state, root), undefined);
    this.traces.delete(traceId);
  }

  /** The parent of `span` has a child now: if it passes names on, it is recorded (see `TraceState`). */
  private recordParentNames(state: TraceState, span: ReadableToolSpan, parentContext: Context | undefined): void {
    const parentId = parentIdOf(span);
    if (parentId === undefined || !state.lacksNamesOf(parentId)) return;
    const parent = parentSpanOf(parentContext, parentId);
    const grandparentId = parent !== undefined ? parentIdOf(parent as unknown as ReadableToolSpan) : undefined;
    state.recordInheritedNames(parentId, grandparentId);
  }

  private annotateToolSpan(span: WritableToolSpan, toolName: string, promptName: string | undefined): void {
    annotatePromptName(span, promptName);
    if (!this.normalize) return;
    const attrs = span.attributes;
    // One vocabulary downstream: the collector counts tool calls by these two keys whatever the dialect.
    if (attrs[ATTR_GEN_AI_OPERATION_NAME] === undefined) span.setAttribute(ATTR_GEN_AI_OPERATION_NAME, GEN_AI_OPERATION_EXECUTE_TOOL);
    if (attrs[ATTR_GEN_AI_TOOL_NAME] === undefined) span.setAttribute(ATTR_GEN_AI_TOOL_NAME, toolName);
  }

  private resolvePrompt(span: ReadableToolSpan): string | undefined {
    const resolver = this.promptResolver;
    if (!resolver) return undefined;
    const name = callContained('the promptName resolver', () => resolver(span), undefined);
    return typeof name === 'string' && name.length > 0 ? name : undefined;
  }
}

/** One shape for every ended tool call. */
function endedToolCall(
  trace: TraceState,
  traceId: string,
  spanId: string,
  span: WritableToolSpan | undefined,
  start: StartedToolSpan,
  call: RawToolCall | undefined,
  batchComplete: boolean,
  decision: LoopDetection | undefined,
  attributes: Record<string, string> | undefined,
): EndedToolCall {
  const alone = span !== undefined ? hasNoParent(span) : start.parentId === undefined;
  return { trace, traceId, spanId, span, parentContext: start.parentContext, parentId: start.parentId, attributes, call, batchComplete, decision, alone };
}

/** The prompt name on a tool span that has none of its own. */
function annotatePromptName(span: WritableToolSpan, promptName: string | undefined): void {
  if (promptName !== undefined && span.attributes[ATTR_GEN_AI_PROMPT_NAME] === undefined) span.setAttribute(ATTR_GEN_AI_PROMPT_NAME, promptName);
}

/** The open parent as a span view, when it is an SDK span (it has a name and attributes). */
function spanView(parent: AnnotatableSpan | undefined): SpanView | undefined {
  const p = parent as Partial<SpanView> | undefined;
  return p && typeof p.name === 'string' && typeof p.attributes === 'object' && p.attributes !== null ? (p as SpanView) : undefined;
}
