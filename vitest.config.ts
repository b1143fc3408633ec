import { defineConfig } from 'vitest/config';
import { runTempDir } from './test/support/temp-dir.js';

// Temporary files of the whole run (test files and the processes they start) go under one
// directory, removed at the end: `npm test` leaves nothing in the system temp directory.
const TMPDIR = runTempDir();

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // e2e suites start real servers on fixed loopback ports; files run one at a time there.
    fileParallelism: true,
    env: { TMPDIR },
    globalSetup: ['test/support/temp-dir.ts'],
  },
});
