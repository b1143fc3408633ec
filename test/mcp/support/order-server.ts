/**
 * An MCP server built with the official TypeScript SDK, for the `loopwatch mcp` e2e: its
 * `lookup_order` tool always answers the same failure (the loop a model falls into), beside
 * tools for the rest of the tests. Stdio by default; `--http PORT [--json] [--record FILE]`
 * serves Streamable HTTP with sessions (SSE responses, or JSON ones with --json) on 127.0.0.1,
 * and writes each POST exchange to FILE as a JSON line: the request body and response body bytes
 * as they were on the wire (base64), and the request's Authorization header.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

function orderServer(): McpServer {
  const server = new McpServer({ name: 'order-service', version: '1.0.0' });
  server.registerTool(
    'lookup_order',
    { description: 'Look an order up by id', inputSchema: { order_id: z.string() }, annotations: { readOnlyHint: true } },
    async ({ order_id }) => ({ content: [{ type: 'text', text: `Order service error: order ${order_id} is locked by another process (code ORD-409)` }], isError: true }),
  );
  server.registerTool('echo', { description: 'Echo text back', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool('big', { description: 'A text result of the given size', inputSchema: { bytes: z.number().int() } }, async ({ bytes }) => ({
    content: [{ type: 'text', text: 'x'.repeat(bytes) }],
  }));
  server.registerTool('slow', { description: 'Answers after ms, unless cancelled', inputSchema: { ms: z.number().int() } }, async ({ ms }, extra) => {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      extra.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
    return { content: [{ type: 'text', text: extra.signal.aborted ? 'cancelled' : 'done' }] };
  });
  server.registerTool('exit', { description: 'Ends the server process with the given code', inputSchema: { code: z.number().int() } }, async ({ code }) => {
    setTimeout(() => process.exit(code), 20);
    return { content: [{ type: 'text', text: `exiting with ${code}` }] };
  });
  return server;
}

const httpAt = process.argv.indexOf('--http');
if (httpAt === -1) {
  await orderServer().connect(new StdioServerTransport());
} else {
  const port = Number(process.argv[httpAt + 1]);
  const json = process.argv.includes('--json');
  const recordAt = process.argv.indexOf('--record');
  const record = recordAt === -1 ? undefined : process.argv[recordAt + 1];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks);
      if (record && req.method === 'POST') {
        const sent: Buffer[] = [];
        const write = res.write.bind(res) as (c: unknown, ...rest: unknown[]) => boolean;
        const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
        res.write = ((c: unknown, ...rest: unknown[]) => (sent.push(Buffer.from(c as string)), write(c, ...rest))) as typeof res.write;
        res.end = ((...args: unknown[]) => {
          if (args[0] !== undefined && typeof args[0] !== 'function') sent.push(Buffer.from(args[0] as string));
          appendFileSync(record, `${JSON.stringify({ request: raw.toString('base64'), response: Buffer.concat(sent).toString('base64'), authorization: req.headers.authorization ?? null })}\n`);
          return end(...args);
        }) as typeof res.end;
      }
      const body: unknown = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : undefined;
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? transports.get(id) : undefined;
      if (!transport && req.method === 'POST' && isInitializeRequest(body)) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: json,
          onsessioninitialized: (sid) => void transports.set(sid, transport as StreamableHTTPServerTransport),
        });
        await orderServer().connect(transport);
      }
      if (!transport) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no session' }, id: null }));
        return;
      }
      await transport.handleRequest(req, res, body);
    });
  });
  http.listen(port, '127.0.0.1', () => process.stderr.write(`order-server listening on ${port}\n`));
}
