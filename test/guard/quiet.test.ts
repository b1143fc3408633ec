import { describe, expect, it } from 'vitest';
import { times, type ScriptItem } from '../support/agent-run.js';
import { runGuarded } from './support/guard-run.js';

/**
 * Honest work from DESIGN.md "What good detection means", run through the guard before each call:
 * the guard judges calls whose outcome it does not know yet, and must still leave all of it alone.
 */
async function expectUntouched(script: readonly ScriptItem[]): Promise<void> {
  const run = await runGuarded(script);
  // 'allowed' events are reports of a call that ran (a retry after a failure): not interventions.
  const interventions = run.events.filter((e) => e.action !== 'allowed');
  expect(interventions.map((e) => `${e.action}:${e.detection.rule}: ${e.detection.message}`)).toEqual([]);
  expect(run.fates.every((f) => f === 'ran')).toBe(true);
  expect(run.executed).toBe(script.flat().length);
}

describe('the guard leaves honest work alone', () => {
  it('polling whose status progresses', async () => {
    await expectUntouched(times(30, (i) => ({ tool: 'get_job_status', args: { job: 'build-17' }, result: { state: 'running', progress: `${Math.min(100, i * 4)}%` } })));
  });

  it('polling a slowly moving status (each value seen a few times in a row)', async () => {
    const states = ['queued', 'queued', 'queued', 'building', 'building', 'building', 'testing', 'testing', 'testing', 'deploying', 'deploying', 'done'];
    await expectUntouched(states.map((s) => ({ tool: 'deployment_status', args: { id: 'd-1' }, result: { state: s } })));
  });

  it('polling an ordinary (non-poller) tool that progresses', async () => {
    await expectUntouched(times(12, (i) => ({ tool: 'fetch_order', args: { id: 'o-1' }, result: { shipped: i > 10, updates: i } })));
  });

  it('a few polls spaced out in time, identical answers', async () => {
    await expectUntouched(times(4, { tool: 'get_deployment', args: { id: 'prod' }, result: 'rolling out 2/5 replicas', idleMs: 5 * 60_000 }));
  });

  it('waits and sleeps between polls', async () => {
    await expectUntouched(
      times(8, (i): ScriptItem[] => [
        { tool: 'sleep', args: { seconds: 10 }, result: 'slept 10s', durationMs: 10_000 },
        { tool: 'check_build', args: { id: 7 }, result: i < 7 ? 'running' : 'passed' },
      ]).flat(),
    );
  });

  it('repeated sleeps', async () => {
    await expectUntouched(times(12, { tool: 'wait', args: { ms: 2000 }, result: 'ok', durationMs: 2000 }));
  });

  it('pagination and offsets', async () => {
    await expectUntouched(times(20, (i) => ({ tool: 'list_issues', args: { repo: 'x/y', page: i + 1 }, result: { issues: [`#${i * 50 + 1}`], page: i + 1 } })));
  });

  it('cursor pagination with opaque tokens', async () => {
    await expectUntouched(times(15, (i) => ({ tool: 'list_files', args: { cursor: i === 0 ? null : `c_${(i * 7919).toString(36)}xq${i}` }, result: { files: [`f${i}a.ts`], next: `c_${((i + 1) * 7919).toString(36)}xq${i + 1}` } })));
  });

  it('batch edits over many files, each returning a generic "ok"', async () => {
    await expectUntouched(times(25, (i) => ({ tool: 'edit_file', args: { path: `src/module${i}.ts`, old: 'var ', new: 'let ' }, result: 'OK' })));
  });

  it('batch edits over many spots of one file', async () => {
    await expectUntouched(times(15, (i) => ({ tool: 'str_replace', args: { path: 'src/big.ts', old: `foo${i}(`, new: `bar${i}(` }, result: { success: true } })));
  });

  it('fix-and-verify cycles whose test output moves', async () => {
    const outputs = ['3 failed, 7 passed', '2 failed, 8 passed', '2 failed, 8 passed', '1 failed, 9 passed', '10 passed'];
    await expectUntouched(
      outputs.flatMap((out, i): ScriptItem[] => [
        { tool: 'edit_file', args: { path: 'src/a.ts', old: `bug${i}`, new: `fix${i}` }, result: 'ok' },
        { tool: 'run_tests', args: { cmd: 'npm test' }, result: out },
      ]),
    );
  });

  it('fix-and-verify where different fixes leave the same failure', async () => {
    await expectUntouched(
      times(4, (i): ScriptItem[] => [
        { tool: 'edit_file', args: { path: 'src/a.ts', old: 'x', new: `attempt ${i}` }, result: 'ok' },
        { tool: 'run_tests', args: { cmd: 'npm test' }, result: 'FAIL test/a.test.ts: expected 2, got 1' },
      ]).flat(),
    );
  });

  it('reading a growing stream', async () => {
    let log = '';
    await expectUntouched(
      times(40, (i) => {
        log += `line ${i}: compiling module ${i}\n`;
        return { tool: 'read_output', args: { session: 's1' }, result: log };
      }),
    );
  });

  it('debugger stepping', async () => {
    await expectUntouched(times(20, (i) => ({ tool: 'gdb', args: { command: 'next' }, result: `main.c:${40 + i}: x = x + ${i};` })));
  });

  it('scrolling through a long page', async () => {
    await expectUntouched(times(18, (i) => ({ tool: 'browser_scroll', args: { direction: 'down' }, result: `<section>Paragraph ${i * 3}..${i * 3 + 2}</section>` })));
  });

  it('two-pass batches, sequential and parallel', async () => {
    const pass: ScriptItem[] = ['a.ts', 'b.ts', 'c.ts'].map((p) => ({ tool: 'read_file', args: { path: p }, result: `contents of ${p}` }));
    await expectUntouched([...pass, { tool: 'plan', args: { note: 'now edit' }, result: 'ok' }, ...pass]);
    const batch: ScriptItem = ['a.ts', 'b.ts', 'c.ts'].map((p) => ({ tool: 'read_file', args: { path: p }, result: `contents of ${p}` }));
    await expectUntouched([batch, batch]);
  });

  it('a transient retry that then succeeds', async () => {
    await expectUntouched([
      { tool: 'fetch_url', args: { url: 'https://x' }, error: { message: '503 Service Unavailable' } },
      { tool: 'fetch_url', args: { url: 'https://x' }, error: { message: '503 Service Unavailable' } },
      { tool: 'fetch_url', args: { url: 'https://x' }, result: '<html>ok page</html>' },
      { tool: 'fetch_url', args: { url: 'https://y' }, error: { message: 'ECONNRESET' } },
      { tool: 'fetch_url', args: { url: 'https://y' }, result: '<html>page y</html>' },
    ]);
  });

  it('a transient retry that succeeds on the third attempt (the guard lets the retry run)', async () => {
    const fail = { tool: 'fetch_url', args: { url: 'https://x' }, error: { message: '503 Service Unavailable' } };
    const run = await runGuarded([fail, fail, { tool: 'fetch_url', args: { url: 'https://x' }, result: '<html>ok</html>' }]);
    expect(run.fates).toEqual(['ran', 'ran', 'ran']);
    expect(run.events.map((e) => `${e.phase}:${e.action}`)).toEqual(['before:allowed']);
  });

  it('re-reading something far apart', async () => {
    const readConfig: ScriptItem = { tool: 'read_file', args: { path: 'config.yaml' }, result: 'port: 8080' };
    const other = (k: number): ScriptItem[] => times(4, (i) => ({ tool: 'grep', args: { pattern: `p${k}-${i}` }, result: `${k * 10 + i} matches` }));
    await expectUntouched([readConfig, ...other(1), readConfig, ...other(2), readConfig, ...other(3), readConfig]);
  });

  it('fan-out in one batch, and duplicates inside one batch', async () => {
    const cities = ['Paris', 'Rome', 'Oslo', 'Lima', 'Kyiv', 'Pune', 'Baku', 'Doha'];
    await expectUntouched([cities.map((c) => ({ tool: 'search', args: { q: `hotels in ${c}` }, result: 'No results found.' }))]);
    const dup: ScriptItem = { tool: 'read_file', args: { path: 'a.ts' }, result: 'A' };
    await expectUntouched([[dup, dup, dup, dup, dup], { tool: 'write_file', args: { path: 'b.ts' }, result: 'ok' }]);
  });

  it('a date scan with the same negative answer a few times', async () => {
    await expectUntouched(times(3, (i) => ({ tool: 'check_availability', args: { date: `2026-12-0${i + 1}` }, result: 'No slots available.' })));
  });

  it('different jobs polled round-robin while they run', async () => {
    await expectUntouched(times(3, () => ['a', 'b', 'c'].map((j) => ({ tool: 'job_status', args: { job: j }, result: 'running', idleMs: 45_000 }))).flat());
  });

  it('an exempt tool, however often it repeats', async () => {
    const run = await runGuarded(times(12, { tool: 'heartbeat', args: {}, result: 'alive' }), { tools: { heartbeat: { role: 'exempt' } } });
    expect(run.fates.every((f) => f === 'ran')).toBe(true);
    expect(run.events).toEqual([]);
  });
});

describe('pollers are judged after they run', () => {
  it('a poll that finishes on its 15th check is never refused', async () => {
    const run = await runGuarded([
      ...times(14, { tool: 'get_job_status', args: { job: 'j' }, result: { state: 'running' } }),
      { tool: 'get_job_status', args: { job: 'j' }, result: { state: 'done' } },
    ]);
    expect(run.fates.every((f) => f === 'ran')).toBe(true);
    expect(run.error).toBeUndefined();
    // the engine's warning at the 8th identical poll is reported after it ran, nothing more
    expect(run.events.map((e) => `${e.phase}:${e.action}:${e.detection.level}`)).toEqual(['after:allowed:warning']);
  });
});
