import { createServer, type Server } from 'node:net';

/**
 * `count` distinct free TCP ports on 127.0.0.1. All are held open at once before any is released,
 * so they differ from each other; another process could still take one before our server binds it,
 * which the servers' start-up checks report as a clear "exited early" error.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      ports.push(
        await new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            if (address && typeof address === 'object') resolve(address.port);
            else reject(new Error('no port assigned'));
          });
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
