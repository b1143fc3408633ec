import { existsSync, readFileSync } from 'node:fs';

/** Spans of the collector file exporter's output with their events' attributes (OTLP/JSON, hex ids). */
export interface FileSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly name: string;
  readonly attributes: Record<string, unknown>;
  readonly events: { readonly name: string; readonly attributes: Record<string, unknown> }[];
}

export interface FileLogRecord {
  readonly traceId: string;
  readonly spanId: string;
  readonly eventName: string;
  readonly severityText: string;
  readonly attributes: Record<string, unknown>;
}

interface JValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: JValue[] };
}
type JAttrs = { key: string; value?: JValue }[] | undefined;

function value(v: JValue | undefined): unknown {
  if (!v) return undefined;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return v.stringValue ?? v.boolValue ?? v.doubleValue;
}
const attrs = (list: JAttrs): Record<string, unknown> => Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));

/** Complete lines of a JSON Lines file the collector may still be writing. */
function lines(file: string): unknown[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const complete = text.endsWith('\n') ? text : text.slice(0, text.lastIndexOf('\n') + 1);
  return complete
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
}

export function readFileSpans(file: string): FileSpan[] {
  const out: FileSpan[] = [];
  for (const doc of lines(file) as { resourceSpans?: { scopeSpans?: { spans?: { traceId: string; spanId: string; name: string; attributes?: JAttrs; events?: { name: string; attributes?: JAttrs }[] }[] }[] }[] }[]) {
    for (const rs of doc.resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          out.push({
            traceId: s.traceId.toLowerCase(),
            spanId: s.spanId.toLowerCase(),
            name: s.name,
            attributes: attrs(s.attributes),
            events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attrs(e.attributes) })),
          });
        }
      }
    }
  }
  return out;
}

export function readFileLogRecords(file: string): FileLogRecord[] {
  const out: FileLogRecord[] = [];
  for (const doc of lines(file) as { resourceLogs?: { scopeLogs?: { logRecords?: { traceId?: string; spanId?: string; eventName?: string; severityText?: string; attributes?: JAttrs }[] }[] }[] }[]) {
    for (const rl of doc.resourceLogs ?? []) {
      for (const sl of rl.scopeLogs ?? []) {
        for (const r of sl.logRecords ?? []) {
          out.push({
            traceId: (r.traceId ?? '').toLowerCase(),
            spanId: (r.spanId ?? '').toLowerCase(),
            eventName: r.eventName ?? '',
            severityText: r.severityText ?? '',
            attributes: attrs(r.attributes),
          });
        }
      }
    }
  }
  return out;
}
