#!/usr/bin/env node
import { main } from './main.js';

// Last resort: a bug of ours must still end with a message and the "bad input" code, not a stack
// trace and exit 1 (which means "loops found"). Set before anything runs.
const fail = (e: unknown): void => {
  // the stack only when asked for: its messages may quote the input
  const detail = process.env.LOOPWATCH_DEBUG && e instanceof Error ? `\n${e.stack ?? ''}` : '';
  process.stderr.write(`loopwatch: internal error (${e instanceof Error ? e.name : 'unknown'}); please report it${detail}\n`);
  process.exit(2);
};
process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);
// A reader that goes away (`| head`) is not an error: main stops writing; late EPIPEs are dropped.
process.stdout.on('error', () => undefined);
process.stderr.on('error', () => undefined);

// The `loopwatch` executable: exit code via process.exitCode so piped output is flushed first.
main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  // asked for only when `-` is read: touching process.stdin opens it
  get stdin() {
    return process.stdin;
  },
  stdinFd: 0,
  env: process.env,
  interactive: process.stderr.isTTY === true,
}).then(
  (code) => {
    process.exitCode = code;
  },
  fail,
);
