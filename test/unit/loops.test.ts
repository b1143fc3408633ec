import { describe, expect, it } from 'vitest';
import { runAgent, times, type ScriptItem } from '../support/agent-run.js';

/** Every loop family from DESIGN.md "What good detection means": caught early, stopped soon after. */
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
