import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/detector/config/index.js';
import { ToolLoopError } from '../../src/errors.js';
import { isLoopHint, isTransientError, ToolLoopGuard, type GuardEvent, type LoopHint } from '../../src/guard/index.js';
import { LoopDetectionSpanProcessor } from '../../src/processor/index.js';

const SECRET = 'sk-live-SECRET-4242';
const args = { q: 'order status', token: SECRET };
const answer = { status: 'unknown order' };

function captureDiag(): { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  const logger: DiagLogger = {
    error: (...m: unknown[]) => errors.push(m.join(' ')),
    warn: (...m: unknown[]) => warnings.push(m.join(' ')),
    info: () => undefined,
    debug: () => undefined,
    verbose: () => undefined,
  };
  diag.setLogger(logger, DiagLogLevel.WARN);
  return { errors, warnings };
}

afterEach(() => {
  diag.disable();
  vi.restoreAllMocks();
});

/** Calls `search` through `guard.run` the way an agent loop would, counting real executions. */
function searcher(guard: ToolLoopGuard<unknown>): { call: (a?: unknown) => Promise<unknown>; executed: () => number } {
  let executed = 0;
  return {
    call: (a: unknown = args) =>
      guard.run('search', a, () => {
        executed++;
        return answer;
      }),
    executed: () => executed,
  };
}

describe('check / run', () => {
  it('proceeds, then answers with a marked hint, then throws ToolLoopError; hinted calls never run', async () => {
    const guard = new ToolLoopGuard();
    const s = searcher(guard);
    expect(await s.call()).toBe(answer);
    expect(await s.call()).toBe(answer);
    const hint = await s.call();
    expect(isLoopHint(hint)).toBe(true);
    expect(isLoopHint(answer)).toBe(false);
    expect(hint).toMatchObject({ type: 'loopwatch.hint', toolName: 'search', kind: 'repeat', level: 'warning', count: 3 });
    expect((hint as LoopHint).message).toBe(
      "[loopwatch] This call was not run: 'search' already ran twice with these exact arguments and returned the same result each time. " +
        'Running it again will not give you anything new: use the results you already have, try different arguments or another tool, ' +
        'or tell the user what is blocking you. If you make this call again, the run will be stopped.',
    );
    const error = await s.call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolLoopError);
    expect(error).toMatchObject({ name: 'ToolLoopError', toolName: 'search', count: 4, kind: 'repeat' });
    expect(s.executed()).toBe(2);
    expect(guard.recentCalls().map((r) => r.status)).toEqual(['ok', 'ok', 'hinted', 'blocked']);
  });

  it('recentCalls(): a record per call, the arguments as a hex fingerprint (the same for the same arguments), in the order the fields were set', () => {
    const guard = new ToolLoopGuard();
    const first = guard.check('search', args);
    if (first.action === 'proceed') first.succeeded(answer);
    guard.check('search', { q: 'another order' });
    const again = guard.check('search', args);
    if (again.action === 'proceed') again.failed(new Error('upstream down'));
    guard.check('ping', undefined);
    const records = guard.recentCalls();
    expect(records.map((r) => r.status)).toEqual(['ok', 'running', 'error', 'running']);
    const [a, b, c, d] = records.map((r) => r.argsFingerprint);
    expect(a).toMatch(/^[0-9a-f]+$/);
    expect(c).toBe(a);
    expect(b).not.toBe(a);
    expect(d).toBeUndefined();
    expect(Object.keys(records[2] ?? {})).toEqual(['index', 'toolName', 'argsFingerprint', 'status', 'startTime', 'endTime', 'transient']);
    expect(Object.keys(records[3] ?? {})).toEqual(['index', 'toolName', 'status', 'startTime']);
    // a copy: the caller's changes do not reach the guard's own
    (records[0] as { status: string }).status = 'blocked';
    expect(guard.recentCalls()[0]?.status).toBe('ok');
  });

  it('the low-level check(): proceed with a handle, a hint, or a throw', async () => {
    const guard = new ToolLoopGuard();
    for (let i = 0; i < 2; i++) {
      const call = guard.check('search', args);
      expect(call.action).toBe('proceed');
      if (call.action === 'proceed') call.succeeded(answer);
    }
    const third = guard.check('search', args);
    expect(third.action).toBe('hint');
    // calls started in one synchronous run are one parallel step: the same answer, no new strike
    expect(guard.check('search', args).action).toBe('hint');
    await Promise.resolve(); // the model's next step
    expect(() => guard.check('search', args)).toThrow(ToolLoopError);
  });

  it('a hinted call is not recorded: the model that changes course is not held to the hint', async () => {
    const guard = new ToolLoopGuard();
    const s = searcher(guard);
    await s.call();
    await s.call();
    expect(isLoopHint(await s.call())).toBe(true);
    // the model listens: different arguments run normally, and so does other work
    expect(await s.call({ q: 'order 1234 status' })).toBe(answer);
    expect(await guard.run('lookup_order', { id: 1234 }, () => 'shipped')).toBe('shipped');
    expect(guard.stopped).toBeUndefined();
  });

  it('a loop that broke and formed again gets a fresh hint, not a stop', async () => {
    const guard = new ToolLoopGuard();
    const s = searcher(guard);
    await s.call();
    await s.call();
    expect(isLoopHint(await s.call())).toBe(true);
    await guard.run('read_file', { path: 'a' }, () => 'A');
    await guard.run('read_file', { path: 'b' }, () => 'B');
    expect(await s.call()).toBe(answer); // new work in between: runs
    expect(await s.call()).toBe(answer);
    expect(isLoopHint(await s.call())).toBe(true); // the same loop again: a hint first, again
    expect(s.executed()).toBe(4);
  });

  it('once stopped, every further call is refused without running, whatever the tool', async () => {
    const events: GuardEvent[] = [];
    const guard = new ToolLoopGuard({ action: 'abort', onDecision: (e) => void events.push(e) });
    const s = searcher(guard);
    for (let i = 0; i < 4; i++) await s.call();
    await expect(s.call()).rejects.toBeInstanceOf(ToolLoopError);
    expect(guard.signal.aborted).toBe(true);
    expect(guard.signal.reason).toBe(guard.stopped);
    let ran = false;
    await expect(guard.run('other_tool', {}, () => (ran = true))).rejects.toMatchObject({ toolName: 'search' });
    expect(ran).toBe(false);
    expect(events.at(-1)).toMatchObject({ action: 'blocked', alreadyStopped: true });
  });

  it('reset() starts a new turn: history, strikes and the stop are gone, and the signal is new', async () => {
    const guard = new ToolLoopGuard({ action: 'abort' });
    const s = searcher(guard);
    for (let i = 0; i < 4; i++) await s.call();
    await expect(s.call()).rejects.toBeInstanceOf(ToolLoopError);
    const oldSignal = guard.signal;
    guard.reset();
    expect(guard.signal).not.toBe(oldSignal);
    expect(guard.signal.aborted).toBe(false);
    expect(guard.recentCalls()).toEqual([]);
    expect(await s.call()).toBe(answer);
    expect(await s.call()).toBe(answer);
  });

  it('userMessage(): something new starts a new turn (the stop is gone, calls are remembered); the same words again change nothing', async () => {
    const guard = new ToolLoopGuard({ action: 'abort' });
    const s = searcher(guard);
    guard.userMessage('Where is my order?');
    for (let i = 0; i < 4; i++) await s.call();
    await expect(s.call()).rejects.toBeInstanceOf(ToolLoopError);
    guard.userMessage('  where is my ORDER? ');
    expect(guard.stopped).toBeDefined();
    await expect(s.call()).rejects.toBeInstanceOf(ToolLoopError);
    const oldSignal = guard.signal;
    guard.userMessage('Please check again, it should have shipped today.');
    expect(guard.stopped).toBeUndefined();
    expect(guard.signal).not.toBe(oldSignal);
    // a re-check the user asked for runs; the calls before it are remembered, not counted against it
    expect(await s.call()).toBe(answer);
    expect(guard.recentCalls()).toHaveLength(1);
    for (let i = 0; i < 3; i++) await s.call();
    await expect(s.call()).rejects.toBeInstanceOf(ToolLoopError);
  });

  it('parallel duplicates in one step are one strike', async () => {
    const guard = new ToolLoopGuard();
    const s = searcher(guard);
    await s.call();
    await s.call();
    const step = await Promise.all([guard.run('search', args, () => answer, { batch: 's3' }), guard.run('search', args, () => answer, { batch: 's3' })]);
    expect(step.every(isLoopHint)).toBe(true);
    expect(guard.stopped).toBeUndefined();
  });
});

describe('privacy: raw arguments never leave in hints, events, errors or records', () => {
  it('nothing the guard produces contains the argument values', async () => {
    const events: GuardEvent[] = [];
    const guard = new ToolLoopGuard({ onDecision: (e) => void events.push(e) });
    const s = searcher(guard);
    const outputs: unknown[] = [];
    for (let i = 0; i < 4; i++) outputs.push(await s.call().catch((e: unknown) => ({ message: (e as Error).message, detection: (e as ToolLoopError).detection })));
    const everything = JSON.stringify({ outputs, events, records: guard.recentCalls() });
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain('order status');
    expect(everything).toContain('search');
  });

  it('a custom hint builder gets the raw arguments in process (opt-in) and may return any shape', async () => {
    const guard = new ToolLoopGuard<string>({ hint: (c) => `stop calling ${c.toolName} for ${(c.arguments as typeof args).q}` });
    const s = searcher(guard);
    await s.call();
    await s.call();
    expect(await s.call()).toBe('stop calling search for order status');
  });
});

describe('containment: nothing but the intended ToolLoopError reaches the agent', () => {
  it('a throwing or rejecting onDecision, hint builder or isTransient is contained', async () => {
    const log = captureDiag();
    const guard = new ToolLoopGuard({
      onDecision: () => {
        throw new Error('callback bug');
      },
      hint: () => {
        throw new Error('hint bug');
      },
      isTransient: () => {
        throw new Error('classifier bug');
      },
    });
    const s = searcher(guard);
    await s.call();
    await s.call();
    const hint = await s.call();
    expect(isLoopHint(hint)).toBe(true); // the default hint stands in
    await expect(guard.run('flaky', {}, () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    const async = new ToolLoopGuard({ onDecision: () => Promise.reject(new Error('async bug')) });
    const a = searcher(async);
    for (let i = 0; i < 3; i++) await a.call();
    await new Promise((r) => setTimeout(r, 0));
    for (const bug of ['callback bug', 'hint bug', 'classifier bug', 'async bug']) expect(log.errors.join('\n')).toContain(bug);
  });

  it("the tool's own error passes through unchanged", async () => {
    const guard = new ToolLoopGuard();
    const own = Object.assign(new Error('disk full'), { code: 'ENOSPC' });
    const caught = await guard.run('write', { p: 1 }, () => {
      throw own;
    }).catch((e: unknown) => e);
    expect(caught).toBe(own);
  });

  it('arguments that cannot be read are treated as not captured', async () => {
    const hostile = new Proxy({}, { ownKeys: () => { throw new Error('hostile'); } });
    const guard = new ToolLoopGuard();
    await expect(guard.run('tool', hostile, () => 'ok')).resolves.toBe('ok');
  });

  it('a defect inside the guard lets the call run unguarded instead of breaking the agent', async () => {
    const log = captureDiag();
    const guard = new ToolLoopGuard();
    vi.spyOn(guard.engine.policies, 'get').mockImplementation(() => {
      throw new Error('engine defect');
    });
    await expect(guard.run('search', args, () => answer)).resolves.toBe(answer);
    expect(log.errors.join('\n')).toContain('engine defect');
  });
});

describe('transient failures and backoff', () => {
  const flaky = (guard: ToolLoopGuard<unknown>, fails: number): { call: () => Promise<unknown>; attempts: () => number } => {
    let attempts = 0;
    return {
      call: () =>
        guard.run('fetch_url', { url: 'https://api/x' }, () => {
          attempts++;
          if (attempts <= fails) throw Object.assign(new Error('503 Service Unavailable'), { status: 503 });
          return 'page';
        }),
      attempts: () => attempts,
    };
  };

  it('waits longer before each retry of a transiently failing call, then lets the success through', async () => {
    const events: GuardEvent[] = [];
    const guard = new ToolLoopGuard({ backoff: { baseMs: 10, factor: 2, maxMs: 1000 }, onDecision: (e) => void events.push(e) });
    const f = flaky(guard, 3);
    for (let i = 0; i < 3; i++) await expect(f.call()).rejects.toThrow('503');
    const started = Date.now();
    expect(await f.call()).toBe('page');
    expect(Date.now() - started).toBeGreaterThanOrEqual(35); // 40 ms before the 4th attempt (timers may fire 1 ms early)
    expect(guard.recentCalls().map((r) => r.delayMs ?? 0)).toEqual([0, 10, 20, 40]);
    expect(guard.recentCalls().map((r) => r.transient)).toEqual([true, true, true, undefined]);
    expect(events.map((e) => e.action)).toEqual(['delayed', 'delayed']);
  });

  it('stops retrying at the critical threshold', async () => {
    const guard = new ToolLoopGuard({ backoff: { baseMs: 1, maxMs: 2 } });
    const f = flaky(guard, 100);
    for (let i = 0; i < 4; i++) await expect(f.call()).rejects.toThrow('503');
    await expect(f.call()).rejects.toMatchObject({ name: 'ToolLoopError', kind: 'error_pattern', count: 5 });
    expect(f.attempts()).toBe(4);
  });

  it('a retry waiting out its delay is cancelled by the signal and never runs', async () => {
    const guard = new ToolLoopGuard({ backoff: { baseMs: 5_000 } });
    const f = flaky(guard, 100);
    await expect(f.call()).rejects.toThrow('503');
    const controller = new AbortController();
    let ran = false;
    const pending = guard.run('fetch_url', { url: 'https://api/x' }, () => (ran = true), { signal: controller.signal });
    controller.abort(new Error('user cancelled'));
    await expect(pending).rejects.toThrow('user cancelled');
    expect(ran).toBe(false);
    expect(guard.recentCalls().at(-1)?.status).toBe('blocked');
  });

  it('isTransientError', () => {
    expect(isTransientError(Object.assign(new Error('x'), { status: 429 }))).toBe(true);
    expect(isTransientError(Object.assign(new Error('x'), { statusCode: 404 }))).toBe(false);
    expect(isTransientError(Object.assign(new Error('socket'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isTransientError(new Error('Request timed out after 30s'))).toBe(true);
    expect(isTransientError(new Error('rate limit exceeded'))).toBe(true);
    expect(isTransientError(new Error("old_string 'b' not found"))).toBe(false);
    expect(isTransientError(Object.assign(new Error('aborted'), { name: 'AbortError' }))).toBe(false);
    expect(isTransientError(new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'ETIMEDOUT' }) }))).toBe(true);
    expect(isTransientError({ isRetryable: true })).toBe(true); // AI SDK APICallError
    expect(isTransientError(undefined)).toBe(false);
  });
});

describe('configuration', () => {
  it('shares the processor engine, and with it every threshold and role', async () => {
    const processor = new LoopDetectionSpanProcessor({ tools: { search: { thresholds: { repeat: { warning: 2, critical: 3 } } } } });
    const guard = new ToolLoopGuard({ engine: processor.engine });
    expect(guard.engine).toBe(processor.engine);
    const s = searcher(guard);
    await s.call();
    expect(isLoopHint(await s.call())).toBe(true);
  });

  it('rejects invalid options at construction, with the key path', () => {
    const engine = new LoopDetectionSpanProcessor().engine;
    expect(() => new ToolLoopGuard({ engine, thresholds: { repeat: { warning: 2 } } })).toThrow(ConfigError);
    expect(() => new ToolLoopGuard({ action: 'nudge' as 'hint' })).toThrow(/action/);
    expect(() => new ToolLoopGuard({ maxHints: 0 })).toThrow(/maxHints/);
    expect(() => new ToolLoopGuard({ backoff: { baseMs: 100, maxMs: 10 } })).toThrow(/backoff\.maxMs/);
    expect(() => new ToolLoopGuard({ thresholds: { repeat: { warning: 0 } } })).toThrow(/thresholds\.repeat\.warning/);
  });
});
