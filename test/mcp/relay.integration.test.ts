/**
 * The proxies in process, with the real guard and engine: a tool result goes out to the client
 * before the guard reads it (its parse, fingerprint and the engine's update come after the
 * write), over stdio and over Streamable HTTP; and a batch the upstream cannot take still gets
 * the guard's own answers.
 */
import { createServer, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LoopEngine } from '../../src/detector/engine.js';
import { McpCallGuard } from '../../src/mcp/call-guard.js';
import { startHttpProxy, type HttpProxy } from '../../src/mcp/http.js';
import { startStdioProxy } from '../../src/mcp/stdio.js';
import { McpTelemetry } from '../../src/mcp/telemetry.js';
import { BATCH_SERVER } from './support/proxy.js';

let telemetry: McpTelemetry;
beforeAll(async () => {
  telemetry = await McpTelemetry.fromEnv({}, 'test', () => undefined);
});
const said: string[] = [];
const newGuard = (transport: 'pipe' | 'http'): McpCallGuard =>
  new McpCallGuard({ engine: new LoopEngine(), action: 'graduated', idleGapMs: 60_000, telemetry, transport, say: (l) => said.push(l) });
const call = (id: number, name: string, args: object) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
/** The one run of a session without trace context: its calls as the guard recorded them. */
const statuses = (g: McpCallGuard, key: string) => g.runs.runOf(key, undefined).guard.recentCalls().map((r) => r.status);
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.allSettled(closers.splice(0).map((c) => c()));
});

describe('a tool result is relayed before it is read', () => {
  it('stdio: the result is read once its last bytes are written to the client, then without waiting for another message', async () => {
    const g = newGuard('pipe');
    const input = new PassThrough();
    /** For each line written to the client: was the guard still waiting for it then? */
    const written: { line: string; unread: boolean }[] = [];
    /** A client slow to take the bytes: each write completes when the test says. */
    const held: (() => void)[] = [];
    const output = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter((l) => l !== '')) written.push({ line, unread: g.waiting });
        held.push(done);
      },
    });
    const proxy = startStdioProxy({ command: process.execPath, args: [BATCH_SERVER], env: process.env, guard: g, input, output, say: (l) => said.push(l) });
    closers.push(async () => {
      input.end();
      await proxy.ended;
    });
    input.write(`${JSON.stringify(call(1, 'echo', { text: 'x'.repeat(100_000) }))}\n`);
    await vi.waitFor(() => expect(written.some((w) => w.line.startsWith('{"jsonrpc":"2.0","id":1,"result"'))).toBe(true), { timeout: 10_000 });
    expect(written.find((w) => w.line.includes('"id":1'))?.unread).toBe(true);
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(g.waiting).toBe(true); // its bytes are not all written yet
    // the writes complete; nothing else is sent: the reading does not wait for the next message
    // (a Writable writes one chunk at a time: the next one is handed over when the previous one is done)
    for (let i = 0; i < 20 && held.length > 0; i++) {
      for (const done of held.splice(0)) done();
      await nextTurn();
    }
    expect(held).toEqual([]);
    await vi.waitFor(() => expect(g.waiting).toBe(false));
    expect(statuses(g, 'stdio')).toEqual(['ok']);
  });

  it('stdio: while a call is awaited, a response to a request the guard does not await is relayed and not read', async () => {
    const g = newGuard('pipe');
    const readLater = vi.spyOn(g, 'readLater');
    const input = new PassThrough();
    const lines: string[] = [];
    /** The client takes nothing until the test says: the call's result stays unread, the call awaited. */
    const held: (() => void)[] = [];
    /** Bytes in the client's hands (a write's bytes count in `writableLength` until it is done). */
    let taking = 0;
    const output = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
        taking += chunk.length;
        held.push(() => {
          taking -= chunk.length;
          done();
        });
      },
    });
    const proxy = startStdioProxy({ command: process.execPath, args: [BATCH_SERVER], env: process.env, guard: g, input, output, say: (l) => said.push(l) });
    closers.push(async () => {
      input.end();
      await proxy.ended;
    });
    input.write(`${JSON.stringify(call(1, 'echo', { text: 'x' }))}\n`);
    await vi.waitFor(() => expect(lines.some((l) => l.includes('"id":1'))).toBe(true), { timeout: 10_000 });
    input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'file:///a' } })}\n`);
    // the second response is handed to the client's stream behind the held write (so the call is still awaited)
    await vi.waitFor(() => expect(output.writableLength).toBeGreaterThan(taking), { timeout: 10_000 });
    expect(g.waiting).toBe(true);
    await vi.waitFor(
      () => {
        for (const done of held.splice(0)) done();
        expect(lines.some((l) => l.includes('"id":2,"error"'))).toBe(true);
      },
      { timeout: 10_000 },
    );
    await vi.waitFor(() => expect(g.waiting).toBe(false));
    expect(readLater).toHaveBeenCalledTimes(1); // the call's result only
    expect(statuses(g, 'stdio')).toEqual(['ok']);
  });

  it('Streamable HTTP (JSON response): the response is ended before the guard reads it', async () => {
    const upstream = await listen((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const msg = JSON.parse(body) as { id: number };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'y'.repeat(100_000) }] } }));
      });
    });
    const g = newGuard('http');
    const proxy = await httpProxy(upstream, g);
    /** At each end of a response of the proxy's (not the upstream's): was the guard still waiting for it? */
    const ends: boolean[] = [];
    const end = ServerResponse.prototype.end;
    vi.spyOn(ServerResponse.prototype, 'end').mockImplementation(function (this: ServerResponse, ...args: unknown[]) {
      if ((this.socket?.localPort ?? proxy.port) === proxy.port) ends.push(g.waiting);
      return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
    });
    const r = await fetch(proxy.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(call(1, 'page', { n: 1 })) });
    expect(((await r.json()) as { id: number }).id).toBe(1);
    expect(ends).toEqual([true]);
    await vi.waitFor(() => expect(g.waiting).toBe(false));
    expect(statuses(g, 'http:')).toEqual(['ok']);
  });
});

describe('a batch the upstream cannot take still gets the guard answers', () => {
  it('refused (406) or unreachable: a 200 batch of the guard answers and an error for each request sent upstream', async () => {
    let accept = true;
    const upstream = await listen((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        if (!accept) {
          res.writeHead(406, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' } }));
          return;
        }
        const msgs = JSON.parse(body) as { id: number }[];
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(msgs.map((m) => ({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'order A-1 is locked (ORD-409)' }], isError: true } }))));
      });
    });
    const g = newGuard('http');
    const proxy = await httpProxy(upstream, g);
    const post = async (batch: unknown[]) => {
      const r = await fetch(proxy.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(batch) });
      return { status: r.status, body: (await r.json()) as { id: number; result?: { content: { text: string }[] }; error?: { code: number; message: string } }[] };
    };
    const lookup = (id: number) => call(id, 'lookup_order', { order_id: 'A-1' });
    await post([lookup(1)]);
    await post([lookup(2)]);

    accept = false;
    const refused = await post([lookup(3), call(4, 'echo', { text: 'x' })]);
    expect(refused.status).toBe(200);
    expect(refused.body.map((m) => m.id)).toEqual([3, 4]);
    expect(refused.body[0]?.result?.content[0]?.text).toMatch(/^\[loopwatch\] This call was not run: 'lookup_order' already failed twice/);
    expect(refused.body[1]?.error).toEqual({ code: -32000, message: 'loopwatch mcp: the upstream MCP server refused the batch (HTTP 406 Not Acceptable): Not Acceptable: Client must accept both application/json and text/event-stream' });

    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    upstream.closeAllConnections();
    const unreachable = await post([lookup(5), call(6, 'echo', { text: 'y' })]);
    expect(unreachable.status).toBe(200);
    expect(unreachable.body.map((m) => m.id)).toEqual([5, 6]);
    expect(unreachable.body[0]?.result?.content[0]?.text).toMatch(/^\[loopwatch\] This call was refused and not run/);
    expect(unreachable.body[1]?.error?.message).toMatch(/^loopwatch mcp: the upstream MCP server is unreachable \(E[A-Z]+\)$/);
    expect(g.waiting).toBe(false);
  });
});

/** A server that answers every request with the time it read it (Date.now(), in the result's text). */
const STAMP_SERVER = `require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => {
  const m = JSON.parse(l);
  const at = Date.now();
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: String(at) }] } }) + '\\n');
});`;

describe('observe mode: a tools/call reaches the server before the guard reads it', () => {
  it.each(['observe', 'enforce'] as const)('%s', async (mode) => {
    const g = new McpCallGuard({ engine: new LoopEngine({ mode }), action: 'graduated', idleGapMs: 60_000, telemetry, transport: 'pipe', say: (l) => said.push(l) });
    const fromClient = g.fromClient.bind(g);
    /** When the guard finished judging each tools/call, after taking a second (a margin for a loaded machine to schedule the server). */
    const judged: number[] = [];
    vi.spyOn(g, 'fromClient').mockImplementation((session, msg) => {
      if ((msg as { method?: string }).method === 'tools/call') {
        const start = Date.now();
        while (Date.now() - start < 1000);
      }
      const verdict = fromClient(session, msg);
      judged.push(Date.now());
      return verdict;
    });
    const input = new PassThrough();
    const lines: string[] = [];
    const output = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
        done();
      },
    });
    const proxy = startStdioProxy({ command: process.execPath, args: ['-e', STAMP_SERVER], env: process.env, guard: g, input, output, say: (l) => said.push(l) });
    closers.push(async () => {
      input.end();
      await proxy.ended;
    });
    // the server up and reading first
    input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' })}\n`);
    await vi.waitFor(() => expect(lines).toHaveLength(1), { timeout: 10_000 });
    input.write(`${JSON.stringify(call(1, 'fetch_page', { page: 1 }))}\n`);
    await vi.waitFor(() => expect(lines).toHaveLength(2), { timeout: 10_000 });
    const serverRead = Number((JSON.parse(lines[1] as string) as { result: { content: { text: string }[] } }).result.content[0]?.text);
    const guardDone = judged[judged.length - 1] as number;
    // observe: the server read the call while the guard was still judging it; enforce: only after
    if (mode === 'observe') expect(serverRead).toBeLessThan(guardDone);
    else expect(serverRead).toBeGreaterThanOrEqual(guardDone);
    expect(statuses(g, 'stdio')).toEqual(['ok']);
  });
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<Server> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return server;
}

async function httpProxy(upstream: Server, guard: McpCallGuard): Promise<{ url: string; port: number; proxy: HttpProxy }> {
  const proxy = startHttpProxy({ upstream: new URL(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`), host: '127.0.0.1', port: 0, allowedOrigins: [], guard, say: (l) => said.push(l) });
  const { port } = await proxy.listening;
  closers.push(() => proxy.close());
  return { url: `http://127.0.0.1:${port}/mcp`, port, proxy };
}
