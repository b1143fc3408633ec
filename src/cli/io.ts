import type { Readable, Writable } from 'node:stream';

/** What a CLI command reads and writes: the process's streams and environment, or a test's. */
export interface CliIo {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stdin: Readable;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** stderr is a terminal: progress redraws one line. */
  readonly interactive: boolean;
  /** stdin's file descriptor when it is the process's (the bin): lets `-` tell a folder from empty input. */
  readonly stdinFd?: number;
}
