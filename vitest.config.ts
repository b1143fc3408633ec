import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // e2e suites start real servers on fixed loopback ports; files run one at a time there.
    fileParallelism: true,
  },
});
