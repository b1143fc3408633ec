/**
 * What the report must show, worked out without the report code: tool calls straight from the
 * fixture's spans, detections from `scan --json`, and each detection's time as the end of the
 * call it names.
 */
import type { LoopDetection } from '../../../src/index.js';
import type { AnyValue, OtlpSpan } from '../../support/otlp.js';

export interface FixtureCall {
  readonly tool: string;
  readonly end: number;
  readonly failed: boolean;
  readonly arguments: string | undefined;
  readonly result: string | undefined;
  readonly error: string | undefined;
}

export interface FixtureTrace {
  readonly traceId: string;
  readonly prompt: string | undefined;
  /** Tool calls by start time: index i is call i + 1. */
  readonly calls: readonly FixtureCall[];
}

const str = (v: AnyValue | undefined): string | undefined => (v && 'stringValue' in v ? v.stringValue : undefined);
const attr = (s: OtlpSpan, key: string): string | undefined => str(s.attributes.find((a) => a.key === key)?.value);
const ms = (ns: string): number => Number(BigInt(ns) / 1000n) / 1000;

export function fixtureTruth(traces: readonly OtlpSpan[][]): FixtureTrace[] {
  return traces.map((spans) => {
    const tools = spans.filter((s) => attr(s, 'gen_ai.operation.name') === 'execute_tool').sort((a, b) => ms(a.startTimeUnixNano) - ms(b.startTimeUnixNano));
    const root = spans.find((s) => s.parentSpanId === undefined);
    return {
      traceId: spans[0]?.traceId ?? '',
      prompt: root ? attr(root, 'gen_ai.prompt.name') : undefined,
      calls: tools.map((s) => ({
        tool: attr(s, 'gen_ai.tool.name') ?? '',
        end: ms(s.endTimeUnixNano),
        failed: s.status?.code === 2,
        arguments: attr(s, 'gen_ai.tool.call.arguments'),
        result: attr(s, 'gen_ai.tool.call.result'),
        error: s.status?.message,
      })),
    };
  });
}

/** When a detection happened: the end of the call that completed it. */
export function detectionTime(traces: readonly FixtureTrace[], d: LoopDetection): number {
  const call = traces.find((t) => t.traceId === d.traceId)?.calls[d.callIndex - 1];
  if (!call) throw new Error(`no call ${d.callIndex} in trace ${d.traceId}`);
  return call.end;
}

/** Every string inside the tool calls' arguments, results and error messages. */
export function rawContent(traces: readonly FixtureTrace[]): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.add(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  for (const t of traces) {
    for (const c of t.calls) {
      for (const json of [c.arguments, c.result]) if (json !== undefined) walk(JSON.parse(json));
      if (c.error !== undefined) out.add(c.error);
    }
  }
  return out;
}
