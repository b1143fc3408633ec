import { findToolAdapter, readAgentName, readPromptName } from '../conventions/index.js';
import type { ConventionAdapter } from '../conventions/types.js';
import type { LoopEngine } from '../detector/engine.js';
import { buildToolCall } from '../detector/tool-call.js';
import type { LoopDetection, ToolCall } from '../detector/types.js';
import type { DecodedSpan } from './otlp-json.js';

/** A tool call read from a span, waiting for its trace to be complete. */
interface PendingCall {
  readonly call: ToolCall;
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
  constructor(readonly traceId: string) {}
}

/** A finished trace and what the engine found in it. */
export interface ReplayedTrace {
  readonly traceId: string;
  readonly toolCalls: number;
  readonly detections: readonly LoopDetection[];
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
  readonly onProblem?: (message: string) => void;
}

/**
 * Rebuilds what the live processor saw from exported spans. Files hold spans in end order with
 * traces interleaved, so calls are kept per trace until the trace's root span arrives (roots end
 * last), then numbered by start time, grouped into batches (overlapping calls under one parent)
 * and replayed in end order, each batch complete at its last call: the same input the processor
 * gives the engine, so `scan` reports what the processor would have reported.
 */
export class TraceReplayer {
  private readonly open = new Map<string, PendingTrace>();
  private readonly maxOpen: number;
  spans = 0;
  toolCalls = 0;
  traces = 0;

  constructor(private readonly options: ReplayOptions) {
    this.maxOpen = options.maxOpenTraces ?? 50_000;
  }

  add(span: DecodedSpan): void {
    this.spans++;
    let trace = this.open.get(span.traceId);
    if (!trace) {
      trace = new PendingTrace(span.traceId);
      this.open.set(span.traceId, trace);
      if (this.open.size > this.maxOpen) {
        const oldest = this.open.values().next();
        if (!oldest.done) this.complete(oldest.value);
      }
    }
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
      trace.calls.push({ call, spanId: span.spanId, parentId: span.parentSpanId, start: span.startTime, end: span.endTime });
    }
    // The root ends last: the trace is complete (a root that is itself a tool call is not an end).
    if (span.parentSpanId === undefined && !adapter) this.complete(trace);
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
    if (calls.length > 0) {
      const byStart = [...calls].sort((a, b) => a.start - b.start || a.end - b.end);
      const index = new Map(byStart.map((c, i) => [c, i + 1]));
      const { batchOf, lastOfBatch } = assignBatches(byStart);
      const detector = this.options.engine.createTrace(trace.traceId);
      const byEnd = [...calls].sort((a, b) => a.end - b.end || a.start - b.start || (index.get(a) ?? 0) - (index.get(b) ?? 0));
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
        detections.push(...detector.record(call, lastOfBatch.has(c)));
      }
    }
    const first = calls.length > 0 ? Math.min(...calls.map((c) => c.start)) : Number.NaN;
    this.options.onTrace({
      traceId: trace.traceId,
      toolCalls: calls.length,
      detections,
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
  const current = new Map<string, { key: string; end: number; last: PendingCall }>();
  const lastOfBatch = new Set<PendingCall>();
  let seq = 0;
  for (const c of byStart) {
    const parent = c.parentId ?? '-';
    const open = current.get(parent);
    if (open && c.start < open.end - START_QUANTUM_MS) {
      batchOf.set(c, open.key);
      if (c.end >= open.end) {
        open.end = c.end;
        open.last = c;
      }
      continue;
    }
    if (open) lastOfBatch.add(open.last);
    const key = `${parent}:${seq++}`;
    current.set(parent, { key, end: c.end, last: c });
    batchOf.set(c, key);
  }
  for (const open of current.values()) lastOfBatch.add(open.last);
  return { batchOf, lastOfBatch };
}
