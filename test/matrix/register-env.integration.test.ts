import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { settingsFromEnv } from '../../src/register/env.js';
import { LoopDetectionSpanProcessor } from '../../src/index.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('LOOPWATCH_* variables of the zero-code start', () => {
  it('defaults: start NodeSDK, warn on stderr, enforce', () => {
    const s = settingsFromEnv({});
    expect(s).toMatchObject({ register: 'sdk', log: 'warn', attachTimeoutMs: 30_000, problems: [] });
    expect(new LoopDetectionSpanProcessor(s.options).engine.config.mode).toBe('enforce');
  });

  it('a config file (YAML) first, the single variables on top', () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-env-'));
    dirs.push(dir);
    const file = join(dir, 'loopwatch.yaml');
    writeFileSync(file, 'mode: observe\nthresholds:\n  repeat: { warning: 4, critical: 9 }\n  cycle: { warning: 5, critical: 6 }\ntools:\n  deploy: { role: exempt }\n');
    const s = settingsFromEnv({ LOOPWATCH_CONFIG: file, LOOPWATCH_MODE: 'enforce', LOOPWATCH_THRESHOLDS: 'repeat=:7, unknownTool=-:3', LOOPWATCH_POLLERS: 'get_status, poll_*' });
    expect(s.problems).toEqual([]);
    expect(s.options.mode).toBe('enforce');
    expect(s.options.thresholds).toEqual({ repeat: { warning: 4, critical: 7 }, cycle: { warning: 5, critical: 6 }, unknownTool: { warning: null, critical: 3 } });
    expect(s.options.tools).toEqual({ deploy: { role: 'exempt' }, get_status: { role: 'poller' }, 'poll_*': { role: 'poller' } });
    const engine = new LoopDetectionSpanProcessor(s.options).engine;
    expect(engine.config.mode).toBe('enforce');
  });

  it('reports what it cannot use and carries on', () => {
    const s = settingsFromEnv({ LOOPWATCH_CONFIG: '/nonexistent/loopwatch.yaml', LOOPWATCH_REGISTER: 'magic', LOOPWATCH_LOG: 'loud', LOOPWATCH_TRACE_IDLE_MS: '-5' });
    expect(s.register).toBe('sdk');
    expect(s.log).toBe('warn');
    expect(s.problems).toHaveLength(4);
    expect(s.problems.join('\n')).toMatch(/LOOPWATCH_CONFIG: .*no such file.*; the file is ignored/);
    expect(settingsFromEnv({ LOOPWATCH_DISABLED: '1', LOOPWATCH_REGISTER: 'attach' }).register).toBe('off');
  });

  it('LOOPWATCH_THRESHOLDS names the part that is wrong: the value of a level, or the rule', () => {
    const s = settingsFromEnv({ LOOPWATCH_THRESHOLDS: 'repeat=abc, cycle=3:x, bogus=1:2, noProgress, errorClass=1:2:3, unknownTool=0:2, changingOutput=30:60' });
    expect(s.problems).toEqual([
      "LOOPWATCH_THRESHOLDS: 'repeat=abc' has warning level 'abc', which is not a whole number of at least 1 (or '-' for off, empty to keep the default); ignored",
      "LOOPWATCH_THRESHOLDS: 'cycle=3:x' has critical level 'x', which is not a whole number of at least 1 (or '-' for off, empty to keep the default); ignored",
      "LOOPWATCH_THRESHOLDS: 'bogus=1:2' names no rule: 'bogus' is not one of backToBack, repeat, recheck, changingOutput, noProgress, nothingNew, cycle, resentBatch, repeatedFailure, failingRecheck, changingFailure, errorClass, unknownTool; ignored",
      "LOOPWATCH_THRESHOLDS: 'noProgress' is not RULE=WARNING:CRITICAL (e.g. repeat=4:8); ignored",
      "LOOPWATCH_THRESHOLDS: 'errorClass=1:2:3' has 3 levels; give WARNING:CRITICAL; ignored",
      "LOOPWATCH_THRESHOLDS: 'unknownTool=0:2' has warning level '0', which is not a whole number of at least 1 (or '-' for off, empty to keep the default); ignored",
    ]);
    // the good item still applies
    expect(s.options.thresholds).toEqual({ changingOutput: { warning: 30, critical: 60 } });
    expect(settingsFromEnv({ LOOPWATCH_THRESHOLDS: 'repeat = 4 / 8, cycle=-:' }).options.thresholds).toEqual({ repeat: { warning: 4, critical: 8 }, cycle: { warning: null } });
  });
});
