/**
 * The committed dashboards, provisioning files and docs block are exactly what `npm run
 * dashboards` generates from dashboards/src; and the check itself notices a change.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildArtifacts } from '../../dashboards/src/build.js';
import { staleFiles, writeArtifacts } from '../../dashboards/src/generate.js';
import { REPO_ROOT } from './support/dashboard-json.js';

describe('generated dashboard files', () => {
  it('match a fresh generation (run `npm run dashboards` after changing dashboards/src)', () => {
    expect(staleFiles(REPO_ROOT)).toEqual([]);
  });

  it('are generated deterministically', () => {
    expect([...buildArtifacts(REPO_ROOT)]).toEqual([...buildArtifacts(REPO_ROOT)]);
  });

  it('report a hand-edited or missing file as stale, and regenerate it', () => {
    const copy = mkdtempSync(join(tmpdir(), 'loopwatch-dashboards-'));
    const files = [...buildArtifacts(REPO_ROOT).keys()];
    cpSync(join(REPO_ROOT, 'docs'), join(copy, 'docs'), { recursive: true });
    const sources = join(REPO_ROOT, 'dashboards', 'src');
    cpSync(join(REPO_ROOT, 'dashboards'), join(copy, 'dashboards'), { recursive: true, filter: (src) => !src.startsWith(sources) });
    expect(staleFiles(copy)).toEqual([]);
    const [first, second] = files;
    if (!first || !second) throw new Error('expected several generated files');
    writeFileSync(join(copy, first), readFileSync(join(copy, first), 'utf8').replace('"schemaVersion"', '"schemaVersion_"'));
    writeFileSync(join(copy, second), '');
    expect(staleFiles(copy).sort()).toEqual([first, second].sort());
    expect(writeArtifacts(copy).sort()).toEqual([first, second].sort());
    expect(staleFiles(copy)).toEqual([]);
  });
});
