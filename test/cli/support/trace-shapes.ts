/**
 * The same OTLP/JSON data in the shapes other tools write (see scan-formats.cli.test.ts for the
 * sources): Grafana Tempo's API answer and Jaeger's JSON as the collector's translator makes it.
 */
type Json = Record<string, unknown>;
interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: unknown;
  kvlistValue?: unknown;
}
interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}
interface OtlpSpanJson {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: OtlpKeyValue[];
  events?: Array<{ timeUnixNano: string; name: string; attributes?: OtlpKeyValue[] }>;
  links?: Array<{ traceId: string; spanId: string }>;
  status?: { code?: number; message?: string };
}
export interface OtlpJson {
  resourceSpans: Array<{ resource?: { attributes?: OtlpKeyValue[] }; scopeSpans: Array<{ scope?: { name?: string; version?: string }; spans: OtlpSpanJson[] }> }>;
}

const KINDS = ['SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER'];
const STATUS = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];
const b64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64');

/** Tempo's rendering of the same data: base64 ids, enum names, `batches`. */
export function toTempo(otlp: OtlpJson): Json {
  return {
    batches: otlp.resourceSpans.map((rs) => ({
      ...rs,
      scopeSpans: rs.scopeSpans.map((ss) => ({
        ...ss,
        spans: ss.spans.map((s) => ({
          ...s,
          traceId: b64(s.traceId),
          spanId: b64(s.spanId),
          ...(s.parentSpanId ? { parentSpanId: b64(s.parentSpanId) } : {}),
          kind: KINDS[s.kind + 1],
          status: s.status?.code ? { code: STATUS[s.status.code], ...(s.status.message ? { message: s.status.message } : {}) } : {},
        })),
      })),
    })),
  };
}

const micros = (nanos: string): number => Number(BigInt(nanos) / 1000n);

function jaegerTag(kv: OtlpKeyValue): Json {
  const v = kv.value;
  if (v.stringValue !== undefined) return { key: kv.key, type: 'string', value: v.stringValue };
  if (v.boolValue !== undefined) return { key: kv.key, type: 'bool', value: v.boolValue };
  if (v.intValue !== undefined) return { key: kv.key, type: 'int64', value: Number(v.intValue) };
  if (v.doubleValue !== undefined) return { key: kv.key, type: 'float64', value: v.doubleValue };
  // arrays and maps: a JSON string (the translator's rule)
  return { key: kv.key, type: 'string', value: JSON.stringify(v.arrayValue ?? v.kvlistValue) };
}

/** Jaeger's rendering of the same data, as the collector's translator and the query API write it. */
export function toJaeger(otlp: OtlpJson): { data: Json[]; total: number; limit: number; offset: number; errors: null } {
  const traces = new Map<string, { spans: Json[]; processes: Json }>();
  otlp.resourceSpans.forEach((rs, r) => {
    const pid = `p${r + 1}`;
    const resource = rs.resource?.attributes ?? [];
    const serviceName = resource.find((a) => a.key === 'service.name')?.value.stringValue ?? 'unknown_service';
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        const entry = traces.get(s.traceId) ?? { spans: [], processes: {} };
        traces.set(s.traceId, entry);
        entry.processes[pid] = { serviceName, tags: resource.filter((a) => a.key !== 'service.name').map(jaegerTag) };
        const tags = (s.attributes ?? []).map(jaegerTag);
        if (ss.scope?.name) tags.push({ key: 'otel.scope.name', type: 'string', value: ss.scope.name });
        if (s.kind !== 1) tags.push({ key: 'span.kind', type: 'string', value: (KINDS[s.kind + 1] ?? '').replace('SPAN_KIND_', '').toLowerCase() });
        if (s.status?.code === 2) {
          tags.push({ key: 'otel.status_code', type: 'string', value: 'ERROR' }, { key: 'error', type: 'bool', value: true });
          if (s.status.message) tags.push({ key: 'otel.status_description', type: 'string', value: s.status.message });
        } else if (s.status?.code === 1) tags.push({ key: 'otel.status_code', type: 'string', value: 'OK' });
        const references = [
          ...(s.parentSpanId ? [{ refType: 'CHILD_OF', traceID: s.traceId, spanID: s.parentSpanId }] : []),
          ...(s.links ?? []).map((l) => ({ refType: 'FOLLOWS_FROM', traceID: l.traceId, spanID: l.spanId })),
        ];
        entry.spans.push({
          traceID: s.traceId,
          spanID: s.spanId,
          flags: 1,
          operationName: s.name,
          references,
          startTime: micros(s.startTimeUnixNano),
          duration: micros(s.endTimeUnixNano) - micros(s.startTimeUnixNano),
          tags,
          logs: (s.events ?? []).map((e) => ({ timestamp: micros(e.timeUnixNano), fields: [{ key: 'event', type: 'string', value: e.name }, ...(e.attributes ?? []).map(jaegerTag)] })),
          processID: pid,
          warnings: null,
        });
      }
    }
  });
  const data = [...traces].map(([traceID, t]) => ({ traceID, spans: t.spans, processes: t.processes, warnings: null }));
  return { data, total: 0, limit: 0, offset: 0, errors: null };
}

