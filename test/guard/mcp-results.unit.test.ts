/**
 * The guard's reading of MCP tool results (`isError`, `structuredContent`), of MCP tool
 * annotations, and `stopScope: 'loop'`: what `loopwatch mcp` relies on, usable in process too.
 */
import { describe, expect, it } from 'vitest';
import { ToolLoopError } from '../../src/errors.js';
import { isLoopHint, ToolLoopGuard, type GuardEvent, type LoopHint, type ToolAnnotations } from '../../src/guard/index.js';
import { callOutcome, changesState } from '../../src/guard/tool-result.js';

const failure = (text: string) => ({ content: [{ type: 'text', text }], isError: true });
const READ: ToolAnnotations = { readOnlyHint: true };
const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false };
const IDEMPOTENT_WRITE: ToolAnnotations = { readOnlyHint: false, idempotentHint: true };

describe('callOutcome', () => {
  it('reads isError results as failures with their text, structuredContent before content, other values as they are', () => {
    expect(callOutcome(failure('ENOENT: no such file'))).toEqual({ error: { name: 'tool_error', message: 'ENOENT: no such file' } });
    expect(callOutcome({ content: [{ type: 'image', data: 'AAAA' }, { type: 'text', text: 'x' }], isError: true })).toEqual({ error: { name: 'tool_error', message: '[image]\nx' } });
    expect(callOutcome({ content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } })).toEqual({ result: { a: 1 } });
    expect(callOutcome({ content: [{ type: 'text', text: 'ok' }] })).toEqual({ result: [{ type: 'text', text: 'ok' }] });
    expect(callOutcome({ isError: true, message: 'not an MCP result' })).toEqual({ result: { isError: true, message: 'not an MCP result' } });
    expect(callOutcome('plain')).toEqual({ result: 'plain' });
  });

  it('changesState: only a declared non-read-only tool, and not the unchanged repeat of an idempotent one', () => {
    expect(changesState(undefined, false)).toBe(false);
    expect(changesState({}, false)).toBe(false);
    expect(changesState(READ, false)).toBe(false);
    expect(changesState(WRITE, false)).toBe(true);
    expect(changesState(WRITE, true)).toBe(true);
    expect(changesState(IDEMPOTENT_WRITE, false)).toBe(true);
    expect(changesState(IDEMPOTENT_WRITE, true)).toBe(false);
  });
});

describe('MCP results through the guard', () => {
  it('an isError result repeated with the same text is a repeated failure: hinted, then stopped, never a success', async () => {
    const events: GuardEvent[] = [];
    const guard = new ToolLoopGuard({ onDecision: (e) => void events.push(e) });
    let ran = 0;
    const call = () => guard.run('read_file', { path: '/missing' }, () => (ran++, failure('ENOENT: no such file or directory')));
    expect(await call()).toMatchObject({ isError: true });
    expect(await call()).toMatchObject({ isError: true });
    const hint = (await call()) as LoopHint;
    expect(isLoopHint(hint)).toBe(true);
    expect(hint.message).toContain("'read_file' already failed twice with these exact arguments");
    expect(hint.message).not.toContain('ENOENT');
    await expect(call()).rejects.toBeInstanceOf(ToolLoopError);
    expect(ran).toBe(2);
    expect(guard.recentCalls().map((r) => r.status)).toEqual(['error', 'error', 'hinted', 'blocked']);
    expect(events.map((e) => e.detection.kind)).toEqual(['error_pattern', 'error_pattern']);
  });

  it('the same results are a repeat; a different structuredContent is progress', async () => {
    const guard = new ToolLoopGuard();
    const result = (n: number) => ({ content: [{ type: 'text', text: 'same text' }], structuredContent: { n } });
    let n = 0;
    const poll = () => guard.run('count', { q: 1 }, () => result(n++));
    for (let i = 0; i < 5; i++) expect(isLoopHint(await poll())).toBe(false);
    const same = () => guard.run('fixed', { q: 1 }, () => result(0));
    await same();
    await same();
    expect(isLoopHint(await same())).toBe(true);
  });
});

describe('annotations', () => {
  /** read(B) twice, write(B), read(B): the model checks its own write; without annotations nothing says B changed. */
  async function verifyAfterWrite(annotations: { read?: ToolAnnotations; write?: ToolAnnotations }, writeName = 'write_file'): Promise<{ results: unknown[]; reads: number }> {
    const guard = new ToolLoopGuard();
    let reads = 0;
    let contents = 'v1';
    const results: unknown[] = [];
    const read = async () =>
      results.push(await guard.run('read_file', { path: 'B' }, () => (reads++, { content: [{ type: 'text', text: contents }] }), { ...(annotations.read ? { annotations: annotations.read } : {}) }));
    await read();
    await read();
    await guard.run(writeName, { path: 'B', content: 'v2' }, () => ((contents = 'v2'), { content: [{ type: 'text', text: 'ok' }] }), { ...(annotations.write ? { annotations: annotations.write } : {}) });
    await read();
    return { results, reads };
  }

  it('without annotations, a write its name does not tell: the read after it is hinted (a repeat with one call between)', async () => {
    const { results, reads } = await verifyAfterWrite({}, 'fs_tool');
    expect(isLoopHint(results[2])).toBe(true);
    expect(reads).toBe(2);
  });

  it('without annotations, a write named like one (the writer role): the read after it verifies it and runs', async () => {
    const { results, reads } = await verifyAfterWrite({});
    expect(results[2]).toEqual({ content: [{ type: 'text', text: 'v2' }] });
    expect(reads).toBe(3);
  });

  it('after a declared write, the read runs (and gets the new contents); it is judged once it ran', async () => {
    const { results, reads } = await verifyAfterWrite({ read: READ, write: WRITE });
    expect(results[2]).toEqual({ content: [{ type: 'text', text: 'v2' }] });
    expect(reads).toBe(3);
  });

  it('a tool declared read-only changes nothing: the read after it is judged before it runs', async () => {
    const { results } = await verifyAfterWrite({ read: READ, write: READ });
    expect(isLoopHint(results[2])).toBe(true);
  });

  it('a write that repeats itself is still judged before it runs; an idempotent repeat changes nothing for the reads', async () => {
    const guard = new ToolLoopGuard();
    let writes = 0;
    const write = () => guard.run('write_file', { path: 'A', content: 'same' }, () => (writes++, { content: [{ type: 'text', text: 'ok: wrote A' }] }), { annotations: WRITE });
    await write();
    await write();
    // a write resent back to back with the same answer is stopped at its 3rd send (`back_to_back`), before it runs
    expect(await write().catch((e: unknown) => e)).toBeInstanceOf(ToolLoopError);
    expect(writes).toBe(2);

    const g2 = new ToolLoopGuard();
    let reads = 0;
    const read = () => g2.run('read_file', { path: 'B' }, () => (reads++, { content: [{ type: 'text', text: 'B' }] }), { annotations: READ });
    const put = () => g2.run('put', { key: 'k', value: 'v' }, () => ({ content: [{ type: 'text', text: 'stored k' }] }), { annotations: IDEMPOTENT_WRITE });
    await put();
    await read();
    await put(); // the same idempotent call again: no new change
    await read();
    expect(isLoopHint(await read())).toBe(true);
    expect(reads).toBe(2);
  });

  it("a declaration decides a write's role where the name would guess it: read-only named like a write is hinted first, a declared write is stopped at its 3rd send", async () => {
    // `return` is a write's verb: named alone, this read would be stopped at its 3rd identical answer
    const send = async (guard: ToolLoopGuard, name: string, annotations?: ToolAnnotations) => {
      let ran = 0;
      const call = () => guard.run(name, { order: 'A1' }, () => (ran++, { content: [{ type: 'text', text: 'policy: 30 days' }] }), annotations ? { annotations } : {});
      await call();
      await call();
      const third = await call().catch((e: unknown) => e);
      return { third, ran };
    };
    const byName = await send(new ToolLoopGuard(), 'get_return_policy');
    expect(byName.third).toBeInstanceOf(ToolLoopError);
    const declaredRead = await send(new ToolLoopGuard(), 'get_return_policy', READ);
    expect(isLoopHint(declaredRead.third)).toBe(true);
    expect(declaredRead.ran).toBe(2);
    // named like a read, declared a write
    expect((await send(new ToolLoopGuard(), 'lookup_order')).third).toSatisfy(isLoopHint);
    expect((await send(new ToolLoopGuard(), 'lookup_order', WRITE)).third).toBeInstanceOf(ToolLoopError);
    // a role the configuration sets stays, whatever is declared
    const configured = new ToolLoopGuard({ tools: { lookup_order: { role: 'writer' } } });
    expect((await send(configured, 'lookup_order', READ)).third).toBeInstanceOf(ToolLoopError);
  });
});

describe("stopScope: 'loop'", () => {
  it('refuses the stopped call again, lets other work run, and the hint names the refusal instead of a stopped run', async () => {
    const guard = new ToolLoopGuard({ stopScope: 'loop' });
    const events: string[] = [];
    const search = () => guard.run('search', { q: 'x' }, () => ({ hits: [] }));
    await search();
    await search();
    const hint = (await search()) as LoopHint;
    expect(hint.message).toContain('If you make this call again, it will be refused for the rest of this run.');
    const error = await search().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolLoopError);
    expect(guard.stopped).toBe(error);
    // other work goes on
    expect(await guard.run('read', { path: 'notes' }, () => 'notes')).toBe('notes');
    expect(await guard.run('search', { q: 'y' }, () => ({ hits: [1] }))).toEqual({ hits: [1] });
    // the stopped call stays refused, with its own loop's detection
    const again = (await search().catch((e: unknown) => e)) as ToolLoopError;
    expect(again).toBeInstanceOf(ToolLoopError);
    expect(again.toolName).toBe('search');
    events.push(...guard.recentCalls().map((r) => r.status));
    expect(events).toEqual(['ok', 'ok', 'hinted', 'blocked', 'ok', 'ok', 'blocked']);
  });

  it("'run' (the default) still refuses everything after a stop", async () => {
    const guard = new ToolLoopGuard();
    const search = () => guard.run('search', { q: 'x' }, () => ({ hits: [] }));
    await search();
    await search();
    await search();
    await search().catch(() => undefined);
    await expect(guard.run('read', { path: 'notes' }, () => 'notes')).rejects.toBeInstanceOf(ToolLoopError);
  });

  it('rejects an unknown scope at construction', () => {
    expect(() => new ToolLoopGuard({ stopScope: 'trace' as never })).toThrow(/stopScope: expected one of run, loop/);
  });
});
