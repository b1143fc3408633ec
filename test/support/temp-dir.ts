/**
 * One temporary directory per test run: vitest.config.ts creates it (`runTempDir()`) and hands it
 * to every test worker as `TMPDIR`, which `os.tmpdir()` and the processes tests start read; this
 * module, as vitest's global setup, removes it when the run ends. So `npm test` leaves nothing in
 * the system's temp directory, however a test creates its files. A run that is killed leaves its
 * one directory behind; the next run removes such leftovers older than a day.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'loopwatch-test-run-';
const KEY = 'LOOPWATCH_TEST_RUN_TMPDIR';

/** Creates this run's directory (once per process) and points TMPDIR at it. */
export function runTempDir(): string {
  const existing = process.env[KEY];
  if (existing) return existing;
  const parent = tmpdir();
  const dayAgo = Date.now() - 24 * 3600 * 1000;
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(PREFIX)) continue;
    try {
      if (statSync(join(parent, name)).mtimeMs < dayAgo) rmSync(join(parent, name), { recursive: true, force: true });
    } catch {
      // another run's directory, gone meanwhile
    }
  }
  const dir = mkdtempSync(join(parent, PREFIX));
  process.env[KEY] = dir;
  process.env.TMPDIR = dir;
  return dir;
}

/** Vitest global setup: the teardown removes this run's directory. */
export default function setup(): () => void {
  const dir = runTempDir();
  return () => rmSync(dir, { recursive: true, force: true });
}
