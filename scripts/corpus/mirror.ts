import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Read-only access to a fetched repository snapshot (a bare git directory): the corpus is
 * re-created from these, never from a working copy, so the commit and blob ids recorded in
 * `sources.json` say exactly which bytes each run came from.
 */

export function mirrorRoot(): string {
  return process.env.LOOPWATCH_MIRRORS ?? '/work/.mirror';
}

/** The git directory of `owner/name` under the mirror root, or undefined when it is not there. */
export function mirrorDir(repo: string): string | undefined {
  const dir = join(mirrorRoot(), repo.replace('/', '+'), 'repo');
  return existsSync(dir) ? dir : undefined;
}

function git(dir: string, args: readonly string[], maxBuffer = 1 << 28): string {
  return execFileSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8', maxBuffer, stdio: ['ignore', 'pipe', 'ignore'] });
}

export function headCommit(dir: string): string {
  return git(dir, ['rev-parse', 'HEAD']).trim();
}

export interface BlobRef {
  readonly path: string;
  readonly blob: string;
}

/**
 * Every blob reachable from any ref whose path matches, present in the snapshot (files of 4 MiB
 * and more are absent from snapshots), one per distinct blob, sorted by path.
 */
export function findBlobs(dir: string, path: RegExp): BlobRef[] {
  const listing = git(dir, ['rev-list', '--objects', '--all', '--missing=print']);
  const byBlob = new Map<string, string>();
  for (const line of listing.split('\n')) {
    const space = line.indexOf(' ');
    if (space < 0) continue;
    const sha = line.slice(0, space);
    const p = line.slice(space + 1);
    if (!path.test(p) || byBlob.has(sha)) continue;
    byBlob.set(sha, p);
  }
  const out: BlobRef[] = [];
  for (const [blob, p] of byBlob) {
    if (blobExists(dir, blob)) out.push({ path: p, blob });
  }
  return out.sort((a, b) => a.path.localeCompare(b.path) || a.blob.localeCompare(b.blob));
}

/** The blobs of the newest commit (HEAD) whose path matches, present in the snapshot, sorted by path. */
export function findHeadBlobs(dir: string, path: RegExp): BlobRef[] {
  const out: BlobRef[] = [];
  for (const line of git(dir, ['ls-tree', '-r', 'HEAD']).split('\n')) {
    const m = /^\d+ blob ([0-9a-f]+)\t(.+)$/.exec(line);
    if (m?.[1] && m[2] && path.test(m[2]) && blobExists(dir, m[1])) out.push({ path: m[2], blob: m[1] });
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

function blobExists(dir: string, sha: string): boolean {
  try {
    return git(dir, ['cat-file', '-t', sha]).trim() === 'blob';
  } catch {
    return false;
  }
}

export function readBlob(dir: string, sha: string): string {
  return git(dir, ['cat-file', 'blob', sha]);
}
