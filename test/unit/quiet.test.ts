import { describe, expect, it } from 'vitest';
import { LoopEngine } from '../../src/detector/engine.js';
import { runAgent, times, type ScriptItem } from '../support/agent-run.js';

function expectQuiet(script: readonly ScriptItem[]): void {
  const run = runAgent(script);
  expect(run.detections.map((d) => `${d.callIndex}:${d.rule}:${d.level}: ${d.message}`)).toEqual([]);
}

/** Honest work from DESIGN.md "What good detection means": none of it may be flagged. */
describe('quiet patterns', () => {
  it('polling whose status progresses', () => {
    expectQuiet(times(30, (i) => ({ tool: 'get_job_status', args: { job: 'build-17' }, result: { state: 'running', progress: `${Math.min(100, i * 4)}%` } })));
  });

  it('polling a slowly moving status (each value seen a few times in a row)', () => {
    const states = ['queued', 'queued', 'queued', 'building', 'building', 'building', 'testing', 'testing', 'testing', 'deploying', 'deploying', 'done'];
    expectQuiet(states.map((s) => ({ tool: 'deployment_status', args: { id: 'd-1' }, result: { state: s } })));
  });

  it('polling an ordinary (non-poller) tool that progresses', () => {
    expectQuiet(times(12, (i) => ({ tool: 'fetch_order', args: { id: 'o-1' }, result: { shipped: i > 10, updates: i } })));
  });

  it('a few polls spaced out in time, identical answers', () => {
    expectQuiet(times(4, { tool: 'get_deployment', args: { id: 'prod' }, result: 'rolling out 2/5 replicas', idleMs: 5 * 60_000 }));
  });

  it('waits and sleeps between polls', () => {
    expectQuiet(
      times(8, (i): ScriptItem[] => [
        { tool: 'sleep', args: { seconds: 10 }, result: 'slept 10s', durationMs: 10_000 },
        { tool: 'check_build', args: { id: 7 }, result: i < 7 ? 'running' : 'passed' },
      ]).flat(),
    );
  });

  it('repeated sleeps', () => {
    expectQuiet(times(12, { tool: 'wait', args: { ms: 2000 }, result: 'ok', durationMs: 2000 }));
  });

  it('pagination and offsets', () => {
    expectQuiet(times(20, (i) => ({ tool: 'list_issues', args: { repo: 'x/y', page: i + 1, per_page: 50 }, result: { issues: [`#${i * 50 + 1}`, `#${i * 50 + 2}`], page: i + 1 } })));
  });

  it('cursor pagination with opaque tokens', () => {
    expectQuiet(times(15, (i) => ({ tool: 'list_files', args: { cursor: i === 0 ? null : `c_${(i * 7919).toString(36)}xq${i}` }, result: { files: [`f${i}a.ts`, `f${i}b.ts`], next: `c_${((i + 1) * 7919).toString(36)}xq${i + 1}` } })));
  });

  it('batch edits over many files, each returning a generic "ok"', () => {
    expectQuiet(times(25, (i) => ({ tool: 'edit_file', args: { path: `src/module${i}.ts`, old: 'var ', new: 'let ' }, result: 'OK' })));
  });

  it('batch edits over many spots of one file', () => {
    expectQuiet(times(15, (i) => ({ tool: 'str_replace', args: { path: 'src/big.ts', old: `foo${i}(`, new: `bar${i}(` }, result: { success: true } })));
  });

  it('fix-and-verify cycles whose test output moves', () => {
    const outputs = ['3 failed, 7 passed', '2 failed, 8 passed', '2 failed, 8 passed', '1 failed, 9 passed', '10 passed'];
    expectQuiet(
      outputs.flatMap((out, i): ScriptItem[] => [
        { tool: 'edit_file', args: { path: 'src/a.ts', old: `bug${i}`, new: `fix${i}` }, result: 'ok' },
        { tool: 'run_tests', args: { cmd: 'npm test' }, result: out },
      ]),
    );
  });

  it('fix-and-verify where three different fixes leave the same failure', () => {
    expectQuiet(
      times(4, (i): ScriptItem[] => [
        { tool: 'edit_file', args: { path: 'src/a.ts', old: 'x', new: `attempt ${i}` }, result: 'ok' },
        { tool: 'run_tests', args: { cmd: 'npm test' }, result: 'FAIL test/a.test.ts: expected 2, got 1' },
      ]).flat(),
    );
  });

  it('reading a growing stream', () => {
    let log = '';
    expectQuiet(
      times(40, (i) => {
        log += `line ${i}: compiling module ${i}\n`;
        return { tool: 'read_output', args: { session: 's1' }, result: log };
      }),
    );
  });

  it('debugger stepping', () => {
    expectQuiet(times(20, (i) => ({ tool: 'gdb', args: { command: 'next' }, result: `main.c:${40 + i}: x = x + ${i};` })));
  });

  it('scrolling through a long page', () => {
    expectQuiet(times(18, (i) => ({ tool: 'browser_scroll', args: { direction: 'down' }, result: `<section>Paragraph ${i * 3}..${i * 3 + 2} of the terms</section>` })));
  });

  it('two-pass batches', () => {
    const pass: ScriptItem[] = ['a.ts', 'b.ts', 'c.ts'].map((p) => ({ tool: 'read_file', args: { path: p }, result: `contents of ${p}` }));
    expectQuiet([...pass, { tool: 'plan', args: { note: 'now edit' }, result: 'ok' }, ...pass]);
  });

  it('two-pass parallel batches', () => {
    const batch: ScriptItem = ['a.ts', 'b.ts', 'c.ts'].map((p) => ({ tool: 'read_file', args: { path: p }, result: `contents of ${p}` }));
    expectQuiet([batch, batch]);
  });

  it('a transient retry that then succeeds', () => {
    expectQuiet([
      { tool: 'fetch_url', args: { url: 'https://x' }, error: { message: '503 Service Unavailable' } },
      { tool: 'fetch_url', args: { url: 'https://x' }, error: { message: '503 Service Unavailable' } },
      { tool: 'fetch_url', args: { url: 'https://x' }, result: '<html>ok page</html>' },
      { tool: 'fetch_url', args: { url: 'https://y' }, error: { message: 'ECONNRESET' } },
      { tool: 'fetch_url', args: { url: 'https://y' }, result: '<html>page y</html>' },
    ]);
  });

  it('re-reading something far apart', () => {
    const readConfig: ScriptItem = { tool: 'read_file', args: { path: 'config.yaml' }, result: 'port: 8080' };
    const other = (k: number): ScriptItem[] => times(4, (i) => ({ tool: 'grep', args: { pattern: `p${k}-${i}` }, result: `${k * 10 + i} matches` }));
    expectQuiet([readConfig, ...other(1), readConfig, ...other(2), readConfig, ...other(3), readConfig]);
  });

  it('fan-out in one batch', () => {
    const cities = ['Paris', 'Rome', 'Oslo', 'Lima', 'Kyiv', 'Pune', 'Baku', 'Doha'];
    expectQuiet([cities.map((c) => ({ tool: 'search', args: { q: `hotels in ${c}` }, result: 'No results found.' }))]);
  });

  it('duplicates inside one batch', () => {
    const dup: ScriptItem = { tool: 'read_file', args: { path: 'a.ts' }, result: 'A' };
    expectQuiet([[dup, dup, dup, dup, dup], { tool: 'write_file', args: { path: 'b.ts' }, result: 'ok' }]);
  });

  it('the same calls in different traces', () => {
    const engine = new LoopEngine();
    const call: ScriptItem = { tool: 'search', args: { q: 'x' }, result: 'y' };
    for (let t = 0; t < 10; t++) expect(runAgent([call, call], {}, engine, `trace-${t}`).detections).toEqual([]);
  });

  it('a date scan with the same negative answer a few times', () => {
    expectQuiet(times(3, (i) => ({ tool: 'check_availability', args: { date: `2026-12-0${i + 1}` }, result: 'No slots available.' })));
  });

  it('different jobs polled round-robin while they run', () => {
    expectQuiet(times(3, () => ['a', 'b', 'c'].map((j) => ({ tool: 'job_status', args: { job: j }, result: 'running', idleMs: 45_000 }))).flat());
  });
});
