// A minimal stdio MCP server that takes JSON-RPC batches, as the 2025-03-26 protocol allowed
// (the official SDKs' stdio transports no longer parse them): newline-delimited JSON-RPC,
// answering a batch with a batch of the responses to its requests, a single message with a
// single response. `lookup_order` always fails the same way; `echo` returns its text.
import { createInterface } from 'node:readline';

const answer = (msg) => {
  if (msg.id === undefined || typeof msg.method !== 'string') return undefined;
  if (msg.method === 'initialize') return { jsonrpc: '2.0', id: msg.id, result: { protocolVersion: '2025-03-26', capabilities: { tools: {} }, serverInfo: { name: 'batch', version: '1' } } };
  if (msg.method !== 'tools/call') return { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } };
  const { name, arguments: args } = msg.params;
  if (name === 'lookup_order') return { jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: `order ${args.order_id} is locked (ORD-409)` }], isError: true } };
  return { jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: String(args.text) }] } };
};

createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  const msg = JSON.parse(line);
  const out = Array.isArray(msg) ? msg.map(answer).filter((r) => r !== undefined) : answer(msg);
  if (out !== undefined && !(Array.isArray(out) && out.length === 0)) process.stdout.write(`${JSON.stringify(out)}\n`);
});
