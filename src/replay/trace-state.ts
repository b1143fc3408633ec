import type { LoopSpend } from '../cost/trace-cost.js';
import type { ToolCall } from '../detector/types.js';
import type { Hash } from '../fingerprint/hash.js';
import type { Linked } from './recency.js';
import type { ModelCallRecord } from './replay-cost.js';

/** A tool call read from a span, waiting for its trace to be complete. */
export interface PendingCall {
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
export interface UserInput {
  readonly end: number;
  /** Arrival order, as `PendingCall.seq` (ties of end times). */
  readonly seq: number;
  readonly messages: readonly Hash[];
}

/** Parent and names of every span seen in an open trace: enough to walk up to an ancestor's prompt. */
export interface SpanLink {
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

export class PendingTrace<P> implements Linked<PendingTrace<P>> {
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

  /** Takes over what a completed trace left behind: its late spans continue it. */
  continueFrom(before: RetainedTrace): void {
    this.stateBytes = before.stateBytes;
    this.calls = before.calls;
    this.models = before.models;
    this.userInputs = before.userInputs;
    this.links = before.links;
    this.lastPrompt = before.lastPrompt;
    this.lastAgent = before.lastAgent;
    this.rootSeen = before.rootSeen;
    this.continued = true;
    this.previousLoopSpend = before.loopSpend;
    this.reportedDetections = before.reportedDetections;
    this.loopPrompt = before.loopPrompt;
    this.hasLoop = before.hasLoop;
  }

  /** What it leaves behind once completed: calls marked reported, payloads dropped. */
  retained(loopSpend: LoopSpend | undefined): RetainedTrace {
    return {
      newer: undefined,
      older: undefined,
      traceId: this.traceId,
      stateBytes: this.stateBytes - STATE_BYTES.trace,
      calls: this.calls.map((c) => (c.reported ? c : { ...c, reported: true })),
      models: this.models,
      userInputs: this.userInputs,
      loopSpend,
      reportedDetections: this.reportedDetections,
      loopPrompt: this.loopPrompt,
      hasLoop: this.hasLoop,
      links: this.links,
      lastPrompt: this.lastPrompt,
      lastAgent: this.lastAgent,
      rootSeen: this.rootSeen,
    };
  }

  /** The span's own prompt or agent name, else the nearest ancestor's (a bounded walk: links may be cyclic in bad files). */
  nameOf(spanId: string, kind: 'prompt' | 'agent'): string | undefined {
    let id: string | undefined = spanId;
    for (let hops = 0; id !== undefined && hops < 256; hops++) {
      const link = this.links.get(id);
      if (!link) return undefined;
      const name = kind === 'prompt' ? link.prompt : link.agent;
      if (name !== undefined) return name;
      id = link.parentId;
    }
    return undefined;
  }
}

/** What a completed trace leaves behind for its late spans (see `ReplayOptions.retainTraces`). */
export interface RetainedTrace extends Linked<RetainedTrace> {
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
