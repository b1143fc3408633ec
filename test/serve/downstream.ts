import { fromBinary } from '@bufbuild/protobuf';
import { createServer, type Server } from 'node:http';
import { ExportTraceServiceRequestSchema } from '../../src/formats/protobuf/gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import { hexOf, plainAttributes } from '../../src/formats/protobuf/span-view.js';

/** A span as the fake downstream received it. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly name: string;
  readonly service: string | undefined;
  readonly attributes: Record<string, unknown>;
  readonly events: { name: string; attributes: Record<string, unknown> }[];
}

/**
 * A downstream OTLP/HTTP endpoint for tests: decodes what it receives (protobuf with the
 * generated messages, JSON by plain JSON.parse so the hex ids are checked independently) and
 * answers with the status the test sets.
 */
export class FakeDownstream {
  readonly spans: ReceivedSpan[] = [];
  readonly requests: { path: string; contentType: string | undefined; status: number }[] = [];
  /** Status to answer with; 200 by default. */
  status = 200;
  retryAfter: string | undefined;
  /** Answers a trace request this long after it arrived (a slow downstream). */
  delayMs = 0;
  /** Takes trace requests and never answers them. */
  hang = false;
  /** Headers of every request, in order. */
  readonly headers: Record<string, string | string[] | undefined>[] = [];
  private server: Server | undefined;
  private port = 0;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.headers.push(req.headers);
        if (this.hang && req.url === '/v1/traces') return;
        const answer = (): void => {
          const status = req.url === '/v1/traces' ? this.status : 200;
          this.requests.push({ path: req.url ?? '', contentType: req.headers['content-type'], status });
          if (status === 200 && req.url === '/v1/traces') this.record(Buffer.concat(chunks), req.headers['content-type']);
          res.writeHead(status, { 'content-type': req.headers['content-type'] ?? 'application/x-protobuf', ...(status !== 200 && this.retryAfter ? { 'retry-after': this.retryAfter } : {}) });
          res.end();
        };
        if (this.delayMs > 0 && req.url === '/v1/traces') setTimeout(answer, this.delayMs);
        else answer();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve));
    const address = this.server.address();
    if (!address || typeof address !== 'object') throw new Error('no address');
    this.port = address.port;
    this.url = `http://127.0.0.1:${address.port}`;
    return this;
  }

  /** Nothing listens any more (connections refused) until `start()` again on the same port. */
  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server?.listening) return resolve();
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  private record(body: Buffer, contentType: string | undefined): void {
    if (contentType === 'application/json') {
      const doc = JSON.parse(body.toString('utf8')) as JsonRequest;
      for (const rs of doc.resourceSpans ?? []) {
        const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value?.stringValue;
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            this.spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              name: s.name,
              service,
              attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, jsonScalar(a.value)])),
              events: (s.events ?? []).map((e) => ({ name: e.name, attributes: Object.fromEntries((e.attributes ?? []).map((a) => [a.key, jsonScalar(a.value)])) })),
            });
          }
        }
      }
      return;
    }
    const request = fromBinary(ExportTraceServiceRequestSchema, body);
    for (const rs of request.resourceSpans) {
      const service = rs.resource?.attributes.find((a) => a.key === 'service.name')?.value?.value.value;
      for (const ss of rs.scopeSpans) {
        for (const s of ss.spans) {
          this.spans.push({
            traceId: hexOf(s.traceId),
            spanId: hexOf(s.spanId),
            name: s.name,
            service: typeof service === 'string' ? service : undefined,
            attributes: plainAttributes(s.attributes),
            events: s.events.map((e) => ({ name: e.name, attributes: plainAttributes(e.attributes) })),
          });
        }
      }
    }
  }
}

interface JsonValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: JsonValue[] };
}
interface JsonRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value?: JsonValue }[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; name: string; attributes?: { key: string; value?: JsonValue }[]; events?: { name: string; attributes?: { key: string; value?: JsonValue }[] }[] }[] }[];
  }[];
}

function jsonScalar(v: JsonValue | undefined): unknown {
  if (!v) return undefined;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonScalar);
  return v.stringValue ?? v.boolValue ?? v.doubleValue;
}
