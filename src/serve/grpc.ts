import { Server, ServerCredentials, status as GrpcStatus, type ServiceDefinition, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import type { Duplex } from 'node:stream';
import { decodeTraceRequest, encodeTraceResponse, OtlpDecodeError } from '../formats/protobuf/codec.js';
import { TraceService } from '../formats/protobuf/gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import type { Intake } from './http.js';

/** gRPC metadata key of a retry hint in seconds (the collector reads RetryInfo; this is informational). */
const identity = (b: Buffer): Buffer => b;

/**
 * OTLP/gRPC on the same port as OTLP/HTTP (the spec allows it): the collector's `load_balancing`
 * exporter speaks only OTLP/gRPC, and this is how it reaches `serve`. Requests are decoded by
 * the same code as OTLP/HTTP bodies; grpc-js does the HTTP/2 framing and gzip.
 */
export class GrpcFront {
  private readonly server: Server;
  private readonly injector: { injectConnection(c: Duplex): void; drain(graceMs: number): void; destroy(): void };

  constructor(intake: Intake) {
    this.server = new Server({ 'grpc.max_receive_message_length': intake.maxBodyBytes, 'grpc.max_send_message_length': intake.maxBodyBytes });
    const method = TraceService.method.export;
    const definition: ServiceDefinition = {
      Export: {
        path: `/${TraceService.typeName}/${method.name}`,
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    };
    this.server.addService(definition, {
      Export: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
        try {
          const refusal = intake.refusal();
          if (refusal) return callback({ code: GrpcStatus.UNAVAILABLE, details: `${refusal.why} (retry in ${refusal.retryAfterSeconds} s)` });
          const result = intake.ingest(decodeTraceRequest(call.request, 'protobuf'));
          callback(null, Buffer.from(encodeTraceResponse('protobuf', result.rejected, result.message)));
        } catch (e) {
          if (e instanceof OtlpDecodeError) return callback({ code: GrpcStatus.INVALID_ARGUMENT, details: e.message });
          callback({ code: GrpcStatus.UNAVAILABLE, details: `internal error: ${e instanceof Error ? e.message : String(e)}` });
        }
      },
    });
    this.injector = this.server.createConnectionInjector(ServerCredentials.createInsecure());
  }

  accept(connection: Duplex): void {
    this.injector.injectConnection(connection);
  }

  close(graceMs: number): void {
    this.injector.drain(graceMs);
    setTimeout(() => this.injector.destroy(), graceMs).unref();
  }
}
