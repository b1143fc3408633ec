/**
 * The packaged `loopwatch` bin (packages/cli/dist/cli.js), built when it is missing.
 *
 * `npm test` builds before it runs; the tests that run the bin build it themselves so that
 * `npm run test:fast` and `vitest run test/cli` work in a fresh clone. Test files run in parallel,
 * and a second build would empty dist/ under the first: the file that finds the bin missing builds
 * it under a lock (a directory, whose creation is atomic) in the run's temporary directory, which
 * goes with the run if it is killed; the others wait for the lock to go.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '../../..');
export const BIN = join(ROOT, 'packages/cli/dist/cli.js');

const LOCK = join(tmpdir(), 'loopwatch-build.lock');
const SLEEP = new Int32Array(new SharedArrayBuffer(4));

/** Returns once the bin exists and no build of this run is under way; builds it if need be. */
export function ensureBuilt(): void {
  for (;;) {
    if (!existsSync(LOCK)) {
      if (existsSync(BIN)) return;
      try {
        mkdirSync(LOCK);
        break;
      } catch {
        // another test file took the lock first: wait for its build
      }
    }
    Atomics.wait(SLEEP, 0, 0, 200);
  }
  try {
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
