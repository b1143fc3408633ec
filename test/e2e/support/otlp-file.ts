import { existsSync, readFileSync } from 'node:fs';

/** A span as the collector's file exporter wrote it (OTLP/JSON, ids in hex). */
export interface ExportedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly name: string;
  readonly eventNames: readonly string[];
  readonly statusCode: number;
  readonly attributes: Record<string, string>;
}

interface JsonAnyValue {
  readonly stringValue?: string;
  readonly intValue?: string | number;
  readonly boolValue?: boolean;
  readonly doubleValue?: number;
}
interface JsonKeyValue {
  readonly key: string;
  readonly value?: JsonAnyValue;
}
interface JsonSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly name: string;
  readonly attributes?: readonly JsonKeyValue[];
  readonly events?: readonly { readonly name: string }[];
  readonly status?: { readonly code?: number };
}
interface JsonTraces {
  readonly resourceSpans?: readonly { readonly scopeSpans?: readonly { readonly spans?: readonly JsonSpan[] }[] }[];
}

function scalar(v: JsonAnyValue | undefined): string {
  if (!v) return '';
  return String(v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue ?? '');
}

/**
 * Reads the file exporter's JSON Lines (one {"resourceSpans":[...]} per line). A last line
 * without its newline may still be being written and is left for the next read.
 */
export function readExportedSpans(file: string): ExportedSpan[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const complete = text.endsWith('\n') ? text : text.slice(0, text.lastIndexOf('\n') + 1);
  const spans: ExportedSpan[] = [];
  complete.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let parsed: JsonTraces;
    try {
      parsed = JSON.parse(line) as JsonTraces;
    } catch (e) {
      throw new Error(`${file}:${i + 1}: not OTLP/JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
    for (const rs of parsed.resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          spans.push({
            traceId: s.traceId.toLowerCase(),
            spanId: s.spanId.toLowerCase(),
            name: s.name,
            eventNames: (s.events ?? []).map((e) => e.name),
            statusCode: s.status?.code ?? 0,
            attributes: Object.fromEntries((s.attributes ?? []).map((kv) => [kv.key, scalar(kv.value)])),
          });
        }
      }
    }
  });
  return spans;
}

/** span ids per trace id. */
export function spansByTrace(spans: readonly ExportedSpan[]): Map<string, string[]> {
  const byTrace = new Map<string, string[]>();
  for (const s of spans) {
    const list = byTrace.get(s.traceId) ?? [];
    list.push(s.spanId);
    byTrace.set(s.traceId, list);
  }
  return byTrace;
}
