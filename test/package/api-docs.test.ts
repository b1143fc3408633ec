/**
 * docs/api.md describes every runtime export of the package, so a new export cannot ship
 * undocumented (types are listed there too, but only runtime names can be enumerated here).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as loopwatch from '../../src/index.js';

const REPO = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(REPO, 'docs', 'api.md'), 'utf8');

describe('docs/api.md', () => {
  it('names every runtime export of loopwatch in code', () => {
    const missing = Object.keys(loopwatch).filter((name) => !new RegExp(`\`${name}\\b`).test(doc));
    expect(missing).toEqual([]);
    expect(Object.keys(loopwatch).length).toBeGreaterThan(30);
  });
});
