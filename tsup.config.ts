import { readFileSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';

// Two packages are built from src/ (`npm run build` empties both dist/ folders first: the groups
// build in parallel, so none may clean).
//
// `loopwatch` (dist/): the library, `loopwatch/advanced` and `loopwatch/register`, ESM and CommonJS. Within one module
// format they share chunks, so the processor `register` starts is an instance of the same
// classes the app imports (`ToolLoopError` instanceof checks hold). Its only import is the peer
// `@opentelemetry/api` (`yaml` and the SDK are optional peers that `register` loads when asked).
//
// `@loopwatch/cli` (packages/cli/dist/): the `loopwatch` command, one ESM file with the engine
// inside; its npm dependencies (commander, the OTLP codec, gRPC, the SDK exporters) stay
// imports, and are exactly its package.json's `dependencies` (test/package checks both ways).
//
// Source maps map stack traces to src/ file names and lines but do not embed the sources
// (`sourcesContent: false`): they were most of the tarball and no debugger needs them to step
// through published code.
const shared: Options = {
  shims: true,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  esbuildOptions(options) {
    options.sourcesContent = false;
  },
};

const library: Options = {
  ...shared,
  entry: { index: 'src/index.ts', advanced: 'src/advanced.ts', register: 'src/register/index.ts' },
  splitting: true,
  external: ['@opentelemetry/api', 'yaml'],
  dts: true,
};

const cliDependencies = Object.keys((JSON.parse(readFileSync('packages/cli/package.json', 'utf8')) as { dependencies: Record<string, string> }).dependencies);

export default defineConfig([
  { ...library, format: ['esm'] },
  { ...library, format: ['cjs'] },
  {
    ...shared,
    // src/cli/bin.ts starts with `#!/usr/bin/env node`: esbuild keeps an entry's hashbang and
    // tsup makes the file executable.
    entry: { cli: 'src/cli/bin.ts' },
    outDir: 'packages/cli/dist',
    format: ['esm'],
    splitting: false,
    // tsup bundles what the root package.json does not list as a dependency: name the CLI's own.
    external: cliDependencies,
    skipNodeModulesBundle: false,
  },
]);
