import { create } from '@bufbuild/protobuf';
import type { InstrumentationScope } from '../formats/protobuf/gen/opentelemetry/proto/common/v1/common_pb.js';
import {
  ExportTraceServiceRequestSchema,
  type ExportTraceServiceRequest,
} from '../formats/protobuf/gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import type { Resource } from '../formats/protobuf/gen/opentelemetry/proto/resource/v1/resource_pb.js';
import type { ResourceSpans, ScopeSpans, Span } from '../formats/protobuf/gen/opentelemetry/proto/trace/v1/trace_pb.js';
import type { SpoolSegment } from './spool.js';

/** The resource and scope a span arrived under, without the request's other spans. */
export interface SpanOrigin {
  readonly resource: Resource | undefined;
  readonly resourceSchemaUrl: string;
  readonly scope: InstrumentationScope | undefined;
  readonly scopeSchemaUrl: string;
}

/** A received span held with its trace until the trace is complete, then forwarded as it came (plus events). */
export interface HeldSpan {
  readonly span: Span;
  readonly origin: SpanOrigin;
  /** What it holds in memory (estimated: `spanBytes`, plus its share of the resource and scope). */
  readonly bytes: number;
  /** With a spool: the file it was written to, which is kept until the span is forwarded. */
  readonly spooled: SpoolSegment | undefined;
}

/** One origin per scope of a request: every span of that scope shares it. */
export function originsOf(rs: ResourceSpans): { scopeSpans: ScopeSpans; origin: SpanOrigin }[] {
  return rs.scopeSpans.map((ss) => ({
    scopeSpans: ss,
    origin: { resource: rs.resource, resourceSchemaUrl: rs.schemaUrl, scope: ss.scope, scopeSchemaUrl: ss.schemaUrl },
  }));
}

/**
 * Spans back into one export request, grouped by the resource and scope they arrived under.
 * Spans of one request share an origin object; the same resource sent in two requests gives two
 * `ResourceSpans` entries, which OTLP allows.
 */
export function exportRequestOf(spans: readonly HeldSpan[]): ExportTraceServiceRequest {
  const byResource = new Map<Resource | undefined, { resourceSchemaUrl: string; scopes: Map<SpanOrigin, Span[]> }>();
  for (const { span, origin } of spans) {
    let r = byResource.get(origin.resource);
    if (!r) byResource.set(origin.resource, (r = { resourceSchemaUrl: origin.resourceSchemaUrl, scopes: new Map() }));
    let list = r.scopes.get(origin);
    if (!list) r.scopes.set(origin, (list = []));
    list.push(span);
  }
  return create(ExportTraceServiceRequestSchema, {
    resourceSpans: [...byResource.entries()].map(([resource, r]) => ({
      ...(resource ? { resource } : {}),
      schemaUrl: r.resourceSchemaUrl,
      scopeSpans: [...r.scopes.entries()].map(([origin, list]) => ({
        ...(origin.scope ? { scope: origin.scope } : {}),
        schemaUrl: origin.scopeSchemaUrl,
        spans: list,
      })),
    })),
  });
}
