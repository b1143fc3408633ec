import { describe, expect, it } from 'vitest';
import { LoopEngine } from '../../src/detector/engine.js';
import { runAgent, times, type ScriptItem } from '../support/agent-run.js';
import { runGuarded } from '../guard/support/guard-run.js';

type Script = readonly ScriptItem[];

/**
 * Honest work (docs/how-it-decides.md): none of it may be flagged by
 * the engine once the calls ran, and the guard, which judges each call before it runs (its
 * outcome not known yet), must leave all of it alone. Each scenario is written once and run both
 * ways.
 */
const HONEST_WORK: ReadonlyArray<{ readonly name: string; readonly scripts: () => Script[] }> = [
  {
    name: 'polling whose status progresses',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(times(30, (i) => ({ tool: 'get_job_status', args: { job: 'build-17' }, result: { state: 'running', progress: `${Math.min(100, i * 4)}%` } })));
      return scripts;
    },
  },
  {
    name: 'polling a slowly moving status (each value seen a few times in a row)',
    scripts: () => {
      const scripts: Script[] = [];
      const states = ['queued', 'queued', 'queued', 'building', 'building', 'building', 'testing', 'testing', 'testing', 'deploying', 'deploying', 'done'];
      scripts.push(states.map((s) => ({ tool: 'deployment_status', args: { id: 'd-1' }, result: { state: s } })));
      return scripts;
    },
  },
  {
    name: 'polling an ordinary (non-poller) tool that progresses',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(times(12, (i) => ({ tool: 'fetch_order', args: { id: 'o-1' }, result: { shipped: i > 10, updates: i } })));
      return scripts;
    },
  },
  {
    name: 'a few polls spaced out in time, identical answers',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(times(4, { tool: 'get_deployment', args: { id: 'prod' }, result: 'rolling out 2/5 replicas', idleMs: 5 * 60_000 }));
      return scripts;
    },
  },
  {
    name: 'waits and sleeps between polls',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(
        times(8, (i): ScriptItem[] => [
          { tool: 'sleep', args: { seconds: 10 }, result: 'slept 10s', durationMs: 10_000 },
          { tool: 'check_build', args: { id: 7 }, result: i < 7 ? 'running' : 'passed' },
        ]).flat(),
      );
      return scripts;
    },
  },
  {
    name: 'repeated sleeps',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(times(12, { tool: 'wait', args: { ms: 2000 }, result: 'ok', durationMs: 2000 }));
      return scripts;
    },
  },
  {
    name: 'pagination and offsets',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(times(20, (i) => ({ tool: 'list_issues', args: { repo: 'x/y', page: i + 1, per_page: 50 }, result: { issues: [`#${i * 50 + 1}`, `#${i * 50 + 2}`], page: i + 1 } })));
      return scripts;
    },
  },
  {
    name: 'cursor pagination with opaque tokens',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(times(15, (i) => ({ tool: 'list_files', args: { cursor: i === 0 ? null : `c_${(i * 7919).toString(36)}xq${i}` }, result: { files: [`f${i}a.ts`, `f${i}b.ts`], next: `c_${((i + 1) * 7919).toString(36)}xq${i + 1}` } })));
      return scripts;
    },
  },
  {
    name: 'batch edits over many files, each returning a generic "ok"',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(times(25, (i) => ({ tool: 'edit_file', args: { path: `src/module${i}.ts`, old: 'var ', new: 'let ' }, result: 'OK' })));
      return scripts;
    },
  },
  {
    name: 'batch edits over many spots of one file',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(times(15, (i) => ({ tool: 'str_replace', args: { path: 'src/big.ts', old: `foo${i}(`, new: `bar${i}(` }, result: { success: true } })));
      return scripts;
    },
  },
  {
    name: 'fix-and-verify cycles whose test output moves',
    scripts: () => {
      const scripts: Script[] = [];
      const outputs = ['3 failed, 7 passed', '2 failed, 8 passed', '2 failed, 8 passed', '1 failed, 9 passed', '10 passed'];
      scripts.push(
        outputs.flatMap((out, i): ScriptItem[] => [
          { tool: 'edit_file', args: { path: 'src/a.ts', old: `bug${i}`, new: `fix${i}` }, result: 'ok' },
          { tool: 'run_tests', args: { cmd: 'npm test' }, result: out },
        ]),
      );
      return scripts;
    },
  },
  {
    name: 'fix-and-verify where three different fixes leave the same failure',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(
        times(4, (i): ScriptItem[] => [
          { tool: 'edit_file', args: { path: 'src/a.ts', old: 'x', new: `attempt ${i}` }, result: 'ok' },
          { tool: 'run_tests', args: { cmd: 'npm test' }, result: 'FAIL test/a.test.ts: expected 2, got 1' },
        ]).flat(),
      );
      return scripts;
    },
  },
  {
    name: 'reading a growing stream',
    scripts: () => {
      const scripts: Script[] = [];
      let log = '';
      scripts.push(
        times(40, (i) => {
          log += `line ${i}: compiling module ${i}\n`;
          return { tool: 'read_output', args: { session: 's1' }, result: log };
        }),
      );
      return scripts;
    },
  },
  {
    name: 'debugger stepping',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(times(20, (i) => ({ tool: 'gdb', args: { command: 'next' }, result: `main.c:${40 + i}: x = x + ${i};` })));
      return scripts;
    },
  },
  {
    name: 'scrolling through a long page',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(times(18, (i) => ({ tool: 'browser_scroll', args: { direction: 'down' }, result: `<section>Paragraph ${i * 3}..${i * 3 + 2} of the terms</section>` })));
      return scripts;
    },
  },
  {
    name: 'two-pass batches',
    scripts: () => {
      const scripts: Script[] = [];
      const pass: ScriptItem[] = ['a.ts', 'b.ts', 'c.ts'].map((p) => ({ tool: 'read_file', args: { path: p }, result: `contents of ${p}` }));
      scripts.push([...pass, { tool: 'plan', args: { note: 'now edit' }, result: 'ok' }, ...pass]);
      return scripts;
    },
  },
  {
    name: 'two-pass parallel batches',
    scripts: () => {
      const scripts: Script[] = [];
      const batch: ScriptItem = ['a.ts', 'b.ts', 'c.ts'].map((p) => ({ tool: 'read_file', args: { path: p }, result: `contents of ${p}` }));
      scripts.push([batch, batch]);
      return scripts;
    },
  },
  {
    name: 'a transient retry that then succeeds',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push([
        { tool: 'fetch_url', args: { url: 'https://x' }, error: { message: '503 Service Unavailable' } },
        { tool: 'fetch_url', args: { url: 'https://x' }, error: { message: '503 Service Unavailable' } },
        { tool: 'fetch_url', args: { url: 'https://x' }, result: '<html>ok page</html>' },
        { tool: 'fetch_url', args: { url: 'https://y' }, error: { message: 'ECONNRESET' } },
        { tool: 'fetch_url', args: { url: 'https://y' }, result: '<html>page y</html>' },
      ]);
      return scripts;
    },
  },
  {
    name: 're-reading something far apart',
    scripts: () => {
      const scripts: Script[] = [];
      const readConfig: ScriptItem = { tool: 'read_file', args: { path: 'config.yaml' }, result: 'port: 8080' };
      const other = (k: number): ScriptItem[] => times(4, (i) => ({ tool: 'grep', args: { pattern: `p${k}-${i}` }, result: `${k * 10 + i} matches` }));
      scripts.push([readConfig, ...other(1), readConfig, ...other(2), readConfig, ...other(3), readConfig]);
      return scripts;
    },
  },
  {
    name: 'fan-out in one batch',
    scripts: () => {
      const scripts: Script[] = [];
      const cities = ['Paris', 'Rome', 'Oslo', 'Lima', 'Kyiv', 'Pune', 'Baku', 'Doha'];
      scripts.push([cities.map((c) => ({ tool: 'search', args: { q: `hotels in ${c}` }, result: 'No results found.' }))]);
      return scripts;
    },
  },
  {
    name: 'duplicates inside one batch',
    scripts: () => {
      const scripts: Script[] = [];
      const dup: ScriptItem = { tool: 'read_file', args: { path: 'a.ts' }, result: 'A' };
      scripts.push([[dup, dup, dup, dup, dup], { tool: 'write_file', args: { path: 'b.ts' }, result: 'ok' }]);
      return scripts;
    },
  },
  {
    name: 'a date scan with the same negative answer a few times',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(times(3, (i) => ({ tool: 'check_availability', args: { date: `2026-12-0${i + 1}` }, result: 'No slots available.' })));
      return scripts;
    },
  },
  {
    name: 'different jobs polled round-robin while they run',
    scripts: () => {
      const scripts: Script[] = [];
      scripts.push(times(3, () => ['a', 'b', 'c'].map((j) => ({ tool: 'job_status', args: { job: j }, result: 'running', idleMs: 45_000 }))).flat());
      return scripts;
    },
  },];

describe('honest work: the engine flags none of it', () => {
  it.each(HONEST_WORK)('$name', ({ scripts }) => {
    for (const script of scripts()) {
      const run = runAgent(script);
      expect(run.detections.map((d) => `${d.callIndex}:${d.rule}:${d.level}: ${d.message}`)).toEqual([]);
    }
  });

  it('the same calls in different traces', () => {
    const engine = new LoopEngine();
    const call: ScriptItem = { tool: 'search', args: { q: 'x' }, result: 'y' };
    for (let t = 0; t < 10; t++) expect(runAgent([call, call], {}, engine, `trace-${t}`).detections).toEqual([]);
  });
});

describe('honest work: the guard, judging each call before it runs, leaves it alone', () => {
  it.each(HONEST_WORK)('$name', async ({ scripts }) => {
    for (const script of scripts()) {
      const run = await runGuarded(script);
      // 'allowed' events are reports of a call that ran (a retry after a failure): not interventions.
      const interventions = run.events.filter((e) => e.action !== 'allowed');
      expect(interventions.map((e) => `${e.action}:${e.detection.rule}: ${e.detection.message}`)).toEqual([]);
      expect(run.fates.every((f) => f === 'ran')).toBe(true);
      expect(run.executed).toBe(script.flat().length);
    }
  });

  it('a transient retry that succeeds on the third attempt (the guard lets the retry run)', async () => {
    const fail = { tool: 'fetch_url', args: { url: 'https://x' }, error: { message: '503 Service Unavailable' } };
    const run = await runGuarded([fail, fail, { tool: 'fetch_url', args: { url: 'https://x' }, result: '<html>ok</html>' }]);
    expect(run.fates).toEqual(['ran', 'ran', 'ran']);
    expect(run.events.map((e) => `${e.phase}:${e.action}`)).toEqual(['before:allowed']);
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
