import { LoopEngine, type ToolCall, type TraceDetector } from '../dist/index.js';
import { childSpan, pipeline, rootSpan } from './support/pipeline.js';
import { ratio, type Figure } from './support/report.js';
import { compare, type Contender } from './support/side-by-side.js';

/**
 * The engine's cost per tool call as the trace's history fills (8, 32, the default 128
 * remembered calls, and beyond, when the oldest are overwritten), side by side with the
 * lifecycle of one bare span: how many bare spans one engine step costs. Calls carry ready hashes
 * (fingerprinting is measured with the lifecycle), distinct arguments and results over 6 tools,
 * as honest work does, so no loop fires and every rule walks its whole streak.
 */

const TOOLS = ['search', 'read_file', 'write_file', 'run_tests', 'list_dir', 'fetch_url'];

function call(i: number): ToolCall {
  const start = 1_000 + i * 10;
  return {
    toolName: TOOLS[i % TOOLS.length] ?? 'search',
    argsHash: (i * 2654435761) % 2 ** 52,
    outcome: { ok: true, resultHash: (i * 40503 + 17) % 2 ** 52, informative: true },
    startTime: start,
    endTime: start + 3,
    batch: `b${i}`,
    callIndex: i + 1,
  };
}

/** Each round records `calls` calls, spread over detectors that already remember `depth` calls. */
function engineContender(engine: LoopEngine, depth: number, calls: number): Contender {
  const perTrace = 8;
  const prefix = Array.from({ length: depth }, (_, i) => call(i));
  const measured = Array.from({ length: perTrace }, (_, k) => call(depth + k));
  let detectors: TraceDetector[] = [];
  let t = 0;
  return {
    name: `engine at ${depth}`,
    prepare: () => {
      detectors = [];
      for (let n = 0; n < calls / perTrace; n++) {
        const d = engine.createTrace(`t${t++}`);
        for (const c of prefix) d.record(c, true);
        detectors.push(d);
      }
    },
    round: () => {
      for (const d of detectors) for (const c of measured) d.record(c, true);
    },
  };
}

export async function engineFigures(options: { quick: boolean }): Promise<Figure[]> {
  const engine = new LoopEngine();
  const bare = pipeline(false);
  const spans = options.quick ? 200 : 4_000;
  let i = 0;
  // the lifecycle of `spans` bare spans: roots of 10-span traces and their children, exported
  const bareSpans: Contender = {
    name: 'bare spans',
    round: async () => {
      for (let n = 0; n < spans / 10; n++) {
        const root = rootSpan(bare.tracer, 'POST /x', { 'http.request.method': 'POST', 'url.path': '/x' });
        for (let k = 0; k < 9; k++) childSpan(bare.tracer, root.context, 'GET', { 'http.request.method': 'GET', 'url.full': `https://x/${i++}` }, { 'http.response.status_code': 200 });
        root.span.end();
      }
      await bare.flush();
    },
  };
  const figures: Figure[] = [];
  for (const depth of [0, 8, 32, 128, 512]) {
    // as many engine calls per round as bare spans: the ratio is per call, per span
    const r = await compare(bareSpans, engineContender(engine, depth, spans), { warmupRounds: options.quick ? 1 : 5, pairs: options.quick ? 3 : 20 });
    const remembered = Math.min(depth, engine.config.historySize);
    figures.push({
      section: 'engine',
      name:
        depth === 0
          ? 'engine, per call: the first 8 calls of a trace'
          : `engine, per call: ${remembered} calls remembered${depth > engine.config.historySize ? ` (after ${depth}: history full)` : ''}`,
      value: `${ratio(r.ratio)} a bare span`,
      note: `one recorded call ÷ one bare span lifecycle; median of ${r.pairs} paired rounds, IQR ${r.p25.toFixed(3)}–${r.p75.toFixed(3)}`,
    });
  }
  await bare.shutdown();
  return figures;
}
