/**
 * The rule registry is the one place a loop rule is declared: the configuration keys, defaults,
 * the rules a tool runs, its policy's lowest level and the sentences about a rule all come from it.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLLER_THRESHOLDS, DEFAULT_THRESHOLDS, DEFAULT_WAIT_THRESHOLDS, RULE_KEYS, validateConfig } from '../../src/detector/config/index.js';
import { LoopEngine } from '../../src/detector/engine.js';
import { CALL_RULES, RULES } from '../../src/detector/rules.js';

describe('rule registry', () => {
  it('names every rule and its configuration key once', () => {
    expect(new Set(RULES.map((r) => r.name)).size).toBe(RULES.length);
    expect(new Set(RULE_KEYS).size).toBe(RULES.length);
    expect(Object.keys(DEFAULT_THRESHOLDS)).toEqual(RULE_KEYS);
    expect(Object.keys(DEFAULT_POLLER_THRESHOLDS)).toEqual(RULES.filter((r) => r.poller).map((r) => r.thresholdKey));
    expect(Object.keys(DEFAULT_WAIT_THRESHOLDS)).toEqual(['repeat']);
  });

  it('is what the configuration accepts, and what it lists when a key is unknown', () => {
    for (const key of RULE_KEYS) expect(validateConfig({ thresholds: { [key]: { warning: 2, critical: 3 } } }), key).toEqual([]);
    const [issue] = validateConfig({ thresholds: { loops: { warning: 2 } } });
    expect(issue?.path).toEqual(['thresholds', 'loops']);
    for (const key of RULE_KEYS) expect(issue?.message).toContain(key);
  });

  it('decides which rules a tool runs by its role', () => {
    const engine = new LoopEngine({ tools: { fetch_page: {}, sleep: {}, gdb_next: { role: 'exempt' } } });
    const names = (tool: string): string[] => engine.policies.get(tool).callRules.map((a) => a.rule.name);
    expect(names('fetch_page')).toEqual(CALL_RULES.map((r) => r.name));
    expect(names('fetch_page')).not.toContain('cycle');
    expect(names('sleep')).toEqual(['identical_calls']);
    expect(names('gdb_next')).toEqual([]);
  });

  it("gives a tool's policy the lowest level of any per-call rule", () => {
    expect(new LoopEngine().policies.get('search').minCallThreshold).toBe(2); // unknownTool's warning
    for (const rule of CALL_RULES) {
      const engine = new LoopEngine({ thresholds: { [rule.thresholdKey]: { warning: 1 } } });
      expect(engine.policies.get('search').minCallThreshold, rule.name).toBe(1);
    }
    // the cycle rule is measured on steps, not on a tool's calls
    expect(new LoopEngine({ thresholds: { cycle: { warning: 1, critical: 1 } } }).policies.get('search').minCallThreshold).toBe(2);
  });

  it('has sentences for every rule that name the tool and the count, never content', () => {
    for (const rule of RULES) {
      const message = rule.message({ toolName: 'search', count: 4, evidence: 'arguments+result', cycleTools: ['search', 'read'] });
      const summary = rule.summary({ toolName: 'search', before: 3, sameResultKnown: true, cycleTools: ['search', 'read'] });
      expect(message, rule.name).toMatch(/'search'/);
      expect(message, rule.name).toMatch(/4/);
      expect(summary, rule.name).toMatch(/'search'/);
      expect(rule.advice.length, rule.name).toBeGreaterThan(10);
    }
  });
});
