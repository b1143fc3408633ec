/**
 * docs/api.md describes every runtime export of the package's two entry points, `loopwatch` and
 * `loopwatch/advanced`, each under its own heading, so a new export cannot ship undocumented
 * (types are listed there too, but only runtime names can be enumerated here). The root stays
 * small: what an application calls.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as advanced from '../../src/advanced.js';
import * as loopwatch from '../../src/index.js';

const REPO = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(REPO, 'docs', 'api.md'), 'utf8');
const ADVANCED_HEADING = '\n## `loopwatch/advanced`';
const rootPart = doc.slice(0, doc.indexOf(ADVANCED_HEADING));
const advancedPart = doc.slice(doc.indexOf(ADVANCED_HEADING));

const undocumented = (names: string[], text: string): string[] => names.filter((name) => !new RegExp(`\`${name}\\b`).test(text));

describe('docs/api.md', () => {
  it('has a part for loopwatch/advanced after the root', () => {
    expect(doc.indexOf(ADVANCED_HEADING)).toBeGreaterThan(0);
  });

  it('names every runtime export of loopwatch in the root part', () => {
    expect(undocumented(Object.keys(loopwatch), rootPart)).toEqual([]);
  });

  it('names every runtime export of loopwatch/advanced in its part', () => {
    expect(undocumented(Object.keys(advanced), advancedPart)).toEqual([]);
  });

  it('keeps the two entry points apart: no runtime name in both', () => {
    expect(Object.keys(loopwatch).filter((name) => name in advanced)).toEqual([]);
  });

  it('keeps the root to what an application calls', () => {
    expect(Object.keys(loopwatch).sort()).toEqual(
      [
        'ConfigError',
        'LOOP_HINT_TYPE',
        'LoopDetectionSpanProcessor',
        'ToolLoopError',
        'ToolLoopGuard',
        'customAdapter',
        'defaultAdapters',
        'guardAiSdkTools',
        'guardDispatcher',
        'isLoopHint',
        'isTransientError',
        'registeredProcessor',
        'validateConfig',
      ].sort(),
    );
  });
});
