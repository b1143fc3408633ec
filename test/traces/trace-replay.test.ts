import { describe, expect, it } from 'vitest';
import { decodeTracesData } from '../../src/cli/otlp-json.js';
import { TraceReplayer, type ReplayedTrace } from '../../src/traces/trace-replay.js';
import { defaultAdapters } from '../../src/conventions/index.js';
import { LoopEngine } from '../../src/detector/engine.js';
import { agentTrace, tracesData, type OtlpSpan } from '../support/otlp.js';

function replayer(opts: { lingerSpans?: number; maxOpenTraces?: number } = {}): { r: TraceReplayer; done: ReplayedTrace[] } {
  const done: ReplayedTrace[] = [];
  const r = new TraceReplayer({ engine: new LoopEngine(), adapters: defaultAdapters, onTrace: (t) => done.push(t), ...opts });
  return { r, done };
}

const feed = (r: TraceReplayer, spans: OtlpSpan[]): void => {
  for (const s of decodeTracesData(tracesData(spans))) r.add(s);
};

const loop = (label: string): OtlpSpan[] =>
  agentTrace({ label, prompt: 'p', steps: Array.from({ length: 5 }, () => ({ tool: 'search', args: { q: 'x' }, result: 'same' })) });

describe('trace replay', () => {
  it('a root that arrives before its children (a tail sampler regrouping) does not cut the trace', () => {
    const { r, done } = replayer();
    const spans = loop('root-first');
    const root = spans.pop();
    if (!root) throw new Error('no root');
    feed(r, [spans[0] as OtlpSpan, root, ...spans.slice(1)]);
    r.finish();
    expect(done).toHaveLength(1);
    expect(done[0]?.detections.map((d) => [d.level, d.callIndex])).toEqual([
      ['warning', 3],
      ['critical', 5],
    ]);
  });

  it('evaluates a finished trace once enough spans of other traces have gone by, before the input ends', () => {
    const { r, done } = replayer({ lingerSpans: 2048 });
    feed(r, loop('early'));
    expect(done).toHaveLength(0);
    for (let i = 0; i < 1200; i++) feed(r, agentTrace({ label: `other-${i}`, steps: [{ tool: 't', args: { i }, result: i }] }));
    expect(done.map((t) => t.traceId)).toContain(decodeTracesData(tracesData(loop('early')))[0]?.traceId);
    expect(done.find((t) => t.detections.length > 0)?.detections).toHaveLength(2);
  });

  it('keeps a bounded number of traces open on endless input', () => {
    const { r, done } = replayer({ maxOpenTraces: 100 });
    // rootless traces (remote parents) never complete by themselves
    for (let i = 0; i < 1000; i++) feed(r, agentTrace({ label: `rootless-${i}`, steps: [{ tool: 't', args: {}, result: 1 }] }).slice(0, -1));
    expect(done.length).toBeGreaterThanOrEqual(900);
    r.finish();
    expect(done).toHaveLength(1000);
  });
});
