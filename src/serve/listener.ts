import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';

/** The connection preface every HTTP/2 client sends first ("PRI * HTTP/2.0..."), never an HTTP/1.1 request line. */
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export interface ListenerOptions {
  /** A connection's first bytes (and the TLS handshake), then each request's headers, must arrive within this. */
  readonly headersTimeoutMs: number;
  /** A whole HTTP/1.1 request, body included, must arrive within this. */
  readonly requestTimeoutMs: number;
  /** An HTTP/1.1 connection with no request in progress is closed after this long. */
  readonly idleTimeoutMs: number;
  readonly maxConnections: number;
  /** PEM certificate chain and key: the port speaks TLS (HTTP/1.1 and h2 by ALPN). */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined;
}

/**
 * One TCP port for HTTP/1.1 (OTLP/HTTP, /healthz) and HTTP/2 (OTLP/gRPC): the first bytes of
 * each connection say which it is; they are put back and the socket handed on. Connections are
 * bounded in number and in time: one that sends nothing is closed after the headers timeout,
 * and the HTTP/1.1 server's header, request and keep-alive timeouts apply.
 */
export class OnePortListener {
  readonly server: NetServer;
  readonly http: HttpServer;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly options: ListenerOptions,
    private readonly onHttp2: (socket: Socket) => void,
  ) {
    this.http = createHttpServer({
      headersTimeout: options.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      keepAliveTimeout: options.idleTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(options.headersTimeoutMs / 4))),
    });
    const route = (socket: Socket): void => this.route(socket);
    this.server = options.tls
      ? createTlsServer({ cert: options.tls.cert, key: options.tls.key, ALPNProtocols: ['h2', 'http/1.1'], handshakeTimeout: options.headersTimeoutMs }, route)
      : createNetServer(route);
    this.server.maxConnections = options.maxConnections;
    // a failed TLS handshake is the client's problem, not the server's
    this.server.on('tlsClientError', (_e: Error, socket: Socket) => socket.destroy());
  }

  get connections(): number {
    return this.sockets.size;
  }

  listen(port: number, host: string): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        // The HTTP/1.1 server never listens itself (it is handed sockets), and Node checks its
        // headersTimeout and requestTimeout from a timer that starts when it emits 'listening'.
        this.http.emit('listening');
        const address = this.server.address();
        if (address && typeof address === 'object') resolve({ host: address.address, port: address.port });
        else reject(new Error('no address'));
      });
    });
  }

  /** Closes the HTTP/1.1 connections that have no request in progress (a shutdown begins). */
  closeIdle(): void {
    this.http.closeIdleConnections();
  }

  /** Stops accepting connections and ends every connection still open. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.http.close();
    await closed;
  }

  private route(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    // nothing, or not enough to tell the protocol, within the headers timeout: closed
    socket.setTimeout(this.options.headersTimeoutMs, () => socket.destroy());
    let head: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const n = Math.min(head.length, H2_PREFACE.length);
      const http2 = head.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      // undecided while what came so far is a prefix of the preface (only "P", "PR", ... at worst)
      if (http2 && n < H2_PREFACE.length) return;
      socket.off('data', onData);
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(head);
      // The HTTP/2 session reads what is buffered when it starts and then the socket itself: it
      // must stay paused (resuming would hand the preface to nobody). The HTTP/1.1 server reads
      // through 'data' events: it needs the socket flowing again.
      if (http2) this.onHttp2(socket);
      else {
        this.http.emit('connection', socket);
        socket.resume();
      }
    };
    socket.on('data', onData);
  }
}
