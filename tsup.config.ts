import { defineConfig } from 'tsup';

// `npm run build` empties dist/ first: the groups build in parallel, so neither may clean it.
// Two entry groups: the library ships ESM + CommonJS with types; the CLI is ESM only.
// `register` (node --import / --require loopwatch/register) is built with the library and shares
// its chunks, so the processor it starts is an instance of the same classes the app imports
// (`ToolLoopError` instanceof checks hold) within one module format.
export default defineConfig([
  {
    entry: { index: 'src/index.ts', register: 'src/register/index.ts' },
    format: ['esm', 'cjs'],
    splitting: true,
    shims: true,
    dts: true,
    sourcemap: true,
    target: 'node18',
    platform: 'node',
    external: ['@opentelemetry/api'],
  },
  {
    entry: { cli: 'src/cli/bin.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node18',
    platform: 'node',
    banner: { js: '#!/usr/bin/env node' },
    external: ['@opentelemetry/api'],
  },
]);
