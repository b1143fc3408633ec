/**
 * The proxy's parts alone: framing, the SSE reader, the call guard (runs, cancellations,
 * annotations from tools/list) and the MCP convention adapter, with the real guard and engine.
 */
import { SpanKind } from '@opentelemetry/api';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { defaultAdapters, findToolAdapter } from '../../src/conventions/index.js';
import { mcpAdapter } from '../../src/conventions/mcp.js';
import { LoopEngine } from '../../src/detector/engine.js';
import { arrayElements, asBatch, judgeBatch } from '../../src/mcp/batch.js';
import { McpCallGuard, type McpSession } from '../../src/mcp/call-guard.js';
import { resultForEngine } from '../../src/mcp/engine-result.js';
import { idAtEnds } from '../../src/mcp/message-id.js';
import { clientMessageMatters, serverMessageMayRespond } from '../../src/mcp/messages.js';
import { MAX_JSON_TEXT } from '../../src/fingerprint/canonical.js';
import { isBlank, joinParts, LineSplitter, looksLikeJson } from '../../src/mcp/framing.js';
import { SseReader } from '../../src/mcp/sse.js';
import { McpTelemetry } from '../../src/mcp/telemetry.js';
import { apiSpanKind } from '../../src/formats/protobuf/span-view.js';

describe('LineSplitter', () => {
  it('cuts after newlines across chunks, hands single-chunk lines (their newline included) without copying, returns an unterminated rest', () => {
    const s = new LineSplitter();
    const lines: string[] = [];
    const first = Buffer.from('{"a":1}\n{"b"');
    s.push(first, (parts, bytes) => {
      expect(parts[0]?.buffer).toBe(first.buffer);
      lines.push(joinParts(parts, bytes).toString());
    });
    expect(s.partialBytes).toBe(4);
    for (const c of [':2', '}\r\n\n{"c":3}\n', 'tail']) s.push(Buffer.from(c), (parts, bytes) => lines.push(joinParts(parts, bytes).toString()));
    s.end((parts, bytes) => lines.push(`end:${joinParts(parts, bytes).toString()}`));
    expect(lines).toEqual(['{"a":1}\n', '{"b":2}\r\n', '\n', '{"c":3}\n', 'end:tail']);
    expect(isBlank([Buffer.from(' \r')])).toBe(true);
    expect(looksLikeJson([Buffer.from('  '), Buffer.from('[1]')])).toBe(true);
    expect(looksLikeJson([Buffer.from('hello')])).toBe(false);
  });

  it('the byte tests before parsing: a client message naming a method the guard reads, a server message that may be a response', () => {
    expect(clientMessageMatters(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}'))).toBe(true);
    expect(clientMessageMatters(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{}}'))).toBe(false);
    expect(serverMessageMayRespond(Buffer.from('[{"jsonrpc":"2.0","id":1,"result":{}}]'))).toBe(true);
    expect(serverMessageMayRespond(Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}'))).toBe(true);
    expect(serverMessageMayRespond(Buffer.from('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":5}}'))).toBe(false);
  });
});

describe('idAtEnds', () => {
  const id = (...texts: string[]): unknown => idAtEnds(texts.map((t) => Buffer.from(t)));

  it("reads an id the serialisers put first or last (the SDKs' forms, spaced or not), and nothing it cannot be sure of", () => {
    expect(id('{"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n')).toBe(7);
    expect(id('{"result":{"content":[]},"jsonrpc":"2.0","id":7}\n')).toBe(7);
    expect(id('{"jsonrpc": "2.0", "id": "req-1", "result": {}}')).toBe('req-1');
    expect(id('{ "id" : -3 , "result": {}}')).toBe(-3);
    expect(id('{"result":{},"id":"a b"}\r\n')).toBe('a b');
    // an id in the middle, nested ones at the ends, escapes, fractions, null: left to the parse
    expect(id('{"result":{"id":5},"id":6,"jsonrpc":"2.0"}')).toBeUndefined();
    expect(id('{"result":{"x":{"id":5}}}')).toBeUndefined();
    expect(id('{"result":{"text":"a,\\"id\\":5}"}}')).toBeUndefined();
    expect(id('{"jsonrpc":"2.0","id":"a\\"b","result":{}}')).toBeUndefined();
    expect(id('{"result":{},"id":"a\\"b"}')).toBeUndefined();
    expect(id('{"jsonrpc":"2.0","id":1.5,"result":{}}')).toBeUndefined();
    expect(id('{"jsonrpc":"2.0","id":null,"error":{}}')).toBeUndefined();
    expect(id('[{"jsonrpc":"2.0","id":1,"result":{}}]')).toBeUndefined();
    // not JSON: left to the parse, which reports it
    expect(id('{"a":"x"id":5}')).toBeUndefined();
    // split across chunks: each end read within its own chunk
    expect(id('{"jsonrpc":"2.0","id":12', '3,"result":{}}')).toBeUndefined();
    expect(id('{"jsonrpc":"2.0","id":123,"res', 'ult":{}}')).toBe(123);
    expect(id('{"result":{},"jsonrpc":"2.0","i', 'd":9}')).toBeUndefined();
    expect(id('{"result":{"te', 'xt":"x"},"id":9}')).toBe(9);
  });

  it('whatever it reads is the id the parse finds (random messages, keys in random order, ids and texts that look alike)', () => {
    let seed = 11;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const ids: unknown[] = [0, -1, 42, 2 ** 53 + 1, 123456789012345, -999999999999999, Number('98765432109876543210'), 'x', 'a"b', 'a\\b', '', 'id', '1', 'é'];
    const texts = ['"id":5}', ',"id":3', 'plain', '{"id":1}', '\\', '"'];
    let read = 0;
    for (let i = 0; i < 2000; i++) {
      const members: Array<[string, unknown]> = [
        ['jsonrpc', '2.0'],
        ['id', ids[random(ids.length)]],
        ['result', { content: [{ type: 'text', text: texts[random(texts.length)] }], ...(random(2) ? { id: ids[random(ids.length)] } : {}) }],
      ];
      for (let k = members.length - 1; k > 0; k--) {
        const j = random(k + 1);
        [members[k], members[j]] = [members[j] as [string, unknown], members[k] as [string, unknown]];
      }
      const text = JSON.stringify(Object.fromEntries(members), undefined, random(3) === 0 ? 1 : undefined);
      const cut = random(text.length);
      const found = random(2) ? id(text) : id(text.slice(0, cut), text.slice(cut));
      if (found === undefined) continue;
      read++;
      expect(found).toBe((JSON.parse(text) as { id: unknown }).id);
    }
    expect(read).toBeGreaterThan(500);
  });
});

describe('SseReader', () => {
  it('joins data lines per event, across chunks and line-ending styles; skips other fields', () => {
    const events: string[] = [];
    const r = new SseReader((d) => events.push(d));
    for (const c of ['event: message\r\nid: 1\r\ndata: {"a"', ':1}\r\n\r\n: comment\ndata: x\ndata:y\n', '\n', 'data: last']) r.push(Buffer.from(c));
    r.end();
    expect(events).toEqual(['{"a":1}', 'x\ny', 'last']);
  });
});

describe('McpCallGuard', () => {
  let offTelemetry: McpTelemetry;
  beforeAll(async () => {
    offTelemetry = await McpTelemetry.fromEnv({}, 'test', () => undefined);
  });
  let clock = 0;
  const lines: string[] = [];
  const guard = (idleGapMs = 60_000): McpCallGuard =>
    new McpCallGuard({ engine: new LoopEngine(), action: 'graduated', idleGapMs, telemetry: offTelemetry, transport: 'pipe', say: (l) => lines.push(l), now: () => clock });
  const session: McpSession = { key: 'stdio', sessionId: 's1' };
  const call = (id: number, name: string, args: object, meta?: object) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } });
  const failure = (id: number) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'boom' }], isError: true } });
  /** Sends the call; when relayed, the server answers with the same failure. Returns what the client got from the proxy, if anything. */
  const loop = (g: McpCallGuard, id: number, meta?: object): string | undefined => {
    const v = g.fromClient(session, call(id, 'lookup', { q: 1 }, meta));
    if (v.relay) {
      g.fromServer(session, failure(id));
      return undefined;
    }
    return v.answer;
  };

  it('a run per client trace: the same loop in two traces is two runs; the session run splits after the idle gap', () => {
    const g = guard(1_000);
    const traceA = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    const traceB = { traceparent: '00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    expect([loop(g, 1, traceA), loop(g, 2, traceA), loop(g, 3, traceB), loop(g, 4, traceB)]).toEqual([undefined, undefined, undefined, undefined]);
    expect(loop(g, 5, traceA)).toContain('[loopwatch] This call was not run');
    expect(loop(g, 6)).toBeUndefined();
    expect(loop(g, 7)).toBeUndefined();
    clock += 1_001;
    expect(loop(g, 8)).toBeUndefined(); // a new run: the history is gone
    expect(loop(g, 9)).toBeUndefined();
    expect(loop(g, 10)).toContain('[loopwatch] This call was not run');
    expect(g.runs.size).toBe(3);
  });

  it("a cancellation of a call the proxy answered stays with the proxy; one of a relayed call goes on and ends the call", () => {
    const g = guard();
    loop(g, 1);
    loop(g, 2);
    expect(loop(g, 3)).toBeDefined();
    expect(g.fromClient(session, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } })).toEqual({ relay: false, answer: undefined });
    expect(g.fromClient(session, call(4, 'other', {})).relay).toBe(true);
    expect(g.waiting).toBe(true);
    expect(g.fromClient(session, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 4 } })).toEqual({ relay: true });
    expect(g.waiting).toBe(false);
  });

  it('reads tool annotations from tools/list: a read after a declared write runs', () => {
    const g = guard();
    g.fromClient(session, { jsonrpc: '2.0', id: 100, method: 'tools/list' });
    g.fromServer(session, {
      jsonrpc: '2.0',
      id: 100,
      result: { tools: [{ name: 'read', annotations: { readOnlyHint: true } }, { name: 'write', annotations: { readOnlyHint: false, destructiveHint: true } }] },
    });
    const read = (id: number) => {
      const v = g.fromClient(session, call(id, 'read', { path: 'B' }));
      if (v.relay) g.fromServer(session, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'contents' }] } });
      return v.relay;
    };
    expect([read(1), read(2)]).toEqual([true, true]);
    expect(g.fromClient(session, call(3, 'write', { path: 'B', content: 'new' })).relay).toBe(true);
    g.fromServer(session, { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'ok' }] } });
    expect(read(4)).toBe(true);
  });

  it('a JSON-RPC error response is a failure of the call (an unknown tool is hinted at once); other messages pass', () => {
    const g = guard();
    expect(g.fromClient(session, call(1, 'ghost', {})).relay).toBe(true);
    g.fromServer(session, { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Tool ghost not found' } });
    const second = g.fromClient(session, call(2, 'ghost', {}));
    expect(second.relay).toBe(false);
    expect(!second.relay && second.answer).toContain("'ghost' is not an available tool");
    expect(g.fromClient(session, { jsonrpc: '2.0', id: 9, method: 'resources/list' })).toEqual({ relay: true });
  });

  it('a batch: each element judged as a single message; the relayed ones keep their bytes; responses in a batch are read by id', () => {
    const g = guard();
    const judge = (m: unknown) => g.fromClient(session, m);
    const batch = (msgs: unknown[], text = JSON.stringify(msgs)) => judgeBatch(Buffer.from(text), JSON.parse(text) as unknown[], judge);
    for (const id of [1, 2]) {
      const text = ` [ ${JSON.stringify(call(id, 'lookup', { q: 1 }))} ,\n{"jsonrpc":"2.0","id":${id + 10},"method":"ping"}]`;
      const v = batch([], text);
      expect(v.relay?.toString()).toBe(text);
      expect(v.answers).toEqual([]);
      expect(v.relayedIds).toEqual([id, id + 10]);
      g.fromServer(session, [failure(id), { jsonrpc: '2.0', id: id + 10, result: {} }]);
    }
    expect(g.waiting).toBe(false);
    const hinted = batch([{ jsonrpc: '2.0', method: 'notifications/progress', params: { note: 'a "]" in a string' } }, call(3, 'lookup', { q: 1 }), call(4, 'other', { q: '[{' })]);
    expect(hinted.answers).toHaveLength(1);
    expect(JSON.parse(hinted.answers[0] as string)).toMatchObject({ id: 3, result: { isError: true } });
    expect(hinted.relay?.toString()).toBe(`[${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { note: 'a "]" in a string' } })},${JSON.stringify(call(4, 'other', { q: '[{' }))}]`);
    expect(hinted.relayedIds).toEqual([4]);
    const refused = batch([call(5, 'lookup', { q: 1 })]);
    expect(refused.relay).toBeUndefined();
    expect(JSON.parse(asBatch(refused.answers))).toMatchObject([{ id: 5, result: { isError: true, content: [{ text: expect.stringContaining('refused') }] } }]);
  });

  it('a result read after its relay: back to back, the same decisions at the same calls and the same history, each call ending when its result arrived', () => {
    const steps: [string, object][] = [['lookup', { q: 1 }], ['other', { n: 1 }], ['lookup', { q: 1 }], ['lookup', { q: 1 }], ['lookup', { q: 1 }], ['other', { n: 2 }], ['lookup', { q: 1 }]];
    const session2: McpSession = { key: 'stdio-2', sessionId: 's2' };
    const play = (later: boolean) => {
      const g = guard();
      const seen: (string | undefined)[] = [];
      steps.forEach(([name, args], i) => {
        clock = 10_000 + i * 100;
        const v = g.fromClient(session2, call(i, name, args));
        seen.push(v.relay ? 'ran' : v.answer);
        if (!v.relay) return;
        clock += 7; // the result arrives; read now, or only when the next call is judged
        const response = name === 'lookup' ? failure(i) : { jsonrpc: '2.0', id: i, result: { content: [{ type: 'text', text: `item ${i}` }] } };
        if (later) g.readLater(session2, () => response, 100);
        else g.fromServer(session2, response);
        if (later) expect(g.waiting).toBe(true); // not read yet: the next call reads it first
      });
      g.readPending();
      return { seen, history: g.runs.runOf(session2.key, undefined).guard.recentCalls() };
    };
    const atOnce = play(false);
    const afterRelay = play(true);
    expect(afterRelay.seen).toEqual(atOnce.seen);
    expect(afterRelay.history).toEqual(atOnce.history);
    const hinted = expect.stringContaining('[loopwatch] This call was not run');
    expect(atOnce.seen).toEqual(['ran', 'ran', 'ran', hinted, hinted, 'ran', expect.stringContaining('[loopwatch] This call was refused and not run')]);
    expect(afterRelay.history.filter((r) => r.status === 'error' || r.status === 'ok').map((r) => (r.endTime ?? 0) - r.startTime)).toEqual([7, 7, 7, 7]);
  });

  it('a result is read once its relay is written, without waiting for another message; what waits is bounded', async () => {
    const g = guard();
    const turn = () => new Promise((resolve) => setTimeout(resolve, 20));
    expect(g.fromClient(session, call(1, 'lookup', { q: 2 })).relay).toBe(true);
    const relayed = g.readLater(session, () => failure(1), 100);
    await turn();
    expect(g.waiting).toBe(true); // still being written to the client
    relayed();
    expect(g.waiting).toBe(true); // read once the proxy has slept: the client takes the relay first
    await vi.waitFor(() => expect(g.waiting).toBe(false));
    // a flood of server messages in one turn of the event loop is read at the bound, not held
    expect(g.fromClient(session, call(2, 'lookup', { q: 3 })).relay).toBe(true);
    let parsed = 0;
    for (let i = 0; i < 256; i++) g.readLater(session, () => (++parsed, { jsonrpc: '2.0', method: 'notifications/message', params: {} }), 100);
    expect(parsed).toBe(256);
    g.readLater(session, () => failure(2), 20 * 1024 * 1024);
    expect(g.waiting).toBe(false);
    // a defect while reading is said, not thrown into the event loop
    g.readLater(session, () => {
      throw new Error('broken parse');
    }, 10)();
    await turn();
    expect(lines.at(-1)).toBe('internal error while reading a server message (relayed): broken parse');
  });

  it('arrayElements: element bytes of a JSON array, strings and nesting respected', () => {
    const texts = (s: string) => arrayElements(Buffer.from(s))?.map(String);
    expect(texts('[]')).toEqual([]);
    expect(texts(' [ ] ')).toEqual([]);
    expect(texts('[1, "a,]\\"", {"b":[2,3]} ,[4]]')).toEqual(['1', ' "a,]\\""', ' {"b":[2,3]} ', '[4]']);
    expect(texts('{"a":1}')).toBeUndefined();
    expect(texts(' {"a":[1,2]}')).toBeUndefined();
  });
});

describe('resultForEngine', () => {
  it('leaves results up to the cap as they are (the same object); a longer text is read as its head and a digest of the whole', () => {
    const small = { content: [{ type: 'text', text: 'x'.repeat(1000) }], structuredContent: { a: [1, 'y'] } };
    expect(resultForEngine(small)).toBe(small);
    const head = 'a'.repeat(MAX_JSON_TEXT);
    const huge = (last: string) => ({ content: [{ type: 'text', text: `${head}${last}` }, { type: 'image', data: 'b' }] });
    const one = resultForEngine(huge('1')) as { content: [{ text: { head: string; digest: string } }, unknown] };
    expect(one.content[0].text.head).toBe(head);
    expect(one.content[1]).toEqual({ type: 'image', data: 'b' });
    expect(resultForEngine(huge('1'))).toEqual(one);
    // past the head, a difference is still a difference
    expect((resultForEngine(huge('2')) as typeof one).content[0].text.digest).not.toBe(one.content[0].text.digest);
  });
});

describe('the MCP convention adapter', () => {
  const span = (attributes: Record<string, unknown>, kind?: number, name = 'tools/call get_weather') => ({ name, attributes, status: { code: 0 }, kind });

  it('claims tools/call spans; a server span without gen_ai.operation.name is the other side of a client span and is not a second call', () => {
    expect(mcpAdapter.isToolSpan(span({ 'mcp.method.name': 'tools/call' }, SpanKind.CLIENT))).toBe(true);
    expect(mcpAdapter.isToolSpan(span({ 'mcp.method.name': 'tools/call' }))).toBe(true);
    expect(mcpAdapter.isToolSpan(span({ 'mcp.method.name': 'tools/call' }, SpanKind.SERVER))).toBe(false);
    expect(mcpAdapter.isToolSpan(span({ 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool' }, SpanKind.SERVER))).toBe(true);
    expect(mcpAdapter.isToolSpan(span({ 'mcp.method.name': 'tools/list' }))).toBe(false);
    expect(mcpAdapter.readToolCall(span({ 'mcp.method.name': 'tools/call', 'error.type': 'tool_error' }))).toMatchObject({ toolName: 'get_weather', error: { type: 'tool_error' } });
    expect(findToolAdapter(defaultAdapters, span({ 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'x' }))?.name).toBe('mcp');
  });

  it('OTLP span kinds are read with the API numbering', () => {
    expect([apiSpanKind(2), apiSpanKind('SPAN_KIND_CLIENT'), apiSpanKind(0), apiSpanKind('nope')]).toEqual([SpanKind.SERVER, SpanKind.CLIENT, undefined, undefined]);
  });
});
