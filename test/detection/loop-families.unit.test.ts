import { describe, expect, it } from 'vitest';
import { ToolLoopError } from '../../src/errors.js';
import { runAgent, times, type ScriptItem } from '../support/agent-run.js';
import { runGuarded } from '../guard/support/guard-run.js';

// The loop families loopwatch must catch (docs/how-it-decides.md), as the engine judges them
// once each call ran, then as the guard judges them before each call runs.
/** Every loop family docs/how-it-decides.md names: caught early, stopped soon after. */
describe('loop families', () => {
  it('identical calls with the same outcome: warned at the 3rd call, stopped at the 5th', () => {
    const run = runAgent(times(8, { tool: 'search', args: { q: 'weather paris' }, result: { hits: ['Paris: 14C, rain'] } }));
    expect(run.first('warning')).toBe(3);
    expect(run.first('critical')).toBe(5);
    const critical = run.detections.find((d) => d.level === 'critical');
    expect(critical).toMatchObject({ kind: 'repeat', rule: 'identical_calls', toolName: 'search', count: 5, evidence: 'arguments+result' });
    expect(critical?.fingerprint).toMatch(/^[0-9a-f]{14}$/);
    // one warning and one critical: de-duplicated per signature and level
    expect(run.detections).toHaveLength(2);
  });

  it('repeats hidden by key order and whitespace in JSON-string arguments', () => {
    const args = ['{"q":"x","limit":5}', '{ "limit": 5, "q": "x" }', '{\n  "q": "x",\n  "limit": 5\n}', '{"limit":5,"q":"x"}', '{"q":"x", "limit":5}'];
    const run = runAgent(args.map((a) => ({ tool: 'search', args: a, result: '{"hits":[]}' })));
    expect(run.first('warning')).toBe(3);
    expect(run.first('critical')).toBe(5);
  });

  it('structured (SDK 3.x) and JSON-string (SDK 2.x) forms of one call are the same call', () => {
    const run = runAgent([
      { tool: 'search', args: { q: 'x', opts: { deep: true } }, result: { n: 1 } },
      { tool: 'search', args: '{"opts":{"deep":true},"q":"x"}', result: '{"n":1}' },
      { tool: 'search', args: { opts: { deep: true }, q: 'x' }, result: '{"n": 1}' },
    ]);
    expect(run.first('warning')).toBe(3);
  });

  it('repeats hidden by volatile values in arguments: request ids and "now" timestamps', () => {
    const run = runAgent(
      times(5, (i) => ({
        tool: 'lookup',
        args: { sku: 'A-1', request_id: `req-${i}-${Math.random()}`, timestamp: new Date(Date.parse('2026-11-21T10:00:00Z') + i * 2000).toISOString() },
        result: { stock: 0 },
      })),
    );
    expect(run.first('warning')).toBe(3);
    expect(run.first('critical')).toBe(5);
  });

  it('repeats hidden by volatile values in results: uuids, timestamps, pids, durations', () => {
    const run = runAgent(
      times(5, (i) => ({
        tool: 'run_command',
        args: { cmd: 'npm test' },
        result: {
          id: crypto.randomUUID(),
          output: `[${10 + i}:00:0${i}] Error: cannot find module 'x' (pid ${4000 + i}) after ${120 + i * 7}ms`,
          finishedAt: `2026-11-21T10:0${i}:00Z`,
          trace: `run ${crypto.randomUUID()}`,
        },
      })),
    );
    expect(run.first('warning')).toBe(3);
    expect(run.first('critical')).toBe(5);
  });

  it('the same outcome from paraphrased arguments: no_progress warned at 5, never stopped (weaker evidence than a repeat)', () => {
    // rewordings keep the request's words (a different question would not)
    const queries = ['weather in paris today', 'paris weather today', 'weather today in paris', 'today paris weather', 'the weather in paris today', 'paris today weather'];
    const run = runAgent(queries.map((q) => ({ tool: 'search', args: { q }, result: 'No results found for this query.' })));
    expect(run.first('warning')).toBe(5);
    expect(run.first('critical')).toBeUndefined();
    expect(run.detections[0]).toMatchObject({ kind: 'no_progress', rule: 'same_result' });
  });

  it('a cycle of period 2 across tools: warned after 3 laps, stopped after 4', () => {
    const lap: ScriptItem[] = [
      { tool: 'read_file', args: { path: 'a.ts' }, result: 'export const a = 1;' },
      { tool: 'edit_file', args: { path: 'a.ts', old: 'b', new: 'c' }, error: { message: "old_string 'b' not found" } },
    ];
    const run = runAgent([...lap, ...lap, ...lap, ...lap, ...lap]);
    expect(run.first('warning')).toBe(6);
    expect(run.first('critical')).toBe(8);
    const d = run.detections.find((x) => x.kind === 'cycle');
    expect(d).toMatchObject({ kind: 'cycle', cycleLength: 2, count: 3, cycleTools: ['read_file', 'edit_file'] });
  });

  it('a cycle of period 2 across arguments of one tool', () => {
    const lap: ScriptItem[] = [
      { tool: 'open_page', args: { url: '/a' }, result: 'Page A: see /b' },
      { tool: 'open_page', args: { url: '/b' }, result: 'Page B: see /a' },
    ];
    const run = runAgent(times(4, lap).flat());
    expect(run.detections[0]).toMatchObject({ kind: 'cycle', level: 'warning', callIndex: 6 });
    expect(run.first('critical')).toBe(8);
  });

  it('a cycle of period 3 (read → failing edit → failing test)', () => {
    const lap: ScriptItem[] = [
      { tool: 'read_file', args: { path: 'x.py' }, result: 'def f(): return 1' },
      { tool: 'apply_patch', args: { patch: '--- x.py\n+ return 2' }, error: { type: 'PatchError', message: 'hunk failed' } },
      { tool: 'run_tests', args: {}, result: 'FAILED test_f: expected 2, got 1' },
    ];
    const run = runAgent(times(4, lap).flat());
    expect(run.detections.find((d) => d.kind === 'cycle')).toMatchObject({ level: 'warning', callIndex: 9, cycleLength: 3 });
    expect(run.first('critical')).toBe(12);
  });

  it('a cycle whose steps are parallel batches', () => {
    const lap: ScriptItem[] = [
      [
        { tool: 'get_weather', args: { city: 'Paris' }, result: 'rain' },
        { tool: 'get_weather', args: { city: 'Rome' }, result: 'sun' },
      ],
      { tool: 'summarize', args: { text: 'Paris rain, Rome sun' }, result: 'Mixed weather.' },
    ];
    const run = runAgent(times(4, lap).flat());
    const warning = run.detections.find((d) => d.kind === 'cycle' && d.level === 'warning');
    expect(warning).toMatchObject({ cycleLength: 2, count: 3 });
    expect(warning?.callIndex).toBe(9); // 3 laps of 3 calls
    expect(run.first('critical')).toBe(12);
  });

  it('the same call failing again and again, even with varying error text', () => {
    const run = runAgent(
      times(6, (i) => ({ tool: 'fetch_url', args: { url: 'https://api.example.com/x' }, error: { message: `429 Too Many Requests, retry after ${i + 1}s (request ${crypto.randomUUID()})` } })),
    );
    expect(run.first('warning')).toBe(3);
    expect(run.first('critical')).toBe(5);
    expect(run.detections[0]).toMatchObject({ kind: 'error_pattern', rule: 'repeated_failure' });
  });

  it('the same call failing with completely different messages each time', () => {
    const messages = ['connection reset', 'socket hang up', 'ETIMEDOUT', 'upstream unavailable', 'bad gateway'];
    const run = runAgent(messages.map((m) => ({ tool: 'deploy', args: { env: 'prod' }, error: { message: m } })));
    expect(run.first('warning')).toBe(3);
    expect(run.first('critical')).toBe(5);
  });

  it('one tool failing with the same error class over changing arguments', () => {
    const run = runAgent(
      times(8, (i) => ({
        tool: 'str_replace',
        args: { path: 'src/app.ts', old: `const x${i} =`, new: 'const y =' },
        error: { type: 'NotUniqueError', message: `old_string matched ${i + 2} places in src/app.ts` },
      })),
    );
    expect(run.first('warning')).toBe(4);
    expect(run.first('critical')).toBe(8);
    expect(run.detections[0]).toMatchObject({ kind: 'error_pattern', rule: 'error_class' });
    expect(run.detections[0]?.message).toContain('NotUniqueError');
  });

  it('calls to a tool that does not exist', () => {
    const run = runAgent(
      times(3, (i) => ({ tool: 'web_browse', args: { url: `https://x/${i}` }, error: { type: 'AI_NoSuchToolError', message: "Model tried to call unavailable tool 'web_browse'." } })),
    );
    expect(run.first('warning')).toBe(2);
    expect(run.first('critical')).toBe(3);
    expect(run.detections[0]).toMatchObject({ kind: 'unknown_tool' });
  });

  it('calls to a tool outside the configured knownTools', () => {
    const run = runAgent(times(3, { tool: 'delete_everything', args: {}, result: 'ok' }), { knownTools: ['search', 'read_file'] });
    expect(run.detections.some((d) => d.kind === 'unknown_tool' && d.level === 'critical')).toBe(true);
  });

  it('a loop with one unrelated call between its repetitions', () => {
    const a: ScriptItem = { tool: 'search', args: { q: 'refund policy' }, result: 'Refunds within 30 days.' };
    const run = runAgent([a, a, { tool: 'get_time', args: {}, result: 'Friday' }, a, a, a]);
    expect(run.first('warning')).toBe(4);
    expect(run.first('critical')).toBe(6);
  });

  it('a loop interleaved with a repeated helper call whose output changes', () => {
    const a: ScriptItem = { tool: 'check_inbox', args: { folder: 'support' }, result: '0 new messages' };
    const script = [a, ...times(5, (i) => [{ tool: 'log_note', args: { text: 'waiting' }, result: `noted #${i}` }, a]).flat()];
    const run = runAgent(script);
    expect(run.first('warning')).toBe(5);
  });

  it('identical calls whose output changes forever (the high cap)', () => {
    const run = runAgent(times(60, (i) => ({ tool: 'bash', args: { cmd: 'date +%S' }, result: String((i * 7) % 60) })));
    expect(run.first('warning')).toBe(25);
    expect(run.first('critical')).toBe(40);
    expect(run.detections[0]).toMatchObject({ kind: 'repeat', rule: 'changing_output' });
  });

  it('a busy-waiting poller is stopped at the poller threshold', () => {
    const run = runAgent(times(20, { tool: 'process_log', args: { id: 'job-7' }, result: 'building...', idleMs: 4_700 }));
    expect(run.first('warning')).toBe(8);
    expect(run.first('critical')).toBe(15);
  });
});

const search: ScriptItem = { tool: 'search', args: { q: 'weather paris' }, result: { hits: ['Paris: 14C, rain'] } };

/**
 * The same loop families, replayed by a model that ignores hints. Where the outcome of the
 * next call is predictable (the same call again), the guard acts before the call the engine would
 * flag after it; loops that only show in an outcome are stopped once it is known.
 */
describe('the guard stops loops before they run (graduated)', () => {
  it('identical calls: hinted at the 3rd attempt, stopped at the 4th, 2 executions', async () => {
    const run = await runGuarded(times(8, search));
    expect(runAgent(times(8, search)).first('warning')).toBe(3); // the engine's own verdict, after the fact
    expect(run.fates).toEqual(['ran', 'ran', 'hinted', 'blocked']);
    expect(run.executed).toBe(2);
    expect(run.error).toBeInstanceOf(ToolLoopError);
    expect(run.error).toMatchObject({ name: 'ToolLoopError', toolName: 'search', kind: 'repeat', count: 4 });
    expect(run.error?.message).toContain("'search' already ran twice with these exact arguments and returned the same result each time");
    expect(run.events.map((e) => `${e.action}:${e.strike}:${e.detection.level}`)).toEqual(['hinted:1:warning', 'blocked:2:critical']);
  });

  it('repeats hidden by key order, whitespace and volatile values are the same call', async () => {
    const args = ['{"q":"x","limit":5}', '{ "limit": 5, "q": "x" }', '{"q":"x", "limit":5, "request_id":"r-2"}'];
    const run = await runGuarded(args.map((a, i) => ({ tool: 'search', args: a, result: { hits: [], took_ms: 10 + i } })));
    expect(run.fates).toEqual(['ran', 'ran', 'hinted']);
  });

  it('a loop with one unrelated call between its repetitions', async () => {
    const a: ScriptItem = { tool: 'search', args: { q: 'refund policy' }, result: 'Refunds within 30 days.' };
    const run = await runGuarded([a, a, { tool: 'get_time', args: {}, result: 'Friday' }, a, a, a]);
    expect(run.firstIntervention()).toBe(4);
    expect(run.fates).toEqual(['ran', 'ran', 'ran', 'hinted', 'blocked']);
  });

  it('a cycle of period 2 across tools: hinted where the engine warns (call 6)', async () => {
    const lap: ScriptItem[] = [
      { tool: 'read_file', args: { path: 'a.ts' }, result: 'export const a = 1;' },
      { tool: 'edit_file', args: { path: 'a.ts', old: 'b', new: 'c' }, error: { message: "old_string 'b' not found" } },
    ];
    const run = await runGuarded(times(5, lap).flat());
    expect(run.firstIntervention()).toBe(6);
    expect(run.events[0]?.detection).toMatchObject({ kind: 'cycle', cycleLength: 2, cycleTools: ['read_file', 'edit_file'] });
    expect(run.error).toBeInstanceOf(ToolLoopError);
    expect(run.fates.length).toBeLessThanOrEqual(8); // stopped no later than the engine's critical
    expect(run.executed).toBe(5);
  });

  it('a cycle of period 3 (read → failing patch → failing test)', async () => {
    const lap: ScriptItem[] = [
      { tool: 'read_file', args: { path: 'x.py' }, result: 'def f(): return 1' },
      { tool: 'apply_patch', args: { patch: '--- x.py\n+ return 2' }, error: { type: 'PatchError', message: 'hunk failed' } },
      { tool: 'run_tests', args: {}, result: 'FAILED test_f: expected 2, got 1' },
    ];
    const run = await runGuarded(times(4, lap).flat());
    expect(run.firstIntervention()).toBeLessThanOrEqual(9);
    expect(run.error).toBeInstanceOf(ToolLoopError);
  });

  it('a cycle whose steps are parallel batches', async () => {
    const lap: ScriptItem[] = [
      [
        { tool: 'get_weather', args: { city: 'Paris' }, result: 'rain' },
        { tool: 'get_weather', args: { city: 'Rome' }, result: 'sun' },
      ],
      { tool: 'summarize', args: { text: 'Paris rain, Rome sun' }, result: 'Mixed weather.' },
    ];
    const run = await runGuarded(times(4, lap).flat());
    expect(run.firstIntervention()).toBe(7); // the 3rd lap's parallel repeats, before they run
    expect(run.fates.slice(6, 8)).toEqual(['hinted', 'hinted']); // one step, one strike: both hinted, neither blocked
    expect(run.error).toBeInstanceOf(ToolLoopError);
  });

  it('the same call failing with a permanent error: hinted at the 3rd attempt', async () => {
    const run = await runGuarded(times(6, { tool: 'deploy', args: { env: 'prod' }, error: { type: 'PermissionDenied', message: 'role lacks deploy rights' } }));
    expect(run.fates).toEqual(['ran', 'ran', 'hinted', 'blocked']);
    expect(run.error).toMatchObject({ kind: 'error_pattern', toolName: 'deploy' });
  });

  it('the same call failing transiently: retried up to the critical threshold, then stopped before the 5th', async () => {
    const run = await runGuarded(
      times(8, (i) => ({ tool: 'fetch_url', args: { url: 'https://api.example.com/x' }, error: { message: `429 Too Many Requests, retry after ${i + 1}s` } })),
    );
    expect(run.fates).toEqual(['ran', 'ran', 'ran', 'ran', 'blocked']);
    expect(run.error).toMatchObject({ kind: 'error_pattern', count: 5 });
  });

  it('different arguments, the same answer: judged once it is known, a warning (rewording is weaker evidence than a repeat)', async () => {
    const queries = ['weather in paris today', 'paris weather today', 'weather today in paris', 'today paris weather', 'the weather in paris today', 'paris today weather', 'weather for paris today'];
    const run = await runGuarded(queries.map((q) => ({ tool: 'search', args: { q }, result: 'No results found for this query.' })));
    expect(run.fates).toEqual(['ran', 'ran', 'ran', 'ran', 'ran', 'ran', 'ran']);
    expect(run.events.map((e) => `${e.phase}:${e.action}:${e.detection.rule}:${e.detection.level}`)).toEqual(['after:allowed:same_result:warning']);
    expect(run.guard.signal.aborted).toBe(false);
  });

  it('one tool failing with the same error class over changing arguments', async () => {
    const run = await runGuarded(
      times(9, (i) => ({ tool: 'str_replace', args: { path: 'src/app.ts', old: `const x${i} =` }, error: { type: 'NotUniqueError', message: `matched ${i + 2} places` } })),
    );
    expect(run.executed).toBe(8);
    expect(run.fates.at(-1)).toBe('blocked');
    expect(run.error).toMatchObject({ kind: 'error_pattern', toolName: 'str_replace' });
  });

  it('a tool that does not exist: hinted at the 2nd call, whatever the arguments', async () => {
    const run = await runGuarded(
      times(4, (i) => ({ tool: 'web_browse', args: { url: `https://x/${i}` }, error: { type: 'AI_NoSuchToolError', message: "Model tried to call unavailable tool 'web_browse'." } })),
    );
    expect(run.fates).toEqual(['ran', 'hinted', 'blocked']);
    expect(run.error).toMatchObject({ kind: 'unknown_tool' });
  });

  it('a tool outside knownTools', async () => {
    const run = await runGuarded(times(3, { tool: 'delete_everything', args: {}, result: 'ok' }), { knownTools: ['search'] });
    expect(run.fates).toEqual(['ran', 'hinted', 'blocked']);
  });

  it('identical calls whose output changes forever: hinted at the 25th, where the engine warns', async () => {
    const run = await runGuarded(times(60, (i) => ({ tool: 'bash', args: { cmd: 'date +%S' }, result: String((i * 7) % 60) })));
    expect(run.firstIntervention()).toBe(25);
    expect(run.events[0]?.detection.rule).toBe('changing_output');
    expect(run.executed).toBe(24);
  });

  it('a busy-waiting poller is stopped when the engine confirms it (15 polls), like the processor', async () => {
    const run = await runGuarded(times(20, { tool: 'process_log', args: { id: 'job-7' }, result: 'building...', idleMs: 4_700 }));
    expect(run.executed).toBe(15);
    expect(run.fates.slice(14)).toEqual(['ran', 'blocked']);
  });
});

describe('actions', () => {
  it('hint mode: hints up to maxHints on one loop, then stops (a hint is backed by a real stop)', async () => {
    const run = await runGuarded(times(10, search), { action: 'hint', maxHints: 3 });
    expect(run.fates).toEqual(['ran', 'ran', 'hinted', 'hinted', 'hinted', 'blocked']);
    expect(run.error?.count).toBe(6);
  });

  it('abort mode: no hint; the warning is reported and the call runs; stopped before the critical call', async () => {
    const run = await runGuarded(times(10, search), { action: 'abort' });
    expect(run.fates).toEqual(['ran', 'ran', 'ran', 'ran', 'blocked']);
    expect(run.error).toMatchObject({ toolName: 'search', count: 5, kind: 'repeat' });
    expect(run.events.map((e) => `${e.phase}:${e.action}:${e.detection.level}`)).toEqual([
      'before:allowed:warning',
      'before:blocked:critical',
    ]);
  });

  it('observe mode: every call runs; the events say what enforcement would have done', async () => {
    const run = await runGuarded(times(6, search), { mode: 'observe' });
    expect(run.fates.every((f) => f === 'ran')).toBe(true);
    // what enforcement would have done: hint at the 3rd call, stop at the 4th (once per level and verdict)
    expect(run.events.map((e) => `${e.phase}:${e.action}:${e.wouldBe ?? '-'}:${e.detection.level}`)).toEqual([
      'before:allowed:hinted:warning',
      'before:allowed:blocked:warning',
      'before:allowed:blocked:critical',
    ]);
    expect(run.guard.signal.aborted).toBe(false);
  });

  it('per-tool thresholds from the shared configuration', async () => {
    const run = await runGuarded(times(4, search), { tools: { search: { thresholds: { repeat: { warning: 2, critical: 4 } } } } });
    expect(run.fates).toEqual(['ran', 'hinted', 'blocked']);
  });
});
