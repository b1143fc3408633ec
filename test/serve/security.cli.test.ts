/**
 * Issue 28, Deliver 4: a receiver reached over a network speaks TLS and asks for credentials (a
 * bearer token or a header), as the collector's OTLP exporters can send them. Certificates are
 * made at test time by Debian's openssl (a throwaway CA and a certificate for 127.0.0.1); no key
 * is committed.
 */
import { credentials as grpcCredentials, makeGenericClientConstructor, Metadata, type ServiceError } from '@grpc/grpc-js';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_PATH } from '../../src/serve/grpc.js';
import { BIN, ensureBuilt } from '../cli/support/built-bin.js';
import { freePorts } from '../e2e/support/ports.js';
import { json, loopSpans, postJson, protobuf, startServe, until } from './support.js';

let dir: string;
let tls: { cert: Buffer; key: Buffer };
let ca: Buffer;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'loopwatch-tls-'));
  const openssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=loopwatch test CA');
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'san.ext');
  tls = { cert: readFileSync(join(dir, 'server.pem')), key: readFileSync(join(dir, 'server.key')) };
  ca = readFileSync(join(dir, 'ca.pem'));
});

function httpsPost(port: number, body: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path: '/v1/traces', method: 'POST', ca, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const Client = makeGenericClientConstructor(
  { Export: { path: EXPORT_PATH, requestStream: false, responseStream: false, requestSerialize: (b: Buffer) => b, requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b } },
  'TraceService',
);
type ExportClient = { Export: (b: Buffer, metadata: Metadata, cb: (e: ServiceError | null) => void) => void; close: () => void };

function grpcExport(client: ExportClient, body: Uint8Array, metadata = new Metadata()): Promise<ServiceError | null> {
  return new Promise((resolve) => client.Export(Buffer.from(body), metadata, (e) => resolve(e)));
}

describe('serve over TLS, with credentials', () => {
  it('speaks TLS on its one port: HTTPS and gRPC over TLS (h2 by ALPN) are taken, cleartext is not', async () => {
    const { port, down } = await startServe({ tls });
    const a = loopSpans('tls-http');
    expect((await httpsPost(port, json(a))).status).toBe(200);
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    const client = new Client(`127.0.0.1:${port}`, grpcCredentials.createSsl(ca)) as unknown as ExportClient;
    const b = loopSpans('tls-grpc');
    expect(await grpcExport(client, protobuf(b))).toBeNull();
    client.close();
    await until(() => down.spans.length === a.length + b.length, 'both forwarded');
  });

  it('asks for a bearer token (401 / UNAUTHENTICATED without it, in constant time), but not on /healthz and /livez', async () => {
    const { base, port, down } = await startServe({ credentials: { bearerToken: 's3cret-token' } });
    const spans = loopSpans('bearer');
    const none = await postJson(base, json(spans));
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect((await postJson(base, json(spans), { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await postJson(base, json(spans), { authorization: 'bearer s3cret-token' })).status).toBe(200);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    const client = new Client(`127.0.0.1:${port}`, grpcCredentials.createInsecure()) as unknown as ExportClient;
    expect((await grpcExport(client, protobuf(loopSpans('bearer-grpc'))))?.code).toBe(16);
    const metadata = new Metadata();
    metadata.set('authorization', 'Bearer s3cret-token');
    const other = loopSpans('bearer-grpc-ok');
    expect(await grpcExport(client, protobuf(other), metadata)).toBeNull();
    client.close();
    await until(() => down.spans.length === spans.length + other.length, 'the authorized requests forwarded');
  });

  it('asks for a header when told to (x-api-key)', async () => {
    const { base } = await startServe({ credentials: { header: { name: 'x-api-key', value: 'k-123' } } });
    expect((await postJson(base, json(loopSpans('h1')))).status).toBe(401);
    expect((await postJson(base, json(loopSpans('h2')), { 'x-api-key': 'k-124' })).status).toBe(401);
    expect((await postJson(base, json(loopSpans('h3')), { 'x-api-key': 'k-123' })).status).toBe(200);
  });

  it('the command takes --tls-cert, --tls-key and --bearer-token-file', async () => {
    ensureBuilt();
    writeFileSync(join(dir, 'token'), 'file-token\n');
    const [port] = (await freePorts(1)) as [number];
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--port', String(port), '--forward', 'http://127.0.0.1:9', '--tls-cert', join(dir, 'server.pem'), '--tls-key', join(dir, 'server.key'), '--bearer-token-file', join(dir, 'token')],
      { env: { ...process.env, OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await until(() => stderr.includes('forwarding to'), 'serve started', 20_000);
      expect(stderr).toMatch(/listening on 127\.0\.0\.1:\d+ \(TLS\).*credentials required/);
      expect((await httpsPost(port, json(loopSpans('cli-tls')))).status).toBe(401);
      expect((await httpsPost(port, json(loopSpans('cli-tls')), { authorization: 'Bearer file-token' })).status).toBe(200);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
