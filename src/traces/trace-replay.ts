import { findToolAdapter, readAgentName, readPromptName } from '../conventions/index.js';
import type { ConventionAdapter } from '../conventions/types.js';
import type { LoopEngine } from '../detector/engine.js';
import { buildToolCall } from '../detector/tool-call.js';
import type { LoopDetection, ToolCall } from '../detector/types.js';
import type { DecodedSpan } from '../cli/otlp-json.js';

/** A tool call read from a span, waiting for its trace to be complete. */
interface PendingCall {
  readonly call: ToolCall;
  /** Arrival order: exporters receive spans in the order they ended. */
  readonly seq: number;
  readonly spanId: string;
  readonly parentId: string | undefined;
  readonly start: number;
  readonly end: number;
}

/** Parent and names of every span seen in an open trace: enough to walk up to an ancestor's prompt. */
interface SpanLink {
  readonly parentId: string | undefined;
  readonly prompt: string | undefined;
  readonly agent: string | undefined;
}

class PendingTrace {
  readonly calls: PendingCall[] = [];
  readonly links = new Map<string, SpanLink>();
  lastPrompt: string | undefined;
  lastAgent: string | undefined;
  rootSeen = false;
  /** Span counter at this trace's latest span. */
  lastActivity = 0;
  constructor(readonly traceId: string) {}
}

/** One tool call of a finished trace: name, order, timing and outcome, never arguments or results. */
export interface ReplayedCall {
  readonly toolName: string;
  /** 1-based, by start time (as `LoopDetection.callIndex`). */
  readonly callIndex: number;
  /** Epoch milliseconds. */
  readonly startTime: number;
  readonly endTime: number;
  readonly ok: boolean;
}

/** A finished trace and what the engine found in it. */
export interface ReplayedTrace {
  readonly traceId: string;
  readonly toolCalls: number;
  readonly detections: readonly LoopDetection[];
  /** When each detection happened: the end (epoch ms) of the call that completed it, in `detections` order. */
  readonly detectionTimes: readonly number[];
  /** The trace's tool calls by start time. */
  readonly calls: readonly ReplayedCall[];
  readonly promptName: string | undefined;
  /** Start of the first tool call (epoch ms); NaN without tool calls. */
  readonly startTime: number;
}

export interface ReplayOptions {
  readonly engine: LoopEngine;
  readonly adapters: readonly ConventionAdapter[];
  readonly onTrace: (trace: ReplayedTrace) => void;
  /** Open traces kept before the oldest is evaluated early (bounded memory on endless input). */
  readonly maxOpenTraces?: number;
  /** A trace whose root has arrived is evaluated after this many spans of other traces (default 20 000). */
  readonly lingerSpans?: number;
  readonly onProblem?: (message: string) => void;
}

const SWEEP_EVERY = 1024;

/**
 * Rebuilds what the live processor saw from exported spans. Spans arrive roughly in end order
 * with traces interleaved, but not reliably: a collector's tail sampler regroups a trace and may
 * write its root before some children. So calls are kept per trace until the trace has had its
 * root and then been idle for `lingerSpans` spans of other traces (or the input ends), then
 * numbered by start time, grouped into batches (overlapping calls under one parent) and replayed
 * step by step, each batch complete at its last call: the same input the processor gives the
 * engine, so `scan` reports what the processor would have reported.
 */
export class TraceReplayer {
  private readonly open = new Map<string, PendingTrace>();
  private readonly maxOpen: number;
  spans = 0;
  toolCalls = 0;
  traces = 0;
  private seq = 0;

  private readonly linger: number;

  constructor(private readonly options: ReplayOptions) {
    this.maxOpen = options.maxOpenTraces ?? 50_000;
    this.linger = options.lingerSpans ?? 20_000;
  }

  add(span: DecodedSpan): void {
    this.spans++;
    let trace = this.open.get(span.traceId);
    if (trace) {
      // keep the map in order of last activity: the idle traces are always at the front
      this.open.delete(span.traceId);
    } else {
      trace = new PendingTrace(span.traceId);
    }
    this.open.set(span.traceId, trace);
    trace.lastActivity = this.spans;
    if (this.open.size > this.maxOpen) {
      const oldest = this.open.values().next();
      if (!oldest.done) this.complete(oldest.value);
    }
    if (this.spans % SWEEP_EVERY === 0) this.sweep();
    const adapters = this.options.adapters;
    const prompt = readPromptName(adapters, span);
    const agent = readAgentName(adapters, span);
    trace.links.set(span.spanId, { parentId: span.parentSpanId, prompt, agent });
    if (prompt !== undefined) trace.lastPrompt = prompt;
    if (agent !== undefined) trace.lastAgent = agent;

    const adapter = findToolAdapter(adapters, span);
    const fields = adapter?.readToolCall(span);
    if (fields) {
      this.toolCalls++;
      const call = buildToolCall(
        this.options.engine,
        {
          toolName: fields.toolName,
          ...(fields.arguments !== undefined ? { arguments: fields.arguments } : {}),
          ...(fields.result !== undefined ? { result: fields.result } : {}),
          ...(fields.error ? { error: fields.error } : {}),
          startTime: span.startTime,
          endTime: span.endTime,
          batch: '',
          callIndex: 0,
          spanId: span.spanId,
        },
        this.options.onProblem,
      );
      trace.calls.push({ call, seq: this.seq++, spanId: span.spanId, parentId: span.parentSpanId, start: span.startTime, end: span.endTime });
    }
    if (span.parentSpanId === undefined) trace.rootSeen = true;
  }

  /** Evaluates traces idle long enough: after their root, or (rootless, e.g. remote parents) after longer. */
  private sweep(): void {
    for (const trace of this.open.values()) {
      const idle = this.spans - trace.lastActivity;
      if (idle < this.linger) break;
      if (trace.rootSeen || idle >= this.linger * 4) this.complete(trace);
    }
  }

  /** Evaluates every trace still open (end of input). */
  finish(): void {
    for (const trace of [...this.open.values()]) this.complete(trace);
  }

  private complete(trace: PendingTrace): void {
    this.open.delete(trace.traceId);
    this.traces++;
    const calls = trace.calls;
    const detections: LoopDetection[] = [];
    const detectionTimes: number[] = [];
    let replayed: ReplayedCall[] = [];
    if (calls.length > 0) {
      // Timestamps order calls only to the millisecond: SDKs take the start from Date.now() and
      // the end as start + exact duration. Steps are ordered by start, ties (several instant calls
      // in one millisecond) by arrival; calls inside one parallel batch by end, as they finished.
      const byStart = [...calls].sort((a, b) => a.start - b.start || a.seq - b.seq);
      const index = new Map(byStart.map((c, i) => [c, i + 1]));
      replayed = byStart.map((c, i) => ({ toolName: c.call.toolName, callIndex: i + 1, startTime: c.start, endTime: c.end, ok: c.call.outcome.ok }));
      const { batchOf, lastOfBatch } = assignBatches(byStart);
      const detector = this.options.engine.createTrace(trace.traceId);
      const stepRank = new Map<string, number>();
      for (const c of byStart) {
        const key = batchOf.get(c) ?? c.spanId;
        if (!stepRank.has(key)) stepRank.set(key, stepRank.size);
      }
      const rank = (c: PendingCall): number => stepRank.get(batchOf.get(c) ?? c.spanId) ?? 0;
      const byEnd = [...calls].sort((a, b) => rank(a) - rank(b) || a.end - b.end || a.seq - b.seq);
      for (const c of byEnd) {
        const prompt = this.resolve(trace, c.spanId, 'prompt') ?? trace.lastPrompt;
        const agent = this.resolve(trace, c.spanId, 'agent') ?? trace.lastAgent;
        const call: ToolCall = {
          ...c.call,
          batch: batchOf.get(c) ?? c.spanId,
          callIndex: index.get(c) ?? 0,
          ...(prompt !== undefined ? { promptName: prompt } : {}),
          ...(agent !== undefined ? { agentName: agent } : {}),
        };
        for (const d of detector.record(call, lastOfBatch.has(c))) {
          detections.push(d);
          detectionTimes.push(c.end);
        }
      }
    }
    const first = calls.length > 0 ? Math.min(...calls.map((c) => c.start)) : Number.NaN;
    this.options.onTrace({
      traceId: trace.traceId,
      toolCalls: calls.length,
      detections,
      detectionTimes,
      calls: replayed,
      promptName: trace.lastPrompt,
      startTime: first,
    });
  }

  /** The span's own name, else the nearest ancestor's (a bounded walk: links may be cyclic in bad files). */
  private resolve(trace: PendingTrace, spanId: string, kind: 'prompt' | 'agent'): string | undefined {
    let id: string | undefined = spanId;
    for (let hops = 0; id !== undefined && hops < 256; hops++) {
      const link = trace.links.get(id);
      if (!link) return undefined;
      const name = kind === 'prompt' ? link.prompt : link.agent;
      if (name !== undefined) return name;
      id = link.parentId;
    }
    return undefined;
  }
}

/**
 * SDKs record span start times from `Date.now()` (whole milliseconds) and end times with
 * sub-millisecond precision, so a call that starts in the same millisecond its predecessor ended
 * seems to overlap it. Only an overlap longer than that quantum proves the calls ran in parallel.
 */
const START_QUANTUM_MS = 1;

/** Overlapping calls under the same parent are one parallel batch; the last to end completes it. */
function assignBatches(byStart: readonly PendingCall[]): { batchOf: Map<PendingCall, string>; lastOfBatch: Set<PendingCall> } {
  const batchOf = new Map<PendingCall, string>();
  const current = new Map<string, { key: string; end: number }>();
  const last = new Map<string, PendingCall>();
  let seq = 0;
  for (const c of byStart) {
    const parent = c.parentId ?? '-';
    const open = current.get(parent);
    let key: string;
    if (open && c.start < open.end - START_QUANTUM_MS) {
      key = open.key;
      open.end = Math.max(open.end, c.end);
    } else {
      key = `${parent}:${seq++}`;
      current.set(parent, { key, end: c.end });
    }
    batchOf.set(c, key);
    // the batch is complete at the call that ended last
    const prev = last.get(key);
    if (!prev || c.end > prev.end || (c.end === prev.end && c.seq > prev.seq)) last.set(key, c);
  }
  return { batchOf, lastOfBatch: new Set(last.values()) };
}
