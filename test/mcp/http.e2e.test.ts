/**
 * E2E of `loopwatch mcp --upstream` (Streamable HTTP, issue 31): the official TypeScript SDK
 * client through the built CLI to a Streamable HTTP server built with the SDK, with SSE
 * responses and with JSON ones. The server records every POST exchange as it was on the wire, to
 * compare with what the client sent and received.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePorts } from '../e2e/support/ports.js';
import { startProcess, waitFor, type ManagedProcess } from '../e2e/support/process.js';
import { CLI, ORDER_SERVER, resultText, tempDir } from './support/proxy.js';

const started: ManagedProcess[] = [];
afterAll(async () => {
  await Promise.allSettled(started.map((p) => p.stop()));
});

interface Exchange {
  readonly request: string;
  readonly response: string;
}

async function stack(json: boolean): Promise<{ url: string; record: string; proxyLog: string }> {
  const dir = tempDir('http');
  const [serverPort, proxyPort] = (await freePorts(2)) as [number, number];
  const record = join(dir, 'exchanges.jsonl');
  const server = startProcess({
    name: 'order-server',
    command: process.execPath,
    args: [...ORDER_SERVER, '--http', String(serverPort), ...(json ? ['--json'] : []), '--record', record],
    env: process.env,
    logFile: join(dir, 'order-server.log'),
  });
  started.push(server);
  await waitFor(async () => (readFileSync(server.logFile, 'utf8').includes('listening') ? true : undefined), { timeoutMs: 30_000, what: 'order server', processes: [server] });
  const proxy = startProcess({
    name: 'loopwatch-mcp',
    command: process.execPath,
    args: [CLI, 'mcp', '--upstream', `http://127.0.0.1:${serverPort}/mcp`, '--port', String(proxyPort)],
    env: { ...process.env, OTEL_SDK_DISABLED: 'true' },
    logFile: join(dir, 'proxy.log'),
  });
  started.push(proxy);
  await waitFor(async () => (readFileSync(proxy.logFile, 'utf8').includes('listening on') ? true : undefined), { timeoutMs: 30_000, what: 'loopwatch mcp --upstream', processes: [proxy] });
  return { url: `http://127.0.0.1:${proxyPort}/mcp`, record, proxyLog: proxy.logFile };
}

/** The official client, recording the bodies it sent and received through its fetch. */
function recordingClient(url: string, token: string): { client: Client; transport: StreamableHTTPClientTransport; exchanges: Exchange[] } {
  const exchanges: Exchange[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method !== 'POST') return response;
      const bytes = Buffer.from(await response.arrayBuffer());
      exchanges.push({ request: Buffer.from(String(init.body)).toString('base64'), response: bytes.toString('base64') });
      return new Response(bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
    },
  });
  return { client: new Client({ name: 'loopwatch-e2e', version: '1.0.0' }), transport, exchanges };
}

function recorded(file: string): (Exchange & { authorization: string | null })[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Exchange & { authorization: string | null });
}

describe('loopwatch mcp --upstream, with the official TypeScript SDK client', { timeout: 120_000 }, () => {
  for (const json of [false, true]) {
    it(`${json ? 'JSON' : 'SSE'} responses: an honest session byte for byte, Authorization untouched; a loop hinted, then refused without reaching the server`, async () => {
      const { url, record, proxyLog } = await stack(json);
      const { client, transport, exchanges } = recordingClient(url, 'secret-token-1');
      await client.connect(transport);
      expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      await client.listTools();
      expect(resultText(await client.callTool({ name: 'echo', arguments: { text: 'hello' } }))).toBe('hello');
      const loop = [];
      for (let i = 0; i < 4; i++) loop.push(resultText(await client.callTool({ name: 'lookup_order', arguments: { order_id: 'A-1042' } })));
      expect(resultText(await client.callTool({ name: 'echo', arguments: { text: 'after' } }))).toBe('after');
      await transport.terminateSession();
      await client.close();

      expect(loop[0]).toContain('locked by another process');
      expect(loop[1]).toBe(loop[0]);
      expect(loop[2]).toContain("[loopwatch] This call was not run: 'lookup_order' already failed twice");
      expect(loop[3]).toContain('[loopwatch] This call was refused and not run');
      // every exchange the server saw is one the client made, byte for byte; the two answered here never reached it
      const server = recorded(record);
      const answered = exchanges.filter((e) => Buffer.from(e.response, 'base64').includes('[loopwatch]'));
      expect(answered).toHaveLength(2);
      expect(exchanges.filter((e) => !answered.includes(e)).map(({ request, response }) => ({ request, response }))).toEqual(server.map(({ request, response }) => ({ request, response })));
      expect(server.every((e) => e.authorization === 'Bearer secret-token-1')).toBe(true);
      expect(readFileSync(proxyLog, 'utf8')).toContain("blocked: error_pattern critical on 'lookup_order' (session:http:");
    });
  }

  for (const json of [false, true]) {
    it(`${json ? 'JSON' : 'SSE'} responses: a JSON-RPC batch has each tools/call guarded; the upstream gets the rest, the client every answer by id`, async () => {
      const { url, record } = await stack(json);
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' };
      /** The JSON-RPC responses of a POST, from a JSON body or SSE events, in the order they came. */
      const post = async (body: unknown): Promise<{ status: number; responses: { id: number; result: { content: { text: string }[] } }[] }> => {
        const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
        const session = r.headers.get('mcp-session-id');
        if (session) headers['mcp-session-id'] = session;
        const text = await r.text();
        const messages = (r.headers.get('content-type') ?? '').startsWith('text/event-stream')
          ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as unknown)
          : text ? [JSON.parse(text) as unknown] : [];
        return { status: r.status, responses: messages.flat() as never };
      };
      const textOf = (responses: { id: number; result: { content: { text: string }[] } }[]) => Object.fromEntries(responses.map((m) => [m.id, m.result.content[0]?.text ?? '']));
      const lookup = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'lookup_order', arguments: { order_id: 'A-1' } } });
      const echo = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `echo ${id}` } } });
      await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'batch', version: '1' } } });
      expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);

      expect(textOf((await post([lookup(1), echo(2)])).responses)).toEqual({ 1: expect.stringContaining('locked by another process'), 2: 'echo 2' });
      await post([lookup(3), echo(4)]);
      const third = await post([echo(5), lookup(6)]);
      expect(third.status).toBe(200);
      expect(third.responses.map((m) => m.id)).toEqual([6, 5]);
      expect(textOf(third.responses)).toEqual({ 5: 'echo 5', 6: expect.stringMatching(/^\[loopwatch\] This call was not run: 'lookup_order' already failed twice/) });
      const refused = await post([lookup(7)]);
      expect(refused.status).toBe(200);
      expect(textOf(refused.responses)[7]).toMatch(/^\[loopwatch\] This call was refused and not run/);

      // what the upstream got: the batches as they were, then the third without the hinted call, never the fourth
      const bodies = recorded(record).map((e) => Buffer.from(e.request, 'base64').toString('utf8'));
      expect(bodies.slice(2)).toEqual([JSON.stringify([lookup(1), echo(2)]), JSON.stringify([lookup(3), echo(4)]), JSON.stringify([echo(5)])]);
    });
  }

  it('refuses a browser page from another origin (403), accepts localhost pages', async () => {
    const { url } = await stack(true);
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const post = (origin: string) =>
      fetch(url, { method: 'POST', headers: { origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(init) });
    const evil = await post('https://evil.example');
    expect(evil.status).toBe(403);
    const local = await post('http://localhost:3000');
    expect(local.status).toBe(200);
  });
});
