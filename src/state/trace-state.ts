import type { ConventionAdapter } from '../conventions/types.js';
import type { TraceDetector } from '../detector/trace-detector.js';
import type { ToolLoopError } from '../errors.js';
import type { Touchable } from './trace-store.js';

/** A span loopwatch may annotate later: only what the fallback path needs. */
export interface AnnotatableSpan {
  addEvent(name: string, attributes?: Record<string, string | number | boolean | string[]>): unknown;
  isRecording(): boolean;
}

/** A tool span that has started and not yet been evaluated. */
export interface OpenToolCall {
  readonly adapter: ConventionAdapter;
  readonly callIndex: number;
  readonly batch: string;
  readonly parentId: string | undefined;
  /** The open parent span: where the event goes on SDKs without `onEnding`. */
  readonly parent: AnnotatableSpan | undefined;
}

/** Parallel tool calls under one parent: a batch stays open while any of its calls runs. */
export interface OpenBatch {
  readonly key: string;
  open: number;
}

/** Everything the processor keeps for one trace; created on the first span that matters. */
export class TraceState implements Touchable {
  touched = 0;
  detector: TraceDetector | undefined;
  nextCallIndex = 0;
  private batchSeq = 0;
  readonly open = new Map<string, OpenToolCall>();
  private batches: Map<string, OpenBatch> | undefined;
  /** Prompt / agent names of open spans, inherited by their children at start. */
  prompts: Map<string, string> | undefined;
  agents: Map<string, string> | undefined;
  lastPrompt: string | undefined;
  lastAgent: string | undefined;
  controller: AbortController | undefined;
  /** Set by the first critical detection: a signal asked for later starts out aborted. */
  stopped: ToolLoopError | undefined;

  /** Joins the open batch of `parentId`, or opens a new one. */
  joinBatch(parentId: string | undefined): string {
    const parent = parentId ?? '-';
    const batches = (this.batches ??= new Map());
    const current = batches.get(parent);
    if (current && current.open > 0) {
      current.open++;
      return current.key;
    }
    const batch = { key: `${parent}:${this.batchSeq++}`, open: 1 };
    batches.set(parent, batch);
    return batch.key;
  }

  /** A call of the batch ended; true when it was the last one still running. */
  leaveBatch(parentId: string | undefined, key: string): boolean {
    const batch = this.batches?.get(parentId ?? '-');
    if (!batch || batch.key !== key) return true;
    batch.open = Math.max(0, batch.open - 1);
    return batch.open === 0;
  }

  rememberName(kind: 'prompt' | 'agent', spanId: string, name: string): void {
    if (kind === 'prompt') {
      (this.prompts ??= new Map()).set(spanId, name);
      this.lastPrompt = name;
    } else {
      (this.agents ??= new Map()).set(spanId, name);
      this.lastAgent = name;
    }
  }

  /** A span ended: its children have all started, nobody inherits from it any more. */
  forgetSpan(spanId: string): void {
    this.prompts?.delete(spanId);
    this.agents?.delete(spanId);
    this.batches?.delete(spanId);
  }
}
