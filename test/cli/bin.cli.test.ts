import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'packages/cli/dist/cli.js');

beforeAll(() => {
  // `npm test` builds first; building here too keeps `vitest run test/cli` usable on its own.
  if (!existsSync(bin)) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' });
}, 120_000);

it('the packaged `loopwatch` bin runs scan with the contract exit codes', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'packages/cli/package.json'), 'utf8')) as { bin: Record<string, string> };
  expect(pkg.bin.loopwatch).toBe('./dist/cli.js');
  expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node')).toBe(true);
  const fixtures = join(root, 'test/fixtures/otlp');
  const loops = spawnSync(process.execPath, [bin, 'scan', '--json', join(fixtures, 'looping-support.jsonl')], { encoding: 'utf8' });
  expect(loops.status).toBe(1);
  expect(loops.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { level: string }).level)).toEqual(['warning', 'critical']);
  const clean = spawnSync(process.execPath, [bin, 'scan', join(fixtures, 'honest-run.json')], { encoding: 'utf8' });
  expect(clean.status).toBe(0);
  const bad = spawnSync(process.execPath, [bin, 'scan', join(fixtures, 'bad/invalid-line.jsonl')], { encoding: 'utf8' });
  expect(bad.status).toBe(2);
  expect(bad.stderr).toContain('invalid-line.jsonl:3:');
  const stdin = spawnSync(process.execPath, [bin, 'scan', '-'], { encoding: 'utf8', input: readFileSync(join(fixtures, 'looping-support.jsonl')) });
  expect(stdin.status).toBe(1);
  const version = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8' });
  expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
});
