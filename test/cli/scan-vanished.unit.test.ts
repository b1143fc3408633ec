/** Issue 28 (scan): a file of the folder being walked disappears (a log rotated away): the walk goes on. */
import { mkdtempSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandInputs } from '../../src/formats/input.js';

describe('scan of a folder whose files come and go', () => {
  it('skips a file that disappears between the listing and its stat, and lists the others', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-rotate-'));
    const name = (i: number): string => join(dir, `spans-${String(i).padStart(5, '0')}.jsonl`);
    const count = 600;
    for (let i = 0; i < count; i++) writeFileSync(name(i), '{}\n');
    // the walk stats the files in name order, one await each; a rotation removes them from the end meanwhile
    let next = count - 1;
    let removing = true;
    const rotate = (): void => {
      if (!removing || next < 0) return;
      unlinkSync(name(next--));
      setImmediate(rotate);
    };
    setImmediate(rotate);
    const files = await expandInputs([dir]);
    removing = false;
    expect(next).toBeLessThan(count - 10); // files did disappear during the walk
    expect(files.length).toBeGreaterThan(0);
    expect(files.length).toBeLessThan(count);
    expect(files.every((f) => f.problem === undefined)).toBe(true);
  });
});
