import { createHash } from 'node:crypto';

/** Builds OTLP/JSON (`{"resourceSpans":[...]}`) the way the collector's file exporter writes it. */

export type AnyValue =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean }
  | { arrayValue: { values: AnyValue[] } }
  | { kvlistValue: { values: KeyValue[] } };
export interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: KeyValue[];
  events?: Array<{ timeUnixNano: string; name: string; attributes: KeyValue[] }>;
  status?: { code: number; message?: string };
}

/** Deterministic ids from a label, so fixtures are stable across regenerations. */
export const hexId = (label: string, bytes: 8 | 16): string => createHash('sha256').update(label).digest('hex').slice(0, bytes * 2);

export function anyValue(v: unknown): AnyValue {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  if (v && typeof v === 'object') return { kvlistValue: { values: attributes(v as Record<string, unknown>) } };
  return { stringValue: String(v) };
}

export function attributes(record: Record<string, unknown>): KeyValue[] {
  return Object.entries(record)
    .filter(([, v]) => v !== undefined)
    .map(([key, v]) => ({ key, value: anyValue(v) }));
}

const ns = (ms: number): string => `${BigInt(Math.round(ms * 1000)) * 1000n}`;

export interface ToolCallSpec {
  tool: string;
  args?: unknown;
  result?: unknown;
  error?: string;
  /** Structured (kvlist) attribute values, as SDK 3.x records them, instead of JSON strings. */
  structured?: boolean;
}

export interface AgentTraceSpec {
  label: string;
  prompt?: string;
  agent?: string;
  /** Each entry is one step: a call, or several parallel calls. */
  steps: Array<ToolCallSpec | ToolCallSpec[]>;
  startMs?: number;
  /** Name and attributes of step i's model-call span (default: a gen_ai chat span without usage). */
  model?: (step: number) => { name: string; attributes: Record<string, unknown> };
  /** Name and attributes of a tool span in another dialect (default: gen_ai execute_tool). */
  tool?: (call: ToolCallSpec, step: number, k: number) => { name: string; attributes: Record<string, unknown> };
  /** Name and attributes of the root span (default: invoke_agent with the agent and prompt names). */
  root?: (steps: number) => { name: string; attributes: Record<string, unknown> };
}

/** One agent run: invoke_agent root, a chat span per step, execute_tool spans; returned in end order. */
export function agentTrace(spec: AgentTraceSpec): OtlpSpan[] {
  const traceId = hexId(`trace:${spec.label}`, 16);
  const rootId = hexId(`root:${spec.label}`, 8);
  let t = spec.startMs ?? Date.parse('2026-11-21T10:00:00Z');
  const rootStart = t;
  const spans: OtlpSpan[] = [];
  spec.steps.forEach((step, i) => {
    const calls = Array.isArray(step) ? step : [step];
    const chatStart = t + 1;
    const chatEnd = chatStart + 800;
    const model = spec.model?.(i) ?? { name: 'chat mock-model', attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'mock-model' } };
    spans.push({
      traceId,
      spanId: hexId(`chat:${spec.label}:${i}`, 8),
      parentSpanId: rootId,
      name: model.name,
      kind: 3,
      startTimeUnixNano: ns(chatStart),
      endTimeUnixNano: ns(chatEnd),
      attributes: attributes(model.attributes),
    });
    let stepEnd = chatEnd;
    const toolSpans = calls.map((c, k) => {
      const start = chatEnd + 1 + k * 0.1;
      const end = start + 50 + k * 7;
      stepEnd = Math.max(stepEnd, end);
      const attrs: Record<string, unknown> = {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': c.tool,
        'gen_ai.tool.call.id': `call_${i}_${k}`,
      };
      if (c.args !== undefined) attrs['gen_ai.tool.call.arguments'] = c.structured ? c.args : JSON.stringify(c.args);
      if (c.result !== undefined && !c.error) attrs['gen_ai.tool.call.result'] = c.structured ? c.result : JSON.stringify(c.result);
      if (c.error) attrs['error.type'] = 'ToolError';
      const custom = spec.tool?.(c, i, k);
      const span: OtlpSpan = {
        traceId,
        spanId: hexId(`tool:${spec.label}:${i}:${k}`, 8),
        parentSpanId: rootId,
        name: custom?.name ?? `execute_tool ${c.tool}`,
        kind: 1,
        startTimeUnixNano: ns(start),
        endTimeUnixNano: ns(end),
        attributes: attributes(custom?.attributes ?? attrs),
        ...(c.error
          ? {
              status: { code: 2, message: c.error },
              events: [{ timeUnixNano: ns(end), name: 'exception', attributes: attributes({ 'exception.type': 'ToolError', 'exception.message': c.error }) }],
            }
          : {}),
      };
      return span;
    });
    // parallel calls end in their own order
    spans.push(...toolSpans.sort((a, b) => Number(BigInt(a.endTimeUnixNano) - BigInt(b.endTimeUnixNano))));
    t = stepEnd;
  });
  const root = spec.root?.(spec.steps.length) ?? {
    name: `invoke_agent ${spec.agent ?? 'agent'}`,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': spec.agent, 'gen_ai.prompt.name': spec.prompt },
  };
  spans.push({
    traceId,
    spanId: rootId,
    name: root.name,
    kind: 1,
    startTimeUnixNano: ns(rootStart),
    endTimeUnixNano: ns(t + 500),
    attributes: attributes(root.attributes),
  });
  return spans;
}

/** Wraps spans into one `{"resourceSpans":[...]}` export request. */
export function tracesData(spans: OtlpSpan[], service = 'agent-service'): object {
  return {
    resourceSpans: [
      {
        resource: { attributes: attributes({ 'service.name': service }) },
        scopeSpans: [{ scope: { name: 'agent', version: '1.0.0' }, spans }],
      },
    ],
  };
}

/** Splits spans into export batches of `size` (interleaving traces as a batch processor does). */
export function batches<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Merges several traces' end-ordered spans by end time (how an exporter sees concurrent runs). */
export function interleave(...traces: OtlpSpan[][]): OtlpSpan[] {
  return traces.flat().sort((a, b) => Number(BigInt(a.endTimeUnixNano) - BigInt(b.endTimeUnixNano)));
}
