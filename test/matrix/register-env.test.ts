import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { settingsFromEnv } from '../../src/register/env.js';
import { LoopDetectionSpanProcessor } from '../../src/index.js';

describe('LOOPWATCH_* variables of the zero-code start', () => {
  it('defaults: start NodeSDK, warn on stderr, enforce', () => {
    const s = settingsFromEnv({});
    expect(s).toMatchObject({ register: 'sdk', log: 'warn', attachTimeoutMs: 30_000, problems: [] });
    expect(new LoopDetectionSpanProcessor(s.options).engine.config.mode).toBe('enforce');
  });

  it('a config file (YAML) first, the single variables on top', () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-env-'));
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
});
