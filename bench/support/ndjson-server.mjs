// A minimal MCP-shaped server for the `loopwatch mcp` bench: newline-delimited JSON-RPC on stdio,
// answering `initialize`, and any request whose params say `bytes: N` with a tool result of that
// many bytes of prose (its id first, so no two results are equal). Plain Node, no SDK: the bench
// measures the proxy, not a server framework.
import { createInterface } from 'node:readline';

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
const pads = new Map();
const pad = (n) => {
  let p = pads.get(n);
  if (!p) {
    const words = ['the', 'order', 'status', 'line', 'file', 'value', 'shipped', 'pending', 'of', 'customer', 'total', 'item'];
    let block = '';
    for (let i = 0; block.length < 1024; i++) block += `${words[(i * 7) % words.length]}${i % 13 === 12 ? '\n' : ' '}`;
    p = block.repeat(Math.ceil(n / block.length)).slice(0, n);
    pads.set(n, p);
  }
  return p;
};
lines.on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  if (msg.method === 'initialize') {
    process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bench', version: '1' } } })}\n`);
    return;
  }
  const n = msg.params?.arguments?.bytes ?? msg.params?.bytes ?? 16;
  const head = `${msg.id}:`;
  const text = head + pad(Math.max(0, n - head.length));
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text }] } })}\n`);
});
