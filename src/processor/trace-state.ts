import type { Context } from '@opentelemetry/api';
import type { ConventionAdapter } from '../conventions/types.js';
import type { TraceSpend } from '../cost/trace-spend.js';
import type { DeferredTrace } from '../detector/deferred-trace.js';
import type { TraceDetector } from '../detector/trace-detector.js';
import type { LoopDetection } from '../detector/types.js';
import { ToolLoopError } from '../errors.js';
import { callContained } from '../otel/diag.js';
import { CallSequence, type Batch } from '../sequence/call-sequence.js';
import { SmallMap } from '../sequence/small-map.js';
import type { StoreLinks } from './trace-store.js';

/**
 * Prompt and agent names an open span carries or inherited. One record is shared by a named span
 * and the descendants that pass its names on (no copy per span).
 */
export interface SpanNames {
  readonly prompt: string | undefined;
  readonly agent: string | undefined;
}

/** The batch of a call that started and ended at once (it never stayed open): its key, and whether it completed the batch. */
export interface EndedInBatch {
  readonly key: string;
  readonly complete: boolean;
}

/** A tool span that has started: what its start decided about the call it will be. */
export interface StartedToolSpan {
  /** The adapter that claimed it. */
  readonly adapter: ConventionAdapter;
  /** 1-based, by start time. */
  readonly callIndex: number;
  /**
   * The batch it runs in, left when the span ends; or, for a span that starts and ends at once (a
   * leaf, or one claimed only at its end), the batch it joined and left already.
   */
  readonly batch: Batch | EndedInBatch;
  readonly parentId: string | undefined;
  /** Where its parent span is found (for its names now, and for the event on SDKs without `onEnding`). */
  readonly parentContext: Context | undefined;
  /** The names the span inherited from its parent when it started. */
  readonly inherited: SpanNames | undefined;
}

/**
 * Everything the processor keeps for one trace; created on the first span that matters (a tool
 * span, a span with a prompt or agent name, or `abortSignal()`). Small on purpose: one of these
 * lives per active trace, its tables are made when first needed, and the engine's state only at
 * the first tool call.
 *
 * Names are inherited from the nearest named ancestor. Only spans that can pass names on are
 * recorded: named spans when they start, and an unnamed span when its first child that matters
 * starts (its own parent is then recorded already, by induction). Leaf spans, most spans of a
 * trace, are never recorded.
 */
export class TraceState implements StoreLinks<TraceState> {
  touched = 0;
  storeId = '';
  older: TraceState | undefined;
  newer: TraceState | undefined;
  /** The trace's first calls, waiting as hashes until a tool comes back (see `DeferredTrace`). */
  waiting: DeferredTrace | undefined;
  /**
   * The engine's state for this trace, once the waiting calls made it: held here, the waiting
   * calls let go (bench/NOTES.md: memory per active trace, the agent mix as run, with
   * `outcome`).
   */
  detector: TraceDetector | undefined;
  /** The order of the trace's tool calls and their parallel batches: made at the first tool call. */
  private calls: CallSequence | undefined;
  /** Names of open spans that carry or pass on a prompt or agent name, by span id. */
  private names: SmallMap<SpanNames> | undefined;
  /** Tool spans started and not ended yet, by span id. */
  private open: SmallMap<StartedToolSpan> | undefined;
  /** The names of the span that started (or, for names set late, ended) most recently. */
  lastPrompt: string | undefined;
  lastAgent: string | undefined;
  /** Made when the trace's abort signal is asked for or a loop is found: most traces have neither. */
  private outcome: TraceOutcome | undefined;
  /** What the model spent around the trace's loops: made at its first tool call handed to the engine. */
  spend: TraceSpend | undefined;

  get sequence(): CallSequence {
    return (this.calls ??= new CallSequence());
  }

  /** A span with these names (its own or inherited) started: they are the trace's latest. */
  setLatestNames(names: SpanNames): void {
    if (names.prompt !== undefined) this.lastPrompt = names.prompt;
    if (names.agent !== undefined) this.lastAgent = names.agent;
  }

  /** The names the span `spanId` carries or passes on, if it is recorded. */
  namesOf(spanId: string | undefined): SpanNames | undefined {
    return spanId !== undefined && this.names !== undefined ? this.names.get(spanId) : undefined;
  }

  recordNames(spanId: string, names: SpanNames): void {
    (this.names ??= new SmallMap()).set(spanId, names);
  }

  /** The trace has names, and none are recorded for `parentId` yet (it may pass on its parent's). */
  lacksNamesOf(parentId: string): boolean {
    return this.names !== undefined && !this.names.has(parentId);
  }

  /**
   * `parentId` has a child now, so it may pass names on: it is recorded with the names of its own
   * parent, `grandparentId`, if those are recorded.
   */
  recordInheritedNames(parentId: string, grandparentId: string | undefined): void {
    const names = this.names;
    if (names === undefined || names.has(parentId)) return;
    const inherited = grandparentId !== undefined ? names.get(grandparentId) : undefined;
    if (inherited !== undefined) names.set(parentId, inherited);
  }

  addOpenToolSpan(spanId: string, started: StartedToolSpan): void {
    (this.open ??= new SmallMap()).set(spanId, started);
  }

  /** The tool span `spanId` ends: its start record, removed (the table goes when empty, most of a trace's life). */
  takeOpenToolSpan(spanId: string): StartedToolSpan | undefined {
    const open = this.open;
    if (open === undefined) return undefined;
    const started = open.get(spanId);
    if (started === undefined) return undefined;
    open.delete(spanId);
    if (open.empty) this.open = undefined;
    return started;
  }

  /** A span ended: all its children have started, its batch of tool calls is over. */
  forgetEndedSpan(spanId: string): void {
    this.calls?.parentEnded(spanId);
    if (this.names !== undefined) this.names.delete(spanId);
  }

  /** The first detection reported: for the trace's `loop.summary` when it ends. */
  get firstDetection(): LoopDetection | undefined {
    return this.outcome?.firstDetection;
  }

  /** Detections reported in the trace. */
  get detections(): number {
    return this.outcome?.detections ?? 0;
  }

  /** A detection was reported in the trace. */
  countDetection(d: LoopDetection): void {
    const outcome = (this.outcome ??= new TraceOutcome());
    outcome.detections++;
    outcome.firstDetection ??= d;
  }

  /** A critical detection stopped the trace (enforce mode). */
  get isStopped(): boolean {
    return this.outcome?.stopped !== undefined;
  }

  /** The signal `abortSignal()` hands out for this trace; aborted already if the trace was stopped. */
  signal(): AbortSignal {
    const outcome = (this.outcome ??= new TraceOutcome());
    if (!outcome.controller) {
      outcome.controller = new AbortController();
      if (outcome.stopped) outcome.controller.abort(outcome.stopped);
    }
    return outcome.controller.signal;
  }

  /**
   * A critical loop: the trace's signal aborts with a `ToolLoopError`, once. Returns the error the
   * first time, undefined after. An abort listener runs inside this call (within the tool span's
   * `end()`); Node reports a listener that throws as uncaught whatever the caller does, which is
   * why the processor offers `onAbort`, a callback it contains.
   */
  stop(detection: LoopDetection): ToolLoopError | undefined {
    const outcome = (this.outcome ??= new TraceOutcome());
    if (outcome.stopped) return undefined;
    const error = new ToolLoopError(detection);
    outcome.stopped = error;
    const controller = outcome.controller;
    if (controller) callContained('an abort listener', () => controller.abort(error), undefined);
    return error;
  }
}

/** What became of a trace: its abort signal, its stop, its detections (see `TraceState.outcome`). */
class TraceOutcome {
  controller: AbortController | undefined;
  /** Set by the first critical detection: a signal asked for later starts out aborted. */
  stopped: ToolLoopError | undefined;
  firstDetection: LoopDetection | undefined;
  detections = 0;
}
