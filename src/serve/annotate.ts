import { create } from '@bufbuild/protobuf';
import { traceLoopSummary } from '../cost/summary.js';
import { ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_PROMPT_NAME, ATTR_GEN_AI_TOOL_NAME, GEN_AI_OPERATION_EXECUTE_TOOL } from '../conventions/attributes.js';
import type { LoopDetection } from '../detector/types.js';
import { LOOP_EVENT_NAME, LOOP_SUMMARY_EVENT_NAME, loopEventAttributes, loopSummaryAttributes } from '../otel/event-attributes.js';
import { SpanFlags, Span_EventSchema, type Span } from '../formats/protobuf/gen/opentelemetry/proto/trace/v1/trace_pb.js';
import { hexOf, keyValue } from '../formats/protobuf/span-view.js';
import type { ReplayedTrace } from '../replay/types.js';
import type { HeldSpan } from './held.js';

export interface AnnotateOptions {
  /** Also write `gen_ai.operation.name` / `gen_ai.tool.name` on tool spans of other conventions (the processor's `normalizeToolSpans`). */
  readonly normalizeToolSpans: boolean;
}

/**
 * Writes on the held spans of a completed trace what the processor writes on live spans: a
 * `loop.detected` event on the tool span whose call completed the evidence (the contract's
 * attributes), the prompt template name on every tool span that lacks it, and the gen_ai tool
 * keys on tool spans of other conventions, so that the collector counts every convention the same way.
 */
export function annotateTrace(trace: ReplayedTrace<HeldSpan>, options: AnnotateOptions): void {
  if (trace.calls.length === 0) return;
  const bySpanId = new Map<string, Span>();
  for (const held of trace.payloads) bySpanId.set(hexOf(held.span.spanId), held.span);
  for (const call of trace.calls) {
    const span = bySpanId.get(call.spanId);
    if (!span) continue; // a call reported in an earlier completion of the trace
    const keys = new Set(span.attributes.map((kv) => kv.key));
    if (call.promptName !== undefined && !keys.has(ATTR_GEN_AI_PROMPT_NAME)) span.attributes.push(keyValue(ATTR_GEN_AI_PROMPT_NAME, call.promptName));
    if (options.normalizeToolSpans) {
      if (!keys.has(ATTR_GEN_AI_OPERATION_NAME)) span.attributes.push(keyValue(ATTR_GEN_AI_OPERATION_NAME, GEN_AI_OPERATION_EXECUTE_TOOL));
      if (!keys.has(ATTR_GEN_AI_TOOL_NAME)) span.attributes.push(keyValue(ATTR_GEN_AI_TOOL_NAME, call.toolName));
    }
  }
  for (const d of trace.detections) {
    const span = bySpanId.get(d.spanId);
    if (span) addLoopEvent(span, d);
  }
  addSummaryEvent(trace);
}

/**
 * The trace's `loop.summary` on its local root, as the processor writes it when the root ends: a
 * trace completed for the first time, with detections, whose root is among its spans (serve
 * cannot stop a run: `loop.stopped` is false).
 */
function addSummaryEvent(trace: ReplayedTrace<HeldSpan>): void {
  const first = trace.detections[0];
  if (first === undefined || trace.continued) return;
  const root = trace.payloads.find(({ span }) => span.parentSpanId.length === 0 || (span.flags & SpanFlags.CONTEXT_IS_REMOTE_MASK) !== 0)?.span;
  if (root === undefined) return;
  const attributes = Object.entries(loopSummaryAttributes(traceLoopSummary(first, trace.detections.length, false, trace.loopSpend))).map(([k, v]) => keyValue(k, v));
  root.events.push(create(Span_EventSchema, { name: LOOP_SUMMARY_EVENT_NAME, timeUnixNano: root.endTimeUnixNano, attributes }));
}

function addLoopEvent(span: Span, d: LoopDetection): void {
  const attributes = Object.entries(loopEventAttributes(d)).map(([k, v]) => keyValue(k, v));
  // the detection happened when the call that completed the evidence ended
  span.events.push(create(Span_EventSchema, { name: LOOP_EVENT_NAME, timeUnixNano: span.endTimeUnixNano, attributes }));
}
