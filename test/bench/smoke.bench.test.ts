/**
 * `npm run bench` runs: the quick mode of every section, on the built package, prints each
 * figure and a table of the targets. The figures themselves are only indicative at this size
 * (and the bench is not part of any timing in tests).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

describe('npm run bench', () => {
  it('runs every section in quick mode and prints the targets', async () => {
    expect(existsSync(join(ROOT, 'dist', 'index.js')), 'build first: npm test runs npm run build').toBe(true);
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/index.ts', '--quick'], {
      cwd: ROOT,
      maxBuffer: 16 << 20,
      timeout: 240_000,
    });
    for (const title of ['Span lifecycle', 'Engine cost per tool call', 'Memory', 'Churn', 'loopwatch scan', 'loopwatch serve', 'loopwatch mcp', 'Targets']) expect(stdout).toContain(`## ${title}`);
    const targets = stdout.slice(stdout.indexOf('## Targets'));
    // issue 30's: against the pipeline users run (OTLP/protobuf encoding) and the no-op one, per
    // agent step, outside the fingerprint, tool-free traffic, the fingerprint per KB, allocation
    for (const target of ['≤ 1.150×', '≤ 1.450×', '≤ 0.450×', '≤ 0.143×', '≤ +0.050', '(2000 ns/KB at 2683)', '(2500 ns/KB at 2566)', '(1500 ns/KB at 1325)', '≤ 2.00 KiB', 'bounded', 'flat (≤ 1.25×)', '≥ 25,000', '≤ 1 ms', '≥ 500 calls/s'])
      expect(targets).toContain(target);
    expect(targets).toContain('the agent mix as run');
    expect(targets).toMatch(/heap allocated per tool call.*\d+(\.\d+)? (B|KiB)/);
    expect(stdout).toMatch(/\d+ of 18 targets met\./);
    // the µs figures orient: printed beside their targets, not counted
    expect(stdout).toMatch(/CPU per tool call all-in.*\d+\.\d µs\s+≤ 9 µs/);
    // every lifecycle scenario got a ratio, and the naive detector is measured beside loopwatch
    expect(stdout.match(/\d+\.\d{3}×/g)?.length ?? 0).toBeGreaterThanOrEqual(6);
    expect(stdout).toContain('the naive detector');
    // the yardsticks beside it: both texts hashed plainly, both parsed by V8's JSON parser, and
    // pipelines that encode their spans for export
    expect(stdout).toMatch(/the plain hash of arguments and results ÷ bare.*\d+\.\d{3}×/);
    expect(stdout).toMatch(/JSON\.parse of arguments and results ÷ bare.*\d+\.\d{3}×/);
    // (a quick run's few sets can put a yardstick below the idle processor: the sign is noise)
    expect(stdout).toMatch(/per tool call: V8's JSON\.parse ÷ the naive detector.*JSON\.parse -?\d+\.\d{2} µs/);
    expect(stdout).toMatch(/tool-free mix .*÷ the same pipeline exporting OTLP\/protobuf\s+\d+\.\d{3}×/);
  }, 250_000);
});
