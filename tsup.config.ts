import { defineConfig, type Options } from 'tsup';

// `npm run build` empties dist/ first: the groups build in parallel, so neither may clean it.
//
// ESM: the library (`loopwatch`), `loopwatch/register` and the CLI are built together with code
// splitting, so the CLI imports the library's chunks instead of carrying a second copy of the
// engine, and `register` shares them too: the processor it starts is an instance of the same
// classes the app imports (`ToolLoopError` instanceof checks hold) within one module format.
// CommonJS: the library and `register` only (the CLI is ESM).
//
// Source maps map stack traces to src/ file names and lines but do not embed the sources
// (`sourcesContent: false`): they were most of the tarball and no debugger needs them to step
// through published code.
const shared: Options = {
  splitting: true,
  shims: true,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  external: ['@opentelemetry/api'],
  esbuildOptions(options) {
    options.sourcesContent = false;
  },
};

const library = { index: 'src/index.ts', register: 'src/register/index.ts' };

export default defineConfig([
  {
    ...shared,
    // src/cli/bin.ts starts with `#!/usr/bin/env node`: esbuild keeps an entry's hashbang and
    // tsup makes the file executable.
    entry: { ...library, cli: 'src/cli/bin.ts' },
    format: ['esm'],
    dts: { entry: library },
  },
  {
    ...shared,
    entry: library,
    format: ['cjs'],
    dts: { entry: library },
  },
]);
