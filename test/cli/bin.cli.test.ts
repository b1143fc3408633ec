import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { BIN, ensureBuilt, ROOT } from './support/built-bin.js';

beforeAll(() => ensureBuilt(), 120_000);

it('the packaged `loopwatch` bin runs scan with the contract exit codes', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as { bin: Record<string, string> };
  expect(pkg.bin.loopwatch).toBe('./dist/cli.js');
  expect(readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node')).toBe(true);
  const fixtures = join(ROOT, 'test/fixtures/otlp');
  const loops = spawnSync(process.execPath, [BIN, 'scan', '--json', join(fixtures, 'looping-support.jsonl')], { encoding: 'utf8' });
  expect(loops.status).toBe(1);
  expect(loops.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { level: string }).level)).toEqual(['warning', 'critical']);
  const clean = spawnSync(process.execPath, [BIN, 'scan', join(fixtures, 'honest-run.json')], { encoding: 'utf8' });
  expect(clean.status).toBe(0);
  const bad = spawnSync(process.execPath, [BIN, 'scan', join(fixtures, 'bad/invalid-line.jsonl')], { encoding: 'utf8' });
  expect(bad.status).toBe(2);
  expect(bad.stderr).toContain('invalid-line.jsonl:3:');
  const stdin = spawnSync(process.execPath, [BIN, 'scan', '-'], { encoding: 'utf8', input: readFileSync(join(fixtures, 'looping-support.jsonl')) });
  expect(stdin.status).toBe(1);
  const version = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' });
  expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
});
