/**
 * Writes the generated dashboards, provisioning files and docs block (`npm run dashboards`), or
 * lists the files that differ from a fresh generation (`--check`, exit 1).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildArtifacts } from './build.js';

/** Generated files whose committed content differs from a fresh build (missing ones included). */
export function staleFiles(repoRoot: string): string[] {
  const stale: string[] = [];
  for (const [file, content] of buildArtifacts(repoRoot)) {
    const path = join(repoRoot, file);
    if (!existsSync(path) || readFileSync(path, 'utf8') !== content) stale.push(file);
  }
  return stale;
}

export function writeArtifacts(repoRoot: string): string[] {
  const written: string[] = [];
  for (const [file, content] of buildArtifacts(repoRoot)) {
    const path = join(repoRoot, file);
    if (existsSync(path) && readFileSync(path, 'utf8') === content) continue;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    written.push(file);
  }
  return written;
}

export function runGenerate(argv: readonly string[], repoRoot: string): number {
  if (argv.includes('--check')) {
    const stale = staleFiles(repoRoot);
    if (stale.length === 0) return 0;
    console.error(`Out of date (run npm run dashboards):\n  ${stale.join('\n  ')}`);
    return 1;
  }
  const written = writeArtifacts(repoRoot);
  console.log(written.length === 0 ? 'Dashboards are up to date.' : `Wrote:\n  ${written.join('\n  ')}`);
  return 0;
}
