import { TraceReplayer } from '../../src/replay/trace-replay.js';
import { defaultAdapters } from '../../src/conventions/index.js';
import type { LoopwatchConfig } from '../../src/detector/config/index.js';
import { LoopEngine } from '../../src/detector/engine.js';
import type { LoopDetection } from '../../src/detector/types.js';
import type { Corpus } from './runs.js';

/**
 * loopwatch as `loopwatch scan` runs it: the same engine, adapters and trace replayer, fed the
 * decoded spans in file order. Run from the sources (tsx), not the build: the eval scores the
 * rules in the working tree, which is what a rule change is judged on, without a build first.
 */
export function loopwatchDetections(corpus: Corpus, config: LoopwatchConfig = {}): Map<string, LoopDetection[]> {
  const engine = new LoopEngine(config);
  const out = new Map<string, LoopDetection[]>();
  const replayer = new TraceReplayer({
    engine,
    adapters: defaultAdapters,
    onTrace: (t) => out.set(t.traceId, [...t.detections]),
  });
  for (const span of corpus.spans) replayer.add(span);
  replayer.finish();
  return out;
}

/** A run's detections as one comparable string: call, kind, rule, level and count of each, sorted. */
export function describeDetections(ds: readonly LoopDetection[]): string {
  return ds
    .map((d) => `${d.callIndex}:${d.kind}/${d.rule}:${d.level}:${d.count}`)
    .sort()
    .join(' ');
}
