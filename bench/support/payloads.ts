const WORDS = ['order', 'status', 'customer', 'invoice', 'shipped', 'refund', 'pending', 'address', 'warehouse', 'delivery', 'the', 'of', 'and', 'a'];

/** Deterministic prose of `length` characters (what `content`, `body` or `query` fields hold). */
function prose(length: number, seed: number): string {
  let out = '';
  for (let i = seed; out.length < length; i = (i * 1103515245 + 12345) % 2147483648) out += `${WORDS[i % WORDS.length]} `;
  return out.slice(0, length);
}

/**
 * Tool arguments as models write them, as a JSON string of `bytes` characters: a few short fields
 * and one text field holding the bulk (a file's content, an email body, a SQL query). Distinct per
 * index, so that a trace's calls never repeat (no loop fires: the benchmark measures the common path).
 */
export function argumentsOfSize(bytes: number, index: number): string {
  const head = { path: `src/orders/handler-${index}.ts`, mode: 'overwrite', dry_run: false, retries: 2, tags: ['orders', 'v2'] };
  const room = bytes - JSON.stringify({ ...head, content: '' }).length;
  return JSON.stringify({ ...head, content: prose(Math.max(0, room), index) });
}

/** A tool's answer in words, `bytes` characters without a digit (a summary, a page of text), as instrumentations record text. */
export function proseResult(bytes: number, index: number): string {
  return prose(bytes, index + 1);
}

/** What a write tool answers: a short acknowledgement naming what it wrote. */
export function acknowledgement(index: number, bytes: number): string {
  return JSON.stringify({ ok: true, path: `src/orders/handler-${index}.ts`, bytes_written: bytes });
}

/**
 * Tool arguments and results of a given size, as instrumentations record them (JSON strings):
 * a few fields and a list of small records, padded to the exact size. Deterministic and distinct
 * per index, so that a trace's calls never repeat (no loop fires: the benchmark measures the
 * common path).
 */
export function jsonOfSize(bytes: number, index: number, kind: 'args' | 'result'): string {
  const head =
    kind === 'args'
      ? { query: `order ${index} status`, page: index, filters: { region: 'eu-west', open: true } }
      : { total: index, note: `found ${index} matching orders` };
  const item = (i: number): { id: number; title: string; score: number } => ({ id: index * 100_000 + i, title: `item ${i} of ${kind} ${index}`, score: (i % 97) / 97 });
  const perItem = JSON.stringify(item(1000)).length + 1;
  const room = bytes - JSON.stringify({ ...head, items: [], pad: '' }).length;
  const items = Array.from({ length: Math.max(0, Math.floor((room - 16) / perItem)) }, (_, i) => item(i));
  let text = JSON.stringify({ ...head, items, pad: '' });
  while (text.length > bytes && items.length > 0) {
    items.pop();
    text = JSON.stringify({ ...head, items, pad: '' });
  }
  return JSON.stringify({ ...head, items, pad: 'x'.repeat(Math.max(0, bytes - text.length)) });
}

/** `count` distinct payloads of `bytes` each. */
export function payloadPool(bytes: number, count: number, kind: 'args' | 'result'): string[] {
  return Array.from({ length: count }, (_, i) => jsonOfSize(bytes, i, kind));
}
