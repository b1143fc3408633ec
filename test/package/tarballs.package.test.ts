/**
 * The two published packages as npm would ship them (`npm pack` of the built code): the library
 * `loopwatch` (dist/) and the command `@loopwatch/cli` (packages/cli/). What is in each tarball,
 * what the ecosystem's own checkers say (publint, @arethetypeswrong/cli), what an app that
 * imports the library loads, and that the CLI's dependencies are exactly what its bundle imports.
 * `npm test` builds both before vitest runs.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import semver from 'semver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');
const CLI = join(REPO, 'packages', 'cli');
const BIN = join(REPO, 'node_modules', '.bin');

interface PackageJson {
  name: string;
  version: string;
  license: string;
  engines: { node: string };
  files: string[];
  bin?: Record<string, string>;
  scripts?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}
const readPackage = (dir: string): PackageJson => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
const pkg = readPackage(REPO);
const cliPkg = readPackage(CLI);

interface PackResult {
  filename: string;
  size: number;
  files: { path: string; size: number }[];
}

let dir = '';
let tarball = '';
let packed: PackResult;
let cliTarball = '';
let cliPacked: PackResult;

/** `npm pack` of the package in `cwd`; --ignore-scripts: it is already built (prepack would build again). */
function pack(cwd: string): PackResult {
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return (JSON.parse(out) as PackResult[])[0] as PackResult;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'loopwatch-pack-'));
  packed = pack(REPO);
  tarball = join(dir, packed.filename);
  cliPacked = pack(CLI);
  cliTarball = join(dir, cliPacked.filename);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Bare module specifiers a built ESM file imports (Node's own modules included). */
function bareImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = new Set<string>();
  // static imports, side-effect imports, require through createRequire, and import("...") of what is loaded when needed
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"([^"./][^"]*)"|(?:^|\n)import\s+"([^"./][^"]*)"|createRequire\([^)]*\)\("([^"./][^"]*)"\)|\bimport\("([^"./][^"]*)"\)/g)) {
    found.add((m[1] ?? m[2] ?? m[3] ?? m[4] ?? '').replace(/^node:/, ''));
  }
  return [...found];
}
function expectPublintClean(tgz: string): void {
  const res = spawnSync(join(BIN, 'publint'), ['run', tgz, '--strict'], { cwd: REPO, encoding: 'utf8' });
  expect(`${res.stdout}${res.stderr}`).toContain('All good!');
  expect(res.status).toBe(0);
}

/** The package a specifier belongs to (`@scope/name/sub` -> `@scope/name`). */
const packageOf = (spec: string): string => spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');

describe('the library tarball (loopwatch)', () => {
  it('ships the licence, changelog, config schema, register stub and built library, and no sources, tests or CLI', () => {
    const paths = packed.files.map((f) => f.path);
    for (const required of ['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json', 'schema/loopwatch.schema.json', 'register/package.json', 'advanced/package.json', 'dist/advanced.js', 'dist/advanced.cjs', 'dist/advanced.d.ts', 'dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'dist/register.js', 'dist/register.cjs']) {
      expect(paths, required).toContain(required);
    }
    expect(paths.filter((p) => p.startsWith('src/') || p.startsWith('test/') || p.startsWith('packages/') || p.endsWith('.ts') && !p.endsWith('.d.ts') && !p.endsWith('.d.cts'))).toEqual([]);
    expect(paths.filter((p) => /cli/.test(p))).toEqual([]);
    expect(readFileSync(join(REPO, 'LICENSE'), 'utf8')).toContain('Apache License\n                           Version 2.0, January 2004');
  });

  it('keeps source maps without embedded sources, and stays small (was 572 kB packed with them)', () => {
    for (const file of readdirSync(join(REPO, 'dist')).filter((f) => f.endsWith('.map'))) {
      const map = JSON.parse(readFileSync(join(REPO, 'dist', file), 'utf8')) as { sources: string[]; sourcesContent?: unknown };
      expect(map.sourcesContent, file).toBeUndefined();
      // an entry that only re-exports chunks (loopwatch/advanced) maps no source of its own
      if (file.startsWith('chunk-') || file.startsWith('index.')) expect(map.sources.length, file).toBeGreaterThan(0);
    }
    // the library alone packs to about 361 kB (its docs only; serve's, scan's, mcp's and the
    // dashboards' stay in the repository; it was 332 kB when this bound was set); embedded sources
    // add about 210 kB and the CLI about 165 kB, so this bound catches either coming back
    expect(packed.size).toBeLessThan(400_000);
    expect(statSync(tarball).size).toBe(packed.size);
  });

  it('has one copy of the engine per module format: index and register share a chunk', () => {
    for (const ext of ['.js', '.cjs']) {
      const files = readdirSync(join(REPO, 'dist')).filter((f) => f.endsWith(ext));
      const defining = files.filter((f) => /\b(?:class LoopEngine\b|var LoopEngine = (?:\(\w+ = )?class\b)/.test(readFileSync(join(REPO, 'dist', f), 'utf8')));
      expect(defining, ext).toHaveLength(1);
      expect(defining[0], ext).toMatch(/^chunk-/);
    }
  });

  it('declares no dependencies and no install scripts: installing it adds only what the app already has', () => {
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(Object.keys(pkg.scripts ?? {}).filter((s) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(s))).toEqual([]);
    expect(pkg.bin).toBeUndefined();
  });

  it('passes publint --strict', () => expectPublintClean(tarball));

  it('passes @arethetypeswrong/cli in every resolution mode, loopwatch/advanced and loopwatch/register included', () => {
    const res = spawnSync(join(BIN, 'attw'), [tarball, '--format', 'json'], { cwd: REPO, encoding: 'utf8' });
    const report = JSON.parse(res.stdout) as {
      problems: Record<string, unknown> | unknown[];
      analysis: { entrypoints: Record<string, { resolutions: Record<string, { resolution?: { fileName: string } }> }> };
    };
    expect(Object.keys(report.problems)).toEqual([]);
    const entrypoints = report.analysis.entrypoints;
    expect(Object.keys(entrypoints).sort()).toEqual(['.', './advanced', './package.json', './register']);
    for (const mode of ['node10', 'node16-cjs', 'node16-esm', 'bundler']) {
      expect(entrypoints['./register']?.resolutions[mode]?.resolution?.fileName, mode).toMatch(/register\.d\.c?ts$/);
      expect(entrypoints['./advanced']?.resolutions[mode]?.resolution?.fileName, mode).toMatch(/advanced\.d\.c?ts$/);
    }
    expect(res.status).toBe(0);
  });
});

describe('the CLI tarball (@loopwatch/cli)', () => {
  it('ships the executable bundle, licence and readme, and nothing else', () => {
    expect(cliPacked.files.map((f) => f.path).sort()).toEqual(['LICENSE', 'README.md', 'dist/cli.js', 'dist/cli.js.map', 'package.json']);
    expect(readFileSync(join(CLI, 'LICENSE'), 'utf8')).toBe(readFileSync(join(REPO, 'LICENSE'), 'utf8'));
    expect(cliPkg.bin).toEqual({ loopwatch: './dist/cli.js' });
    const cli = join(CLI, 'dist', 'cli.js');
    expect(readFileSync(cli, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(statSync(cli).mode & 0o111).not.toBe(0);
    expect(Object.keys(cliPkg.scripts ?? {}).filter((s) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(s))).toEqual([]);
  });

  it('depends on exactly the packages its bundle imports, each installed here in a version its range accepts', () => {
    const imported = [...new Set(bareImports(join(CLI, 'dist', 'cli.js')).filter((s) => !builtinModules.includes(s)).map(packageOf))].sort();
    const declared = Object.keys(cliPkg.dependencies ?? {}).sort();
    expect(imported).toEqual(declared);
    for (const [name, range] of Object.entries(cliPkg.dependencies ?? {})) {
      const installed = readPackage(join(REPO, 'node_modules', name)).version;
      expect(semver.satisfies(installed, range), `${name}@${installed} vs ${range}`).toBe(true);
    }
  });

  it('has the engine inside (the library is not one of its dependencies)', () => {
    expect(readFileSync(join(CLI, 'dist', 'cli.js'), 'utf8')).toMatch(/\b(?:class LoopEngine\b|var LoopEngine = class\b)/);
    expect(cliPkg.dependencies?.['loopwatch']).toBeUndefined();
  });

  it('passes publint --strict', () => expectPublintClean(cliTarball));

  it('passes @arethetypeswrong/cli: an executable with no import entry point, so no types to get wrong', () => {
    const res = spawnSync(join(BIN, 'attw'), [cliTarball, '--format', 'json'], { cwd: REPO, encoding: 'utf8' });
    const report = JSON.parse(res.stdout) as { types: unknown; problems?: unknown; analysis?: { types: unknown } };
    expect(report.problems ?? []).toEqual([]);
    expect(report.analysis?.types ?? report.types).toBe(false);
    expect(res.status).toBe(0);
  });
});

describe('package.json of both packages', () => {
  it('move together: one version, one Node range, one licence', () => {
    expect(cliPkg.version).toBe(pkg.version);
    expect(cliPkg.engines.node).toBe(pkg.engines.node);
    expect(cliPkg.license).toBe(pkg.license);
    expect(cliPkg.name).toBe('@loopwatch/cli');
  });

  it('state the Node version their dependencies need (commander 14: Node >= 20; the OpenTelemetry packages: >= 20.6)', () => {
    expect(pkg.engines.node).toBe('>=20.6.0');
    const commander = readPackage(join(REPO, 'node_modules', 'commander')) as PackageJson & { engines: { node: string } };
    expect(commander.engines.node).toBe('>=20');
  });

  it('the library: @opentelemetry/api the one peer, the SDK and yaml optional ones (only loopwatch/register loads them)', () => {
    expect(pkg.peerDependencies).toEqual({ '@opentelemetry/api': expect.any(String), '@opentelemetry/sdk-node': expect.any(String), yaml: expect.any(String) });
    expect(pkg.peerDependenciesMeta).toEqual({ '@opentelemetry/sdk-node': { optional: true }, yaml: { optional: true } });
  });

  it('the CLI depends on the ranges the repository develops and tests with (what the tests run is what ships)', () => {
    for (const [name, range] of Object.entries(cliPkg.dependencies ?? {})) {
      if (name === '@opentelemetry/api') continue; // the repository pins the lowest API its SDKs accept; see below
      expect(pkg.devDependencies?.[name], name).toBe(range);
    }
    expect(semver.satisfies(readPackage(join(REPO, 'node_modules', '@opentelemetry/api')).version, cliPkg.dependencies?.['@opentelemetry/api'] ?? '')).toBe(true);
  });
});

describe('what an app loads', () => {
  /** Modules from node_modules that a CommonJS app has loaded after running `code`. */
  function loadedPackages(code: string, env: Record<string, string> = {}, preload: string[] = []): string[] {
    const probe = `${code};const seen=new Set();for(const k of Object.keys(require.cache)){const m=/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(k);if(m)seen.add(m[1])}console.log(JSON.stringify([...seen].sort()))`;
    const out = execFileSync(process.execPath, [...preload, '-e', probe], { cwd: REPO, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } });
    return JSON.parse(out.trim().split('\n').pop() ?? '[]') as string[];
  }

  it('require("loopwatch") loads neither commander nor yaml (nor any serve-only dependency)', () => {
    const loaded = loadedPackages(`require(${JSON.stringify(join(REPO, 'dist', 'index.cjs'))})`);
    expect(loaded).toContain('@opentelemetry/api');
    expect(loaded).not.toContain('commander');
    expect(loaded).not.toContain('yaml');
    expect(loaded.filter((p) => p !== '@opentelemetry/api')).toEqual([]);
  });

  it('loopwatch/register loads yaml only when LOOPWATCH_CONFIG names a file', () => {
    const preload = ['--require', join(REPO, 'dist', 'register.cjs')];
    expect(loadedPackages('0', { LOOPWATCH_REGISTER: 'off' }, preload)).not.toContain('yaml');
    const config = join(dir, 'loopwatch.yaml');
    execFileSync('bash', ['-c', `printf 'mode: observe\\n' > ${JSON.stringify(config)}`]);
    expect(loadedPackages('0', { LOOPWATCH_REGISTER: 'off', LOOPWATCH_CONFIG: config }, preload)).toContain('yaml');
  });

  it('the ESM entry points import neither commander nor yaml, directly or through a chunk', () => {
    const seen = new Set<string>();
    const imports = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(join(REPO, 'dist', file), 'utf8');
      for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"|(?:^|\n)import\s+"([^"]+)"/g)) {
        const spec = m[1] ?? m[2] ?? '';
        if (spec.startsWith('./')) visit(spec.slice(2));
        else imports.add(spec.replace(/^node:/, ''));
      }
    };
    visit('index.js');
    visit('advanced.js');
    visit('register.js');
    expect(seen.size).toBeGreaterThan(2);
    // Node's own modules and the peer dependency only: no commander, no yaml, no serve dependency.
    expect([...imports].filter((s) => s !== '@opentelemetry/api' && !builtinModules.includes(s))).toEqual([]);
  });
});

describe('the library installed alone (the tarball and @opentelemetry/api, as `npm install loopwatch` leaves an app)', () => {
  let app = '';
  beforeAll(() => {
    app = join(dir, 'app');
    mkdirSync(join(app, 'node_modules', 'loopwatch'), { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', join(app, 'node_modules', 'loopwatch'), '--strip-components=1']);
    mkdirSync(join(app, 'node_modules', '@opentelemetry'), { recursive: true });
    symlinkSync(join(REPO, 'node_modules', '@opentelemetry', 'api'), join(app, 'node_modules', '@opentelemetry', 'api'));
    writeFileSync(join(app, 'package.json'), '{"name":"app","private":true}');
  });

  /** stderr of `node --require loopwatch/register -e 0` in the app, with `env`. */
  const register = (env: Record<string, string>): string =>
    spawnSync(process.execPath, ['--require', 'loopwatch/register', '-e', '0'], { cwd: app, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } }).stderr;

  it('loads and stops a loop in both module formats', () => {
    const code = `const guard = new M.ToolLoopGuard({ action: 'abort' }); let stopped = 'never';
      for (let i = 0; i < 20 && stopped === 'never'; i++) { try { const call = guard.check('search', { q: 1 }); if (call.action === 'proceed') call.succeeded('same'); } catch (e) { stopped = e.name + ' ' + e.kind; } }
      console.log(stopped);`;
    for (const [flags, load] of [[['-e'], "const M = require('loopwatch');"], [['--input-type=module', '-e'], "import * as M from 'loopwatch';"]] as const) {
      const res = spawnSync(process.execPath, [...flags, load + code], { cwd: app, encoding: 'utf8' });
      expect(res.stderr).toBe('');
      expect(res.stdout.trim()).toBe('ToolLoopError repeat');
    }
  });

  it('loopwatch/register names the SDK it needs when it is missing', () => {
    expect(register({})).toContain('not started: @opentelemetry/sdk-node is not installed: add it to the app (npm i @opentelemetry/sdk-node)');
  });

  it('reads a JSON configuration file without the YAML parser, with the key of each problem', () => {
    const good = join(app, 'loopwatch.json');
    writeFileSync(good, '{ "mode": "observe", "thresholds": { "repeat": { "critical": 9 } } }');
    expect(register({ LOOPWATCH_REGISTER: 'off', LOOPWATCH_CONFIG: good })).toBe('');
    const bad = join(app, 'bad.json');
    writeFileSync(bad, '{ "mode": "loud" }');
    expect(register({ LOOPWATCH_REGISTER: 'off', LOOPWATCH_CONFIG: bad })).toMatch(/LOOPWATCH_CONFIG: .*bad\.json: mode: .*; the file is ignored/);
    const broken = join(app, 'broken.json');
    writeFileSync(broken, '{\n  "mode": observe\n}');
    expect(register({ LOOPWATCH_REGISTER: 'off', LOOPWATCH_CONFIG: broken })).toMatch(/broken\.json:2:\d+: invalid JSON/);
  });

  it('names the optional yaml package when the configuration file is YAML', () => {
    const file = join(app, 'loopwatch.yaml');
    writeFileSync(file, 'mode: observe\n');
    expect(register({ LOOPWATCH_REGISTER: 'off', LOOPWATCH_CONFIG: file })).toContain("a YAML configuration needs the 'yaml' package, which is not installed: add it to the app (npm i yaml), or write the configuration as JSON");
  });
});

