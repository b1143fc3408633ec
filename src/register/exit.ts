import { connect } from 'node:net';

/** Where an exporter that `loopwatch/register` started sends spans. */
export interface ExporterEndpoint {
  /** As the start message names it, e.g. `otlp (http/protobuf)`. */
  readonly exporter: string;
  readonly url: URL;
  /** The variable that sets it, for the message. */
  readonly variable: string;
}

interface Stoppable {
  shutdown(): Promise<void>;
}

/**
 * Whether something accepts TCP connections at the endpoint: `false` only for a definite
 * refusal (nothing listens there), `true` for a connection, and for anything undecided (a
 * timeout, a name that does not resolve yet), so that only a refusal skips the flush.
 */
export function listening(url: URL, timeoutMs = 1_000): Promise<boolean> {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (result: boolean): void => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(true));
    socket.once('connect', () => done(true));
    socket.once('error', (e: NodeJS.ErrnoException) => done(e.code !== 'ECONNREFUSED'));
    socket.unref();
  });
}

/**
 * Flushes the SDK when the app ends (`beforeExit`) or is told to stop (`SIGTERM`), the hooks
 * OpenTelemetry's own register uses. An exporter whose endpoint refuses connections would retry
 * with back-off for about 8 s before giving up (a zero-code start with no collector running):
 * the endpoints are probed first, and a refused one is reported as what it is, the exporter's
 * missing destination, and the app exits at once. Any other failure of the flush is reported
 * as the exporter's, not loopwatch's.
 */
export function flushOnExit(sdk: Stoppable, endpoints: readonly ExporterEndpoint[], say: (message: string) => void): void {
  /** Resolves to true when the app should exit now rather than wait for a refused exporter's retries. */
  let stopping: Promise<boolean> | undefined;
  const stop = (): Promise<boolean> => {
    stopping ??= (async () => {
      const refused: ExporterEndpoint[] = [];
      for (const e of endpoints) if (!(await listening(e.url))) refused.push(e);
      for (const e of refused) {
        say(`nothing listens at ${e.url.href} (${e.variable}): the ${e.exporter} trace exporter cannot deliver this run's spans; exiting without them (loop detection itself ran)`);
      }
      const flushed = sdk.shutdown().catch((e: unknown) => {
        say(`the trace exporter could not deliver spans at exit: ${e instanceof Error ? e.message : String(e)} (loop detection itself ran)`);
      });
      // Wait for the flush while some exporter can deliver; with every destination refused, its
      // retries would only delay the exit.
      if (refused.length < endpoints.length || endpoints.length === 0) {
        await flushed;
        return false;
      }
      return true;
    })();
    return stopping;
  };
  process.once('beforeExit', () => {
    void stop().then((exitNow) => {
      if (exitNow) process.exit(); // keeps the app's process.exitCode
    });
  });
  process.once('SIGTERM', () => {
    void stop().finally(() => process.exit(143));
  });
}
