/**
 * The published package as npm would ship it (`npm pack` of the built dist/): what is in the
 * tarball, what the ecosystem's own checkers say (publint, @arethetypeswrong/cli), and what an
 * app that imports the library loads. `npm test` builds dist/ before vitest runs.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');
const BIN = join(REPO, 'node_modules', '.bin');
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  engines: { node: string };
  files: string[];
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  dependencies: Record<string, string>;
};

interface PackResult {
  filename: string;
  size: number;
  files: { path: string; size: number }[];
}

let dir = '';
let tarball = '';
let packed: PackResult;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'loopwatch-pack-'));
  // --ignore-scripts: dist/ is already built (prepack would build it again).
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  packed = (JSON.parse(out) as PackResult[])[0] as PackResult;
  tarball = join(dir, packed.filename);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the npm tarball', () => {
  it('ships the licence, changelog, config schema, register stub and built code, and no sources or tests', () => {
    const paths = packed.files.map((f) => f.path);
    for (const required of ['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json', 'schema/loopwatch.schema.json', 'register/package.json', 'dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'dist/register.js', 'dist/register.cjs', 'dist/cli.js']) {
      expect(paths, required).toContain(required);
    }
    expect(paths.filter((p) => p.startsWith('src/') || p.startsWith('test/') || p.endsWith('.ts') && !p.endsWith('.d.ts') && !p.endsWith('.d.cts'))).toEqual([]);
    expect(readFileSync(join(REPO, 'LICENSE'), 'utf8')).toContain('Apache License\n                           Version 2.0, January 2004');
  });

  it('keeps source maps without embedded sources, and stays small (was 572 kB packed with them)', () => {
    for (const file of readdirSync(join(REPO, 'dist')).filter((f) => f.endsWith('.map'))) {
      const map = JSON.parse(readFileSync(join(REPO, 'dist', file), 'utf8')) as { sources: string[]; sourcesContent?: unknown };
      expect(map.sourcesContent, file).toBeUndefined();
      // an entry whose code all lives in chunks shared with the CLI or loopwatch/register only
      // re-exports them: its map is empty; any other map names its sources
      if (map.sources.length === 0) expect((map as { mappings?: string }).mappings, file).toBe('');
      else expect(map.sources.length, file).toBeGreaterThan(0);
    }
    // 267 kB at the packaging fix; 354 kB with serve (generated OTLP code) and cost: a bound that
    // still catches embedded sources (572 kB) or a second bundled engine
    expect(packed.size).toBeLessThan(400_000);
    expect(statSync(tarball).size).toBe(packed.size);
  });

  it('has one copy of the engine: the CLI imports the library chunks instead of bundling its own', () => {
    const cli = readFileSync(join(REPO, 'dist', 'cli.js'), 'utf8');
    expect(cli.startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(statSync(join(REPO, 'dist', 'cli.js')).mode & 0o111).not.toBe(0);
    // The engine's class is defined once among the ESM files, in a chunk, not in cli.js.
    const esm = readdirSync(join(REPO, 'dist')).filter((f) => f.endsWith('.js'));
    const defining = esm.filter((f) => /\b(?:class LoopEngine\b|var LoopEngine = class\b)/.test(readFileSync(join(REPO, 'dist', f), 'utf8')));
    expect(defining).toHaveLength(1);
    expect(defining[0]).toMatch(/^chunk-/);
    expect(cli).toMatch(/from "\.\/chunk-[\w-]+\.js"/);
  });

  it('passes publint --strict', () => {
    const res = spawnSync(join(BIN, 'publint'), ['run', tarball, '--strict'], { cwd: REPO, encoding: 'utf8' });
    expect(`${res.stdout}${res.stderr}`).toContain('All good!');
    expect(res.status).toBe(0);
  });

  it('passes @arethetypeswrong/cli in every resolution mode, loopwatch/register included', () => {
    const res = spawnSync(join(BIN, 'attw'), [tarball, '--format', 'json'], { cwd: REPO, encoding: 'utf8' });
    const report = JSON.parse(res.stdout) as {
      problems: Record<string, unknown> | unknown[];
      analysis: { entrypoints: Record<string, { resolutions: Record<string, { resolution?: { fileName: string } }> }> };
    };
    expect(Object.keys(report.problems)).toEqual([]);
    const entrypoints = report.analysis.entrypoints;
    expect(Object.keys(entrypoints).sort()).toEqual(['.', './package.json', './register']);
    for (const mode of ['node10', 'node16-cjs', 'node16-esm', 'bundler']) {
      expect(entrypoints['./register']?.resolutions[mode]?.resolution?.fileName, mode).toMatch(/register\.d\.c?ts$/);
    }
    expect(res.status).toBe(0);
  });
});

describe('package.json', () => {
  it('states the Node version its dependencies need (commander 14: Node >= 20; the OpenTelemetry packages: >= 20.6)', () => {
    expect(pkg.engines.node).toBe('>=20.6.0');
    const commander = JSON.parse(readFileSync(join(REPO, 'node_modules', 'commander', 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(commander.engines.node).toBe('>=20');
  });

  it('makes @opentelemetry/sdk-node an optional peer (only loopwatch/register starts it)', () => {
    expect(pkg.peerDependencies['@opentelemetry/sdk-node']).toBeDefined();
    expect(pkg.peerDependenciesMeta['@opentelemetry/sdk-node']?.optional).toBe(true);
    expect(pkg.dependencies['@opentelemetry/sdk-node']).toBeUndefined();
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
    visit('register.js');
    expect(seen.size).toBeGreaterThan(2);
    // Node's own modules and the peer dependency only: no commander, no yaml, no serve dependency.
    expect([...imports].filter((s) => s !== '@opentelemetry/api' && !builtinModules.includes(s))).toEqual([]);
  });
});
