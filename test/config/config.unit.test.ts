import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig, validateConfig } from '../../src/detector/config/index.js';
import { LoopEngine } from '../../src/detector/engine.js';
import { runAgent, times } from '../support/agent-run.js';

describe('configuration', () => {
  it('validates every key and reports its path', () => {
    const issues = validateConfig({
      mode: 'loud',
      thresholds: { repeat: { warning: 0, critical: 'x' }, cycle: { warning: 5, critical: 2 } },
      spacing: { weight: 2 },
      tools: { search: { role: 'oracle', extra: 1 } },
      roles: { poller: { match: ['(unclosed'] } },
      historySize: 3,
      surprise: true,
    });
    expect(issues.map((i) => i.path.join('.'))).toEqual(
      expect.arrayContaining([
        'mode',
        'thresholds.repeat.warning',
        'thresholds.repeat.critical',
        'thresholds.cycle',
        'spacing.weight',
        'tools.search.role',
        'tools.search.extra',
        'roles.poller.match.0',
        'historySize',
        'surprise',
      ]),
    );
    expect(() => resolveConfig({ mode: 'loud' } as never)).toThrow(ConfigError);
    expect(() => new LoopEngine({ thresholds: { repeat: { warning: 9, critical: 2 } } })).toThrow(/thresholds\.repeat: warning \(9\) must not be above critical \(2\)/);
  });

  it('per-tool overrides, glob patterns and null (never) levels', () => {
    const loop = times(8, { tool: 'mcp__github__search', args: { q: 'x' }, result: 'same' });
    expect(runAgent(loop, { tools: { 'mcp__github__*': { thresholds: { repeat: { warning: 6, critical: 7 } } } } }).first('warning')).toBe(6);
    expect(runAgent(loop, { tools: { mcp__github__search: { thresholds: { repeat: { critical: null } } } } }).first('critical')).toBeUndefined();
    expect(runAgent(loop, { tools: { mcp__github__search: { role: 'exempt' } } }).detections).toEqual([]);
    // exact names win over globs
    expect(
      runAgent(loop, { tools: { 'mcp__*': { role: 'exempt' }, mcp__github__search: { role: 'normal' } } }).first('warning'),
    ).toBe(3);
  });

  it('roles: a tool named like a poller gets poller thresholds, configurable patterns', () => {
    const polls = (tool: string) => times(16, { tool, args: { id: 1 }, result: 'queued' });
    expect(runAgent(polls('get_job_status')).first('warning')).toBe(8);
    expect(runAgent(polls('getJobStatus')).first('warning')).toBe(8);
    expect(runAgent(polls('fetch_thing')).first('warning')).toBe(3);
    expect(runAgent(polls('fetch_thing'), { roles: { poller: { match: ['^fetch_'] } } }).first('warning')).toBe(8);
    expect(runAgent(polls('get_job_status'), { roles: { poller: { match: [] } } }).first('warning')).toBe(3);
  });

  it('volatile keys named by the user are ignored in arguments and results', () => {
    const loop = times(5, (i) => ({ tool: 'search', args: { q: 'x', session_token: `t${i}` }, result: { hits: 0, cursor_hint: `h${i}` } }));
    expect(runAgent(loop).detections).toEqual([]);
    expect(runAgent(loop, { volatileKeys: { arguments: ['session_token'], result: ['cursorHint'] } }).first('critical')).toBe(5);
    expect(runAgent(loop, { tools: { search: { volatileKeys: { arguments: ['sessionToken'], result: ['cursor_hint'] } } } }).first('critical')).toBe(5);
  });

  it('degrades to higher thresholds without captured content, and never stops on names alone', () => {
    const argsOnly = runAgent(times(12, { tool: 'search', args: { q: 'x' } }));
    // results are opt-in content in the gen_ai conventions: an uncaptured result still stops by the 6th identical call
    expect([argsOnly.first('warning'), argsOnly.first('critical')]).toEqual([4, 6]);
    expect(argsOnly.detections[0]?.evidence).toBe('arguments');
    expect(argsOnly.detections[0]?.message).toContain('results are not captured');
    const nameOnly = runAgent(times(25, { tool: 'search' }));
    expect([nameOnly.first('warning'), nameOnly.first('critical')]).toEqual([10, undefined]);
    expect(nameOnly.detections[0]?.message).toContain('rests on the tool name only');
    // name-only: another tool in between is other work for the repeat rule...
    const alternating = runAgent(times(12, () => [{ tool: 'edit' }, { tool: 'test' }]).flat());
    expect(alternating.detections.filter((d) => d.rule === 'identical_calls')).toEqual([]);
    // ...and an edit/test cycle on names alone is only a late warning (5 laps), never a stop
    expect(alternating.detections.map((d) => [d.rule, d.level, d.count, d.evidence])).toEqual([['cycle', 'warning', 5, 'name']]);
    expect(alternating.detections[0]?.message).toContain('rests on the tool name only');
  });

  it('observe mode marks detections and leaves levels unchanged', () => {
    const run = runAgent(times(5, { tool: 's', args: {}, result: 'r' }), { mode: 'observe' });
    expect(run.detections.map((d) => [d.level, d.mode])).toEqual([
      ['warning', 'observe'],
      ['critical', 'observe'],
    ]);
  });
});
