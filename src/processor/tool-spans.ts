import type { Context } from '@opentelemetry/api';
import { ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_PROMPT_NAME, ATTR_GEN_AI_TOOL_NAME, GEN_AI_OPERATION_EXECUTE_TOOL } from '../conventions/attributes.js';
import { gateOf, readAgentName, readPromptName, readUserMessages, type SpanGate } from '../conventions/index.js';
import type { ConventionAdapter, SpanView } from '../conventions/types.js';
import type { RawToolCall } from '../detector/tool-call.js';
import type { LoopDetection } from '../detector/types.js';
import { ATTR_LOOP_ACTION, takeGuardMark } from '../guard/span-mark.js';
import { callContained, log } from '../otel/diag.js';
import { hasNoParent, hrTimeToMs, isLocalRoot, parentIdOf, parentSpanOf, type ReadableToolSpan, type WritableToolSpan } from '../otel/span-types.js';
import type { DetectionSite } from './outputs.js';
import { SpanReading } from './span-reading.js';
import { TraceState, type SpanNames, type StartedToolSpan } from './trace-state.js';
import type { TraceStore } from './trace-store.js';

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** A tool span that ended, as the processor hands it on: where it happened, and its call. */
export interface EndedToolCall extends Omit<DetectionSite, 'span'> {
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
  /** What the span gets written while it can be (see `ToolSpans.annotate`); no tool name when its fields could not be read. */
  readonly toolName: string | undefined;
  readonly promptName: string | undefined;
}

export interface ToolSpanOptions {
  readonly adapters: readonly ConventionAdapter[];
  readonly promptName: ((span: ReadableToolSpan) => string | undefined) | undefined;
  readonly normalize: boolean;
  /** Told of every tool call the adapters could name (the `gen_ai.tool.calls` counter). */
  readonly onToolCall?: ((toolName: string, promptName: string | undefined) => void) | undefined;
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
  /**
   * SDKs without `onEnding` only: the parent context of every span at its start, for a span that
   * becomes a tool call only at its end (Traceloop names its tool spans after they start), whose
   * event then goes on the still-open parent. A WeakMap: gone with the span.
   */
  private parentsAtStart: WeakMap<ReadableToolSpan, Context> | undefined;
  /** Told once: a tool span with no parent (see `ended`). */
  private parentlessSaid = false;
  /**
   * The span `read` looked at last, the adapters that may read user messages from it
   * (`SpanGate.userMessageMask`), and whether it carries a token count's key (`SpanGate.usageSeen`).
   */
  private readSpan: ReadableToolSpan | undefined;
  private readSaid = 0;
  private readUsage = false;

  constructor(
    private readonly traces: TraceStore<TraceState>,
    options: ToolSpanOptions,
  ) {
    this.adapters = options.adapters;
    this.gate = gateOf(options.adapters);
    this.promptResolver = options.promptName;
    this.normalize = options.normalize;
    this.onToolCall = options.onToolCall;
  }

  /** On SDKs without `onEnding`: remembers where the span started (see `parentsAtStart`). */
  rememberParent(span: ReadableToolSpan, parentContext: Context): void {
    (this.parentsAtStart ??= new WeakMap()).set(span, parentContext);
  }

  /**
   * The text of the user messages the span records (a model call's input), read by the adapters:
   * after `read` looked at the span, only by those whose keys it carries.
   */
  userMessages(span: ReadableToolSpan): readonly string[] | undefined {
    const gate = this.gate;
    if (gate === undefined || span !== this.readSpan) return readUserMessages(this.adapters, span);
    this.readSpan = undefined;
    return this.readSaid === 0 ? undefined : readUserMessages(gate.adaptersOf(this.readSaid), span);
  }

  /** Whether the span may report a model call's usage: after `read` looked at it, only when it carries a key a token count is read from. */
  mayReportUsage(span: ReadableToolSpan): boolean {
    return this.gate === undefined || span !== this.readSpan || this.readUsage;
  }

  /** What the adapters say about the span now; undefined when none can claim or name it (most spans). */
  read(span: ReadableToolSpan): SpanReading | undefined {
    const gate = this.gate;
    if (gate === undefined) return new SpanReading(span, this.adapters);
    const mask = gate.test(span);
    this.readSpan = span;
    this.readSaid = gate.userMessageMask;
    this.readUsage = gate.usageSeen;
    return mask === 0 ? undefined : new SpanReading(span, gate.adaptersOf(mask));
  }

  /**
   * A span started, as `reading` saw it (undefined: the gate turned it away): its names are
   * recorded for its children, and a tool span is recorded as open, in the batch it joins.
   */
  started(span: WritableToolSpan, parentContext: Context | undefined, reading: SpanReading | undefined): void {
    const start = this.noteStart(span, parentContext, reading);
    if (start === undefined) return;
    const { state, tool, parentId, inherited, prompt } = start;
    const sequence = state.sequence;
    const batch = sequence.batchFor(parentId);
    sequence.enter(batch);
    this.traces.get(span.spanContext().traceId);
    state.addOpenToolSpan(span.spanContext().spanId, { adapter: tool, callIndex: sequence.nextCallIndex(), batch, parentId, parentContext, inherited });
    // Set now so that it is exported even on SDKs without onEnding.
    annotatePromptName(span, prompt ?? this.resolvePrompt(span) ?? inherited?.prompt ?? state.lastPrompt);
  }

  /**
   * The start of a leaf, looked at only now that it ends (nothing started or ended in between):
   * its names are recorded like any start's, and a tool span joins and leaves the batch open
   * under its parent at once, never open. Its start, for `ended`.
   */
  startedLeaf(span: WritableToolSpan, parentContext: Context | undefined, reading: SpanReading): StartedToolSpan | undefined {
    const start = this.noteStart(span, parentContext, reading);
    if (start === undefined) return undefined;
    const { state, tool, parentId, inherited } = start;
    const sequence = state.sequence;
    return { adapter: tool, callIndex: sequence.nextCallIndex(), batch: sequence.startedAndEnded(parentId), parentId, parentContext, inherited };
  }

  /**
   * What every start does: the names the span carries or inherits become its trace's latest (and
   * are recorded for its children), its parent is recorded as passing names on. Returns what a
   * tool span's start needs, when the span is one.
   */
  private noteStart(
    span: WritableToolSpan,
    parentContext: Context | undefined,
    reading: SpanReading | undefined,
  ): { state: TraceState; tool: ConventionAdapter; parentId: string | undefined; inherited: SpanNames | undefined; prompt: string | undefined } | undefined {
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
    return tool ? { state, tool, parentId, inherited, prompt } : undefined;
  }

  /**
   * The tool call of an ending span, if it is one: started as one (`startedLeaf`'s answer for a
   * leaf; else its record as an open tool span), or claimed by an adapter only now (the Mastra
   * bridge marks its spans at their end). Reads only: what the span gets written is `annotate`.
   */
  ended(span: ReadableToolSpan, reading: SpanReading | undefined, started: StartedToolSpan | undefined): EndedToolCall | undefined {
    const { traceId, spanId } = span.spanContext();
    let state = this.traces.peek(traceId);
    let start = started ?? state?.takeOpenToolSpan(spanId);
    if (start === undefined) {
      const adapter = reading?.claim();
      if (adapter === undefined) return undefined;
      state ??= this.traces.getOrCreate(traceId, () => new TraceState());
      const sequence = state.sequence;
      start = { adapter, callIndex: sequence.nextCallIndex(), batch: { key: sequence.newBatchKey(), complete: true }, parentId: parentIdOf(span), parentContext: this.parentsAtStart?.get(span), inherited: undefined };
    }
    if (state === undefined) return undefined; // (a start record without its trace: dropped meanwhile)
    const batch = start.batch;
    const batchComplete = 'complete' in batch ? batch.complete : state.sequence.leave(batch);
    this.traces.get(traceId);
    const fields = reading !== undefined ? reading.readCall(start.adapter) : start.adapter.readToolCall(span);
    // The answer in its final shape from the start, filled in below: spreading a shared part into
    // each answer instead cost more than the rest of this method (bench/NOTES.md, outside the
    // fingerprint and heap per tool call).
    const out: Writable<EndedToolCall> = {
      trace: state,
      traceId,
      spanId,
      parentContext: start.parentContext,
      parentId: start.parentId,
      batchComplete,
      alone: hasNoParent(span),
      call: undefined,
      decision: undefined,
      attributes: undefined,
      toolName: undefined,
      promptName: undefined,
    };
    if (!fields) return out;
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
    const { toolName } = fields;
    this.onToolCall?.(toolName, promptName);
    out.toolName = toolName;
    out.promptName = promptName;

    const mark = takeGuardMark(span);
    if (mark) {
      const d = mark.detection;
      out.decision = mark.event
        ? {
            ...d,
            traceId,
            spanId,
            callIndex: start.callIndex,
            ...(d.promptName === undefined && promptName !== undefined ? { promptName } : {}),
            ...(d.agentName === undefined && agentName !== undefined ? { agentName } : {}),
          }
        : undefined;
      out.attributes = { [ATTR_LOOP_ACTION]: mark.action };
      return out;
    }

    // one shape for every call, absent fields undefined
    out.call = {
      toolName,
      arguments: fields.arguments,
      result: fields.result,
      error: fields.error,
      startTime: hrTimeToMs(span.startTime),
      endTime: hrTimeToMs(span.endTime),
      batch: batch.key,
      callIndex: start.callIndex,
      spanId,
      promptName,
      agentName,
    };
    return out;
  }

  /**
   * What an ended tool span gets written while it can be (`onEnding`): the prompt name, the
   * gen_ai keys of other conventions (`normalizeToolSpans`), and the guard's `loop.action`.
   */
  annotate(span: WritableToolSpan, ended: EndedToolCall): void {
    if (ended.toolName === undefined) return;
    annotatePromptName(span, ended.promptName);
    if (this.normalize) {
      const attrs = span.attributes;
      // One vocabulary downstream: the collector counts tool calls by these two keys whatever the convention.
      if (attrs[ATTR_GEN_AI_OPERATION_NAME] === undefined) span.setAttribute(ATTR_GEN_AI_OPERATION_NAME, GEN_AI_OPERATION_EXECUTE_TOOL);
      if (attrs[ATTR_GEN_AI_TOOL_NAME] === undefined) span.setAttribute(ATTR_GEN_AI_TOOL_NAME, ended.toolName);
    }
    const action = ended.attributes?.[ATTR_LOOP_ACTION];
    if (action !== undefined) span.setAttribute(ATTR_LOOP_ACTION, action);
  }

  /**
   * What the end of `span` means for its trace. The local root ends it, and nothing of the trace
   * is worth remembering any more, unless the root is a tool call itself (a tool server receiving
   * remote calls: the next call of the same agent run arrives as another root); a tool span with no
   * parent at all began its trace, and ends it like any root, so nothing is kept for it and nothing
   * is left to evict (bench/NOTES.md: parentless tool spans, with the trace store's list). Names a span got after it started (Langfuse, the Mastra bridge) become the
   * trace's latest. Returns the trace's state when the trace ended (it is no longer tracked).
   */
  spanEnded(span: ReadableToolSpan, reading: SpanReading | undefined, wasToolCall: boolean): TraceState | undefined {
    const { traceId, spanId } = span.spanContext();
    const state = this.traces.peek(traceId);
    if (!state) return undefined;
    if (isLocalRoot(span) && (!wasToolCall || hasNoParent(span))) {
      this.traces.delete(traceId);
      return state;
    }
    if (reading !== undefined) {
      const latePrompt = reading.promptName();
      if (latePrompt !== undefined) state.lastPrompt = latePrompt;
      const lateAgent = reading.agentName();
      if (lateAgent !== undefined) state.lastAgent = lateAgent;
    }
    state.forgetEndedSpan(spanId);
    return undefined;
  }

  /**
   * A leaf the gate turned away ended: it was never recorded and has nothing to forget, unless it
   * is the local root of a trace tracked for another reason (`abortSignal`). Returns that trace's
   * state when it ended.
   */
  unclaimedLeafEnded(span: ReadableToolSpan): TraceState | undefined {
    if (!isLocalRoot(span)) return undefined;
    const traceId = span.spanContext().traceId;
    const state = this.traces.peek(traceId);
    if (state !== undefined) this.traces.delete(traceId);
    return state;
  }

  /** The parent of `span` has a child now: if it passes names on, it is recorded (see `TraceState`). */
  private recordParentNames(state: TraceState, span: ReadableToolSpan, parentContext: Context | undefined): void {
    const parentId = parentIdOf(span);
    if (parentId === undefined || !state.lacksNamesOf(parentId)) return;
    const parent = parentSpanOf(parentContext, parentId);
    const grandparentId = parent !== undefined ? parentIdOf(parent as unknown as ReadableToolSpan) : undefined;
    state.recordInheritedNames(parentId, grandparentId);
  }

  private resolvePrompt(span: ReadableToolSpan): string | undefined {
    const resolver = this.promptResolver;
    if (!resolver) return undefined;
    const name = callContained('the promptName resolver', () => resolver(span), undefined);
    return typeof name === 'string' && name.length > 0 ? name : undefined;
  }
}

/** The prompt name on a tool span that has none of its own. */
function annotatePromptName(span: WritableToolSpan, promptName: string | undefined): void {
  if (promptName !== undefined && span.attributes[ATTR_GEN_AI_PROMPT_NAME] === undefined) span.setAttribute(ATTR_GEN_AI_PROMPT_NAME, promptName);
}

/** The open parent as a span view, when it is an SDK span (it has a name and attributes). */
function spanView(parent: ReturnType<typeof parentSpanOf>): SpanView | undefined {
  const p = parent as Partial<SpanView> | undefined;
  return p && typeof p.name === 'string' && typeof p.attributes === 'object' && p.attributes !== null ? (p as SpanView) : undefined;
}
