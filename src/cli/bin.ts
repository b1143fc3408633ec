#!/usr/bin/env node
import { main } from './main.js';

// The `loopwatch` executable: exit code via process.exitCode so piped output is flushed first.
main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  interactive: process.stderr.isTTY === true,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`loopwatch: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
  },
);
