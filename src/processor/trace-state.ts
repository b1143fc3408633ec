import type { Context } from '@opentelemetry/api';
import type { ConventionAdapter } from '../conventions/types.js';
import type { TraceCost } from '../cost/trace-cost.js';
import type { DeferredTrace } from '../detector/deferred-trace.js';
import type { TraceDetector } from '../detector/trace-detector.js';
import type { LoopDetection } from '../detector/types.js';
import { ToolLoopError } from '../errors.js';
import { callContained } from '../otel/diag.js';
import { SmallMap } from './small-map.js';
import type { StoreLinks } from './trace-store.js';

/**
 * Prompt and agent names an open span carries or inherited. One record is shared by a named span
 * and the descendants that pass its names on (no copy per span).
 */
export interface SpanNames {
  readonly prompt: string | undefined;
  readonly agent: string | undefined;
}

/** A tool span that has started: what its start decided about the call it will be. */
export interface StartedToolSpan {
  /** The adapter that claimed it. */
  readonly adapter: ConventionAdapter;
  /** 1-based, by start time. */
  readonly callIndex: number;
  readonly batch: string;
  /**
   * Known at its start for a span that starts and ends at once (a leaf, or one claimed only at its
   * end: it never stays open); otherwise the batch is left when the span ends.
   */
  readonly batchComplete: boolean | undefined;
  readonly parentId: string | undefined;
  /** Where its parent span is found (for its names now, and for the event on SDKs without `onEnding`). */
  readonly parentContext: Context | undefined;
  /** The names the span inherited from its parent when it started. */
  readonly inherited: SpanNames | undefined;
}

/** Parallel tool calls under one parent: a batch stays open while any of its calls runs. */
interface OpenBatch {
  readonly key: string;
  open: number;
  /**
   * A call of the batch has ended: the batch takes no new calls. The calls one model turn asked
   * for start together, before any of them ends; a call that starts later belongs to a later turn,
   * even while an earlier call is still running (a leaked or timed-out tool span would otherwise
   * gather every later call into its batch, where repeats are not repetitions).
   */
  ended: boolean;
}

/** The key of the batch of tool calls made directly under the trace's (local) root. */
const ROOT_BATCHES = '-';

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
   * calls let go (bench: memory per active trace, the agent mix as run, 2.06 → 1.96 KiB, with
   * `outcome`).
   */
  detector: TraceDetector | undefined;
  nextCallIndex = 0;
  private batchSeq = 0;
  /** The batch of parallel tool calls open under each parent span, by the parent's id. */
  private batches: SmallMap<OpenBatch> | undefined;
  /** Names of open spans that carry or pass on a prompt or agent name, by span id. */
  private names: SmallMap<SpanNames> | undefined;
  /** Tool spans started and not ended yet, by span id. */
  private open: SmallMap<StartedToolSpan> | undefined;
  /** The names of the span that started (or, for names set late, ended) most recently. */
  lastPrompt: string | undefined;
  lastAgent: string | undefined;
  /** Made when the trace's abort signal is asked for or a loop is found: most traces have neither. */
  private outcome: TraceOutcome | undefined;
  /** Tool calls handed to the engine: the positions model calls and detections are ordered by. */
  toolRecords = 0;
  /** The latest end (epoch ms) of the tool calls handed to the engine (see `TraceCost.modelCall`). */
  toolsEnded = Number.NEGATIVE_INFINITY;
  /** Model calls' usage around the trace's loops: made at the first model call with usage after a tool call, or the first detection. */
  cost: TraceCost | undefined;

  /** Joins the open batch of `parentId`, or opens a new one. */
  joinBatch(parentId: string | undefined): string {
    const parent = parentId ?? ROOT_BATCHES;
    const batches = (this.batches ??= new SmallMap());
    const current = batches.get(parent);
    if (current && current.open > 0 && !current.ended) {
      current.open++;
      return current.key;
    }
    const batch = { key: this.newBatchKey(), open: 1, ended: false };
    batches.set(parent, batch);
    return batch.key;
  }

  /**
   * For a call that starts and ends at once (it never stays open): the key of the batch open under
   * `parentId`, which it joins and leaves, not the last to end (and, having ended, closes to new
   * calls); or undefined when none takes calls.
   */
  joinEndedCall(parentId: string | undefined): string | undefined {
    const batch = this.batches?.get(parentId ?? ROOT_BATCHES);
    if (batch === undefined || batch.open === 0 || batch.ended) return undefined;
    batch.ended = true; // it has ended: the batch takes no new calls (see `OpenBatch.ended`)
    return batch.key;
  }

  /** A batch of its own, for such a call when no batch is open (and for `joinBatch`). */
  newBatchKey(): string {
    // unique in the trace: only compared with other keys of this trace
    return String(this.batchSeq++);
  }

  /** A call of the batch ended; true when it was the last one still running. */
  leaveBatch(parentId: string | undefined, key: string): boolean {
    const batch = this.batches?.get(parentId ?? ROOT_BATCHES);
    if (!batch || batch.key !== key) return true;
    batch.open = Math.max(0, batch.open - 1);
    batch.ended = true;
    return batch.open === 0;
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
    if (this.batches !== undefined) this.batches.delete(spanId);
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
