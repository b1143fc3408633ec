import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';

/** The connection preface every HTTP/2 client sends first ("PRI * HTTP/2.0..."), never an HTTP/1.1 request line. */
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/**
 * One TCP port for HTTP/1.1 (OTLP/HTTP, /healthz) and cleartext HTTP/2 (OTLP/gRPC): the first
 * bytes of each connection say which it is; they are put back and the socket handed on.
 */
export class OnePortListener {
  readonly server: NetServer;
  readonly http: HttpServer;
  private readonly sockets = new Set<Socket>();

  constructor(
    http: HttpServer | undefined,
    private readonly onHttp2: (socket: Socket) => void,
  ) {
    this.http = http ?? createHttpServer();
    this.server = createNetServer((socket) => this.route(socket));
  }

  listen(port: number, host: string): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        if (address && typeof address === 'object') resolve({ host: address.address, port: address.port });
        else reject(new Error('no address'));
      });
    });
  }

  /** Stops accepting connections; idle HTTP/1.1 keep-alive connections are closed. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.http.closeIdleConnections();
    });
  }

  /** Ends every connection still open (after the grace period). */
  destroyAll(): void {
    for (const s of this.sockets) s.destroy();
  }

  private route(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    let head: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const n = Math.min(head.length, H2_PREFACE.length);
      const http2 = head.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      // undecided while what came so far is a prefix of the preface (only "P", "PR", ... at worst)
      if (http2 && n < H2_PREFACE.length) return;
      socket.off('data', onData);
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
    socket.on('error', () => socket.destroy());
  }
}
