import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { McpCallGuard, McpSession } from './call-guard.js';
import { arrayElements, asBatch, judgeBatch } from './batch.js';
import type { Relayed } from './deferred-readings.js';
import { MalformedReport } from './malformed.js';
import { clientMessageMatters, isObject, parseJson } from './messages.js';
import { SseReader } from './sse.js';

export const DEFAULT_HTTP_HOST = '127.0.0.1';
/** JSON-RPC's implementation-defined server error: what the proxy answers for an upstream that failed a request. */
const UPSTREAM_ERROR = -32000;
/** Bytes of an upstream's refusal read for its JSON-RPC error. */
const MAX_REFUSAL_BYTES = 64 * 1024;

/** A reader of a response's bytes beside their relay: the messages a chunk completes go to `read`, to be read once that chunk is written. */
interface ResponseTap {
  push(chunk: Buffer, read: Relayed[]): void;
  end(read: Relayed[]): void;
}

/** Headers of one hop, never relayed (RFC 9110 §7.6.1), and `host`, which names the upstream instead. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
const SESSION_HEADER = 'mcp-session-id';

export interface HttpProxyOptions {
  readonly upstream: URL;
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  /** Browser origins accepted besides localhost ones. */
  readonly allowedOrigins: readonly string[];
  readonly guard: McpCallGuard;
  readonly say: (line: string) => void;
}

export interface HttpProxy {
  readonly listening: Promise<{ readonly host: string; readonly port: number }>;
  readonly malformed: MalformedReport;
  close(): Promise<void>;
}

/**
 * The Streamable HTTP proxy: every request goes to the upstream at the same path (so the client
 * uses the upstream's path on the proxy's address), headers as they came (`Authorization`
 * included) except those of one hop; every response comes back as the upstream sent it, JSON or
 * SSE, streamed. A POST is read whole first, since a `tools/call` in it may be answered here (a
 * JSON response; the call never reaches the upstream; a batch's answers join the upstream's
 * response to the rest of it: see `withAnswers`); a response is read beside the relay only
 * while the guard awaits one. `Origin` is checked as the MCP specification asks: a browser page
 * from another site gets 403.
 */
export function startHttpProxy(o: HttpProxyOptions): HttpProxy {
  const malformed = new MalformedReport(o.say);
  const secure = o.upstream.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, o.allowedOrigins)) {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: `Forbidden: origin ${origin} is not allowed (loopwatch mcp --allow-origin)` } }));
      return;
    }
    const sessionId = single(req.headers[SESSION_HEADER]);
    const session: McpSession = { key: `http:${sessionId ?? ''}`, sessionId };
    if (req.method !== 'POST') return relay(req, res, session, undefined, []);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const awaited: unknown[] = [];
      if (clientMessageMatters(body)) {
        const msg = parseJson(body);
        if (msg === undefined) malformed.note('client', 'a POST body that is not valid JSON');
        else if (Array.isArray(msg)) {
          const verdict = judgeBatch(body, msg, (m) => judged(session, m));
          const answers = verdict.answers.length > 0 ? verdict.answers : undefined;
          if (verdict.relay === undefined) return answerHere(res, sessionId, answers && asBatch(answers));
          return relay(req, res, session, verdict.relay, verdict.relayedIds, answers);
        } else {
          const verdict = judged(session, msg);
          if (!verdict.relay) return answerHere(res, sessionId, verdict.answer);
          if (isObject(msg) && 'id' in msg) awaited.push(msg.id);
        }
      }
      relay(req, res, session, body, awaited);
    });
  };

  /** The guard kept the whole POST: its answer (202 when it has none: a cancellation it kept). */
  const answerHere = (res: ServerResponse, sessionId: string | undefined, answer: string | undefined): void => {
    if (answer === undefined) {
      res.writeHead(202).end();
      return;
    }
    const bytes = Buffer.from(answer);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length, ...(sessionId ? { [SESSION_HEADER]: sessionId } : {}) });
    res.end(bytes);
  };

  const judged = (session: McpSession, msg: unknown): ReturnType<McpCallGuard['fromClient']> => {
    try {
      return o.guard.fromClient(session, msg);
    } catch (e) {
      o.say(`internal error while guarding a message (relayed unguarded): ${e instanceof Error ? e.message : String(e)}`);
      return { relay: true };
    }
  };

  /**
   * Sends the request upstream and the response back; `awaited`: ids of the requests in it the
   * guard awaits; `answers`: the guard's responses to the rest of a batch, given to the client
   * with the upstream's (see `withAnswers`).
   */
  const relay = (req: IncomingMessage, res: ServerResponse, session: McpSession, body: Buffer | undefined, awaited: readonly unknown[], answers?: readonly string[]): void => {
    const target = new URL(req.url ?? '/', o.upstream);
    const headers = relayedHeaders(req.headers);
    headers.host = o.upstream.host;
    if (body !== undefined) headers['content-length'] = body.length;
    const up = send(target, { method: req.method, headers, agent }, (upRes) => {
      const ok = (upRes.statusCode ?? 0) < 300;
      if (!ok) for (const id of awaited) o.guard.forget(session, id);
      if (answers !== undefined) return ok ? withAnswers(upRes, res, session, answers) : refusedBatch(upRes, res, session.sessionId, answers, awaited);
      res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, relayedHeaders(upRes.headers));
      streamBody(upRes, res, ok ? responseTap(upRes.headers['content-type'], session) : undefined, () => {
        if (req.method === 'DELETE' && ok) o.guard.endSession(session);
      });
    });
    up.on('error', (e) => {
      for (const id of awaited) o.guard.forget(session, id);
      const message = `loopwatch mcp: the upstream MCP server is unreachable (${(e as NodeJS.ErrnoException).code ?? e.message})`;
      if (res.headersSent) res.destroy();
      else if (answers !== undefined) answerHere(res, session.sessionId, asBatch([...answers, ...awaited.map((id) => errorResponse(id, UPSTREAM_ERROR, message))]));
      else {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: UPSTREAM_ERROR, message } }));
      }
    });
    // a client that goes away mid-response takes the upstream request with it
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    if (body !== undefined) up.end(body);
    else req.pipe(up);
  };

  /**
   * The upstream's answer to a batch the guard answered part of, with the guard's responses: an
   * SSE stream gets them as a first event of its own; a JSON body (one response or a batch) is
   * collected and becomes one batch with them; a 202 (the upstream had only notifications to
   * read) becomes a 200 with them.
   */
  const withAnswers = (upRes: IncomingMessage, res: ServerResponse, session: McpSession, answers: readonly string[]): void => {
    const headers = relayedHeaders(upRes.headers);
    const type = mediaType(upRes.headers['content-type']);
    if (type === 'text/event-stream') {
      res.writeHead(upRes.statusCode ?? 200, upRes.statusMessage, headers);
      res.write(`event: message\ndata: ${asBatch(answers)}\n\n`);
      return streamBody(upRes, res, responseTap(upRes.headers['content-type'], session));
    }
    upRes.on('error', () => res.destroy());
    const chunks: Buffer[] = [];
    upRes.on('data', (chunk: Buffer) => chunks.push(chunk));
    upRes.on('end', () => {
      const upstream = Buffer.concat(chunks);
      const parsed = type === 'application/json' ? parseJson(upstream) : undefined;
      if (parsed === undefined && upstream.length > 0) malformed.note('server', 'a response to a batch that is not JSON: only the answers of the proxy reached the client');
      const theirs = parsed === undefined ? [] : Array.isArray(parsed) ? (arrayElements(upstream) ?? []).map((e) => e.toString('utf8')) : [upstream.toString('utf8')];
      const merged = Buffer.from(asBatch([...answers, ...theirs]));
      delete headers['content-length'];
      res.writeHead(200, { ...headers, 'content-type': 'application/json', 'content-length': merged.length });
      const read: Relayed[] = parsed === undefined ? [] : [o.guard.readLater(session, () => parsed, upstream.length)];
      endWhenWritten(res, merged, read);
    });
  };

  /**
   * The upstream refused a batch the guard answered part of (a status of 300 or more): the client
   * still gets the guard's answers, with an error response for each request the upstream was
   * sent (its own JSON-RPC error when its body has one, else its status), as one JSON batch with
   * status 200, which is what a client reads responses from; the next request meets the refusal
   * as the upstream gives it (a 401's authorization flow, a 404's new session).
   */
  const refusedBatch = (upRes: IncomingMessage, res: ServerResponse, sessionId: string | undefined, answers: readonly string[], relayedIds: readonly unknown[]): void => {
    upRes.on('error', () => res.destroy());
    const chunks: Buffer[] = [];
    let held = 0;
    upRes.on('data', (chunk: Buffer) => {
      // only the start of an error body is read: its JSON-RPC error, or a line of text
      if (held < MAX_REFUSAL_BYTES) chunks.push(chunk);
      held += chunk.length;
    });
    upRes.on('end', () => {
      const body = Buffer.concat(chunks);
      const theirs = held <= MAX_REFUSAL_BYTES ? parseJson(body) : undefined;
      const error = (Array.isArray(theirs) ? theirs : [theirs]).map((m) => (isObject(m) && isObject(m.error) ? m.error : undefined)).find((e) => e !== undefined);
      const status = `HTTP ${upRes.statusCode ?? '?'}${upRes.statusMessage ? ` ${upRes.statusMessage}` : ''}`;
      const said = typeof error?.message === 'string' ? error.message : '';
      const message = `loopwatch mcp: the upstream MCP server refused the batch (${status})${said ? `: ${said}` : ''}`;
      const code = typeof error?.code === 'number' ? error.code : UPSTREAM_ERROR;
      answerHere(res, sessionId, asBatch([...answers, ...relayedIds.map((id) => errorResponse(id, code, message))]));
    });
  };

  /** The upstream's response body to the client as it comes (its backpressure holds the upstream), read beside by `tap`. */
  const streamBody = (upRes: IncomingMessage, res: ServerResponse, tap: ResponseTap | undefined, ended?: () => void): void => {
    upRes.on('data', (chunk: Buffer) => {
      const read: Relayed[] = [];
      // the callback comes after this handler returns, with `read` filled by the tap
      if (!res.write(chunk, () => relayed(read))) {
        upRes.pause();
        res.once('drain', () => upRes.resume());
      }
      tap?.push(chunk, read);
    });
    upRes.on('end', () => {
      const read: Relayed[] = [];
      tap?.end(read);
      endWhenWritten(res, undefined, read);
      ended?.();
    });
    upRes.on('error', () => res.destroy());
  };

  /**
   * Reads the server's messages in a response while the guard awaits one: JSON collected to its
   * end, SSE event by event; each once relayed (see `McpCallGuard.readLater`).
   */
  const responseTap = (contentType: string | undefined, session: McpSession): ResponseTap | undefined => {
    /** The messages completed by the chunk under way. */
    let completed: Relayed[] = [];
    const read = (text: string | Buffer): void => {
      if (!o.guard.waiting) return;
      const parse = (): unknown => {
        const msg = parseJson(text);
        if (msg === undefined) malformed.note('server', 'not valid JSON');
        return msg;
      };
      completed.push(o.guard.readLater(session, parse, text.length));
    };
    const type = mediaType(contentType);
    if (type === 'text/event-stream') {
      const sse = new SseReader(read);
      return {
        push: (c, into) => {
          if (!o.guard.waiting) return;
          completed = into;
          sse.push(c);
        },
        end: (into) => {
          completed = into;
          sse.end();
        },
      };
    }
    if (type === 'application/json') {
      const chunks: Buffer[] = [];
      return {
        push: (c) => (o.guard.waiting ? chunks.push(c) : undefined),
        end: (into) => {
          if (chunks.length === 0) return;
          completed = into;
          const parts = chunks.splice(0);
          read(parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts));
        },
      };
    }
    return undefined;
  };

  const server = createServer(handle);
  const listening = new Promise<{ host: string; port: number }>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      const a = server.address();
      resolve({ host: o.host, port: a && typeof a === 'object' ? a.port : o.port });
    });
  });
  return {
    listening,
    malformed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        o.guard.readPending();
        server.close(() => resolve());
      }),
  };
}

function relayed(read: readonly Relayed[]): void {
  for (const r of read) r();
}

/** Ends `res` (with `body`, if given); the messages in `read` are read once it is written, or once the client is gone. */
function endWhenWritten(res: ServerResponse, body: Buffer | undefined, read: readonly Relayed[]): void {
  if (read.length > 0) res.once('close', () => relayed(read));
  if (body === undefined) res.end(() => relayed(read));
  else res.end(body, () => relayed(read));
}

/** A JSON-RPC error response to request `id` (as the client sent it: a string or a number). */
function errorResponse(id: unknown, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}

function mediaType(contentType: string | undefined): string | undefined {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase();
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function relayedHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

/** A page on this machine (any port), or one of the origins the user allowed. */
export function originAllowed(origin: string, allowed: readonly string[]): boolean {
  if (allowed.includes(origin)) return true;
  try {
    return LOCAL_HOSTS.has(new URL(origin).hostname);
  } catch {
    return false;
  }
}
