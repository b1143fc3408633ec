import { defineConfig } from 'tsup';

// Two entry groups: the library ships ESM + CommonJS with types; the CLI is ESM only.
export default defineConfig([
  {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
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
