import type { ConventionAdapter } from '../conventions/types.js';
import type { TraceCost } from '../cost/trace-cost.js';
import type { DeferredTrace } from '../detector/deferred-trace.js';
import type { LoopDetection } from '../detector/types.js';
import type { ToolLoopError } from '../errors.js';
import { SmallMap } from './small-map.js';
import type { Touchable } from './trace-store.js';

/** A span loopwatch may annotate later: only what the fallback path needs. */
export interface AnnotatableSpan {
  addEvent(name: string, attributes?: Record<string, string | number | boolean | string[]>): unknown;
  isRecording(): boolean;
}

/**
 * Prompt and agent names an open span carries or inherited. One record is shared by a named span
 * and the descendants that pass its names on (no copy per span).
 */
export interface SpanNames {
  readonly prompt: string | undefined;
  readonly agent: string | undefined;
}

/** A tool span that has started and not yet been evaluated. */
export interface OpenToolCall {
  readonly adapter: ConventionAdapter;
  readonly callIndex: number;
  readonly batch: string;
  readonly parentId: string | undefined;
  /** The open parent span: where the event goes on SDKs without `onEnding`. */
  readonly parent: AnnotatableSpan | undefined;
  /** The names the span inherited from its parent when it started. */
  readonly inherited: SpanNames | undefined;
}

/** Parallel tool calls under one parent: a batch stays open while any of its calls runs. */
export interface OpenBatch {
  readonly key: string;
  open: number;
}

/** The keys of a trace's first batches, made once (turning the number into a string showed in profiles). */
const SMALL_BATCH_KEYS: readonly string[] = Array.from({ length: 64 }, (_, n) => String(n));

/**
 * Everything the processor keeps for one trace; created on the first span that matters (a tool
 * span, a span with a prompt or agent name, or `abortSignal()`). Small on purpose: one of these
 * lives per active trace, its maps are made when first needed, and the engine's history only at
 * the first tool call.
 *
 * Names are inherited from the nearest named ancestor. Only spans that can pass names on are
 * recorded: named spans when they start, and an unnamed span when its first child starts (its
 * own parent is then recorded already, by induction). Leaf spans, most spans of a trace, are
 * never recorded, so a span that is neither a tool call nor named costs two map lookups.
 */
export class TraceState implements Touchable {
  touched = 0;
  detector: DeferredTrace | undefined;
  nextCallIndex = 0;
  private batchSeq = 0;
  /** The batch of parallel tool calls open under each parent span, by the parent's id. */
  private batches: SmallMap<OpenBatch> | undefined;
  /** Names of open spans that carry or pass on a prompt or agent name, by span id. */
  private names: SmallMap<SpanNames> | undefined;
  /** Tool calls started and not yet evaluated, by span id. */
  open: SmallMap<OpenToolCall> | undefined;
  /** The names of the span that started (or, for late names, ended) most recently. */
  lastPrompt: string | undefined;
  lastAgent: string | undefined;
  controller: AbortController | undefined;
  /** Set by the first critical detection: a signal asked for later starts out aborted. */
  stopped: ToolLoopError | undefined;
  /** Tool calls handed to the engine: the positions model calls and detections are ordered by. */
  toolRecords = 0;
  /** Model calls' usage around the trace's loops: made at the first model call with usage after a tool call, or the first detection. */
  cost: TraceCost | undefined;
  /** The first detection reported, and how many were: for the trace's `loop.summary` when it ends. */
  firstDetection: LoopDetection | undefined;
  detections = 0;

  /** Joins the open batch of `parentId`, or opens a new one. */
  joinBatch(parentId: string | undefined): string {
    const parent = parentId ?? '-';
    const batches = (this.batches ??= new SmallMap());
    const current = batches.get(parent);
    if (current && current.open > 0) {
      current.open++;
      return current.key;
    }
    const batch = { key: this.newBatchKey(), open: 1 };
    batches.set(parent, batch);
    return batch.key;
  }

  /**
   * For a call that starts and ends at once (it never stays open): the key of the batch open under
   * `parentId`, which it joins and leaves, not the last to end; or undefined when none is open.
   */
  openBatchOf(parentId: string | undefined): string | undefined {
    const batch = this.batches?.get(parentId ?? '-');
    return batch !== undefined && batch.open > 0 ? batch.key : undefined;
  }

  /** A batch of its own, for such a call when no batch is open (and for `joinBatch`). */
  newBatchKey(): string {
    // unique in the trace: only compared with other keys of this trace
    const n = this.batchSeq++;
    return n < SMALL_BATCH_KEYS.length ? (SMALL_BATCH_KEYS[n] as string) : String(n);
  }

  /** A call of the batch ended; true when it was the last one still running. */
  leaveBatch(parentId: string | undefined, key: string): boolean {
    const batch = this.batches?.get(parentId ?? '-');
    if (!batch || batch.key !== key) return true;
    batch.open = Math.max(0, batch.open - 1);
    return batch.open === 0;
  }

  /** A span with these names (its own or inherited) started: they are the trace's latest. */
  notice(names: SpanNames): void {
    if (names.prompt !== undefined) this.lastPrompt = names.prompt;
    if (names.agent !== undefined) this.lastAgent = names.agent;
  }

  /** The names the span `spanId` carries or passes on, if it is recorded. */
  namesOf(spanId: string | undefined): SpanNames | undefined {
    return spanId !== undefined && this.names !== undefined ? this.names.get(spanId) : undefined;
  }

  record(spanId: string, names: SpanNames): void {
    (this.names ??= new SmallMap()).set(spanId, names);
  }

  /**
   * A span that is neither a tool call nor named started under `parentId`, whose own parent is
   * `grandparentId`: if the parent is not recorded yet, it is now (it has a child, so it may
   * pass names on), with what it inherits.
   */
  passOn(parentId: string, grandparentId: string | undefined): void {
    const names = this.names;
    if (names === undefined || names.has(parentId)) return;
    const inherited = grandparentId !== undefined ? names.get(grandparentId) : undefined;
    if (inherited !== undefined) names.set(parentId, inherited);
  }

  /** The parent has a record (or the trace has no names at all): nothing to pass on. */
  knows(parentId: string): boolean {
    return this.names === undefined || this.names.has(parentId);
  }

  /** The tool call of `spanId` is evaluated; the table goes when empty (most of a trace's life). */
  forgetCall(spanId: string): void {
    const open = this.open;
    if (open === undefined) return;
    open.delete(spanId);
    if (open.empty) this.open = undefined;
  }

  /** A span ended: all its children have started, its batch of tool calls is over. */
  forgetSpan(spanId: string): void {
    if (this.batches !== undefined) this.batches.delete(spanId);
    if (this.names !== undefined) this.names.delete(spanId);
  }
}
