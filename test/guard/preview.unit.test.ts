import { describe, expect, it } from 'vitest';
import { LoopEngine } from '../../src/detector/engine.js';
import type { TraceDetector } from '../../src/detector/trace-detector.js';
import type { LoopDetection, ToolCall } from '../../src/detector/types.js';
import { buildToolCall } from '../../src/detector/tool-call.js';
import { runAgent, times, type ScriptItem } from '../support/agent-run.js';

/** A spread of loop and quiet scripts: sequential, parallel, failing, cyclic, spaced. */
const scripts: Record<string, ScriptItem[]> = {
  identical: times(8, { tool: 'search', args: { q: 'x' }, result: { hits: ['a'] } }),
  paraphrase: ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((q) => ({ tool: 'search', args: { q }, result: 'No results found.' })),
  cycle: times(5, [
    { tool: 'read_file', args: { path: 'a.ts' }, result: 'A' },
    { tool: 'edit_file', args: { path: 'a.ts' }, error: { message: 'not found' } },
  ]).flat(),
  parallelCycle: times(4, [
    [
      { tool: 'w', args: { c: 'P' }, result: 'rain' },
      { tool: 'w', args: { c: 'R' }, result: 'sun' },
    ],
    { tool: 's', args: { t: 'x' }, result: 'mixed' },
  ]).flat(),
  failing: times(6, (i) => ({ tool: 'fetch', args: { u: 1 }, error: { message: `429 retry ${i}` } })),
  polling: times(20, (i) => ({ tool: 'get_job_status', args: { j: 1 }, result: i < 12 ? 'running' : 'done', idleMs: i % 3 === 0 ? 40_000 : 1000 })),
  changing: times(30, (i) => ({ tool: 'bash', args: { cmd: 'date' }, result: String(i) })),
  batchEdits: times(12, (i) => ({ tool: 'edit', args: { p: `f${i}` }, result: 'ok' })),
};

/** Wraps every trace of `engine` so that each record is preceded by previews of odd hypotheses. */
function withPreviews(engine: LoopEngine, log: Array<{ preview: LoopDetection[]; recorded: LoopDetection[] }>): LoopEngine {
  const create = engine.createTrace.bind(engine);
  engine.createTrace = (id: string): TraceDetector => {
    const t = create(id);
    const record = t.record.bind(t);
    t.record = (call: ToolCall, batchComplete?: boolean) => {
      t.preview({ ...call, outcome: { ok: false, errorClass: 12345, failureHash: 12345, unknownTool: true } }, !batchComplete);
      t.preview({ ...call, toolName: 'another', batch: 'elsewhere' }, true);
      const preview = t.preview(call, batchComplete);
      const recorded = record(call, batchComplete);
      log.push({ preview, recorded });
      return recorded;
    };
    return t;
  };
  return engine;
}

const brief = (d: LoopDetection): string => `${d.callIndex}:${d.rule}:${d.level}:${d.count}:${d.fingerprint}`;

describe('TraceDetector.preview', () => {
  for (const [name, script] of Object.entries(scripts)) {
    it(`has no side effect, and agrees with record (${name})`, () => {
      const plain = runAgent(script);
      const log: Array<{ preview: LoopDetection[]; recorded: LoopDetection[] }> = [];
      const previewed = runAgent(script, {}, withPreviews(new LoopEngine(), log));
      // previews interleaved with every record change nothing the engine reports
      expect(previewed.detections.map(brief)).toEqual(plain.detections.map(brief));
      const seen = new Set<string>();
      for (const { preview, recorded } of log) {
        // what record reports for a call, preview reported for the same call...
        for (const d of recorded) expect(preview.map(brief)).toContain(brief(d));
        // ...and what preview reports beyond it was already reported at that level (record de-duplicates)
        for (const d of preview) {
          if (!recorded.some((r) => brief(r) === brief(d))) expect(seen.has(`${d.fingerprint}:${d.level}`) || seen.has(`${d.fingerprint}:critical`)).toBe(true);
        }
        for (const d of recorded) seen.add(`${d.fingerprint}:${d.level}`);
      }
    });
  }

  it('leaves the trace as it was, past the ends of its bounded history, step window and batch ring', () => {
    // small history and cycle window, many batches, parallel batches left open: every roll-back path
    const config = { historySize: 8, cycle: { maxPeriod: 3 } };
    const [withPreviews, plain] = [new LoopEngine(config), new LoopEngine(config)];
    const a = withPreviews.createTrace('t');
    const b = plain.createTrace('t');
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let batch = 0;
    for (let i = 1; i <= 400; i++) {
      if (random(3) > 0) batch++;
      const parallelOpen = random(4) === 0;
      const tool = ['read', 'edit', 'search', 'wait_for'][random(4)] as string;
      const failing = random(3) === 0;
      const input = {
        toolName: tool,
        arguments: { p: random(3) },
        ...(failing ? { error: { message: `boom ${random(2)}` } } : { result: `r${random(3)}` }),
        startTime: i * 1000,
        endTime: i * 1000 + 5,
        // now and then a batch seen before again, its key still in the ring or not
        batch: `b${random(8) === 0 ? batch - random(12) : batch}`,
        callIndex: i,
        ...(random(10) === 0 ? { agentName: `agent${random(2)}` } : {}),
      };
      const [ca, cb] = [buildToolCall(withPreviews, input), buildToolCall(plain, input)];
      if (random(20) === 0) {
        a.userMessage(i);
        b.userMessage(i);
      }
      const previewed = a.preview(ca, !parallelOpen);
      a.preview({ ...ca, batch: `other${i}` }, true);
      a.preview({ ...ca, outcome: { ok: false, errorClass: 1, failureHash: 2, unknownTool: false } }, parallelOpen);
      expect(a.preview(ca, !parallelOpen)).toEqual(previewed);
      const recorded = a.record(ca, !parallelOpen);
      expect(recorded).toEqual(b.record(cb, !parallelOpen));
      for (const d of recorded) expect(previewed).toContainEqual(d);
      expect(a.recentCalls()).toEqual(b.recentCalls());
      expect(a.callCount).toBe(b.callCount);
    }
  });

  it('reports a level every time it is asked (no de-duplication)', () => {
    const engine = new LoopEngine();
    const t = engine.createTrace('t');
    const call = (i: number): ToolCall =>
      buildToolCall(engine, { toolName: 'search', arguments: { q: 'x' }, result: 'same', startTime: i * 1000, endTime: i * 1000 + 5, batch: `b${i}`, callIndex: i });
    t.record(call(1));
    t.record(call(2));
    expect(t.preview(call(3)).map((d) => d.level)).toEqual(['warning']);
    expect(t.preview(call(3)).map((d) => d.level)).toEqual(['warning']);
    expect(t.callCount).toBe(2);
    expect(t.record(call(3)).map((d) => d.level)).toEqual(['warning']);
    expect(t.record(call(4))).toEqual([]); // record de-duplicates
    expect(t.preview(call(5)).map((d) => d.level)).toEqual(['critical']);
  });
});

describe('TraceDetector.recentCalls', () => {
  it('lists the remembered calls oldest first, with outcomes rebuilt from hashes', () => {
    const engine = new LoopEngine({ historySize: 8 });
    const t = engine.createTrace('t');
    for (let i = 0; i < 10; i++) {
      t.record(
        buildToolCall(engine, {
          toolName: i % 2 ? 'fail' : 'ok',
          ...(i === 0 ? {} : { arguments: { i } }),
          ...(i % 2 ? { error: { type: 'Boom' } } : { result: { i } }),
          startTime: i,
          endTime: i + 1,
          batch: `b${i}`,
          callIndex: i + 1,
        }),
      );
    }
    const calls = t.recentCalls();
    expect(calls).toHaveLength(8); // bounded by historySize
    expect(calls.map((c) => c.startTime)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(calls[0]).toMatchObject({ toolName: 'ok', outcome: { ok: true, informative: true } });
    expect(typeof calls[0]?.argsHash).toBe('number');
    expect(calls[1]).toMatchObject({ toolName: 'fail', outcome: { ok: false, unknownTool: false } });
    expect(t.recentCalls(2).map((c) => c.startTime)).toEqual([8, 9]);
    const first = engine.createTrace('u');
    first.record(buildToolCall(engine, { toolName: 'x', startTime: 0, endTime: 1, batch: 'a', callIndex: 1 }));
    expect(first.recentCalls()[0]?.argsHash).toBeUndefined();
    expect(first.recentCalls()[0]?.outcome).toEqual({ ok: true, informative: false });
  });
});
