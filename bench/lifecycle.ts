import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Context, Tracer } from '@opentelemetry/api';
import { acknowledgement, argumentsOfSize, jsonOfSize } from './support/payloads.js';
import { childSpan, pipeline, rootSpan, type Pipeline } from './support/pipeline.js';
import { median, ratio, type Figure } from './support/report.js';
import { compare, type CompareOptions, type Comparison } from './support/side-by-side.js';

/**
 * The span lifecycle (start with attributes, set more, end, export through a batch processor to a
 * no-op exporter) with and without loopwatch, side by side. Each round runs whole traces and
 * exports a batch every `BATCH_SPANS` spans and at its end, so the export step is inside the
 * measured time. Spans carry the
 * attributes their instrumentations write (gen_ai and HTTP semantic conventions).
 */

/** One trace of a workload; `i` varies ids and payloads from trace to trace. */
type TraceShape = (tracer: Tracer, i: number) => void;

function httpSpan(tracer: Tracer, parent: Context, i: number): void {
  childSpan(
    tracer,
    parent,
    'POST',
    {
      'http.request.method': 'POST',
      'url.full': `https://api.example.com/v1/orders/${i % 97}`,
      'server.address': 'api.example.com',
      'server.port': 443,
      'network.protocol.version': '1.1',
      'user_agent.original': 'support-bot/1.4',
    },
    { 'http.response.status_code': 200, 'http.response.body.size': 512 + (i % 100) },
  );
}

function chatSpan(tracer: Tracer, parent: Context, i: number): void {
  childSpan(
    tracer,
    parent,
    'chat gpt-4.1-mini',
    {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4.1-mini',
      'gen_ai.request.temperature': 0.2,
      'gen_ai.request.max_tokens': 1024,
      'server.address': 'api.openai.com',
      'server.port': 443,
    },
    {
      'gen_ai.response.model': 'gpt-4.1-mini-2025-04-14',
      'gen_ai.response.id': `chatcmpl-${i}`,
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'gen_ai.usage.input_tokens': 1200 + (i % 50),
      'gen_ai.usage.output_tokens': 80 + (i % 13),
    },
  );
}

function agentRoot(tracer: Tracer, i: number): ReturnType<typeof rootSpan> {
  return rootSpan(tracer, 'invoke_agent support-bot', {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.provider.name': 'openai',
    'gen_ai.agent.name': 'support-bot',
    'gen_ai.agent.id': 'agent_support_1',
    'gen_ai.prompt.name': `support-v${i % 3}`,
    'gen_ai.conversation.id': `conv_${i}`,
  });
}

function toolSpan(tracer: Tracer, parent: Context, name: string, args: string, result: string, i: number): void {
  childSpan(
    tracer,
    parent,
    `execute_tool ${name}`,
    {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.call.id': `call_${i}`,
      'gen_ai.tool.call.arguments': args,
    },
    { 'gen_ai.tool.call.result': result },
  );
}

/** An HTTP server root and 9 children (chat and HTTP client spans): spans loopwatch must pass over. */
const nonToolTrace: TraceShape = (tracer, i) => {
  const root = rootSpan(tracer, 'POST /api/support', {
    'http.request.method': 'POST',
    'http.route': '/api/support',
    'url.path': '/api/support',
    'url.scheme': 'https',
    'server.address': 'support.example.com',
    'http.response.status_code': 200,
  });
  for (let k = 0; k < 9; k++) {
    if (k % 3 === 0) chatSpan(tracer, root.context, i * 10 + k);
    else httpSpan(tracer, root.context, i * 10 + k);
  }
  root.span.end();
};

/**
 * An agent root and 10 calls of a `write_file` tool with `argBytes` of arguments (the file's
 * content, mostly) and its short acknowledgement as the result, all distinct.
 */
function toolTrace(argBytes: number): TraceShape {
  const args = Array.from({ length: 10 }, (_, k) => argumentsOfSize(argBytes, k));
  const results = Array.from({ length: 10 }, (_, k) => acknowledgement(k, argBytes));
  return (tracer, i) => {
    const root = agentRoot(tracer, i);
    for (let k = 0; k < 10; k++) toolSpan(tracer, root.context, 'write_file', args[k] ?? '', results[k] ?? '', i * 10 + k);
    root.span.end();
  };
}

/**
 * The realistic mix: an agent root, 8 other spans (chat and HTTP) and 1 tool call with 1 KB of
 * arguments: 90 % non-tool spans, 10 % tool spans. The tool writes a file (its acknowledgement is
 * the result), or, with `resultBytes`, answers a search with that many bytes of records.
 */
function mixTrace(resultBytes?: number): TraceShape {
  const args = Array.from({ length: 64 }, (_, k) => argumentsOfSize(1024, k));
  const results = Array.from({ length: 64 }, (_, k) => (resultBytes === undefined ? acknowledgement(k, 1024) : jsonOfSize(resultBytes, k, 'result')));
  return (tracer, i) => {
    const root = agentRoot(tracer, i);
    for (let k = 0; k < 8; k++) {
      if (k % 2 === 0) chatSpan(tracer, root.context, i * 10 + k);
      else httpSpan(tracer, root.context, i * 10 + k);
    }
    toolSpan(tracer, root.context, 'write_file', args[i % 64] ?? '', results[i % 64] ?? '', i);
    root.span.end();
  };
}

/**
 * An agent run as steps: a model call (with usage), then the tool call it asked for, four times,
 * and the model's final call: from the first tool call on, loopwatch reads each model call's
 * usage for what loops cost (the realistic mix has its tool call last, so never does).
 */
function stepsTrace(): TraceShape {
  const args = Array.from({ length: 64 }, (_, k) => argumentsOfSize(1024, k));
  const results = Array.from({ length: 64 }, (_, k) => acknowledgement(k, 1024));
  return (tracer, i) => {
    const root = agentRoot(tracer, i);
    for (let k = 0; k < 4; k++) {
      chatSpan(tracer, root.context, i * 10 + k);
      toolSpan(tracer, root.context, 'write_file', args[(i + k) % 64] ?? '', results[(i + k) % 64] ?? '', i * 10 + k);
    }
    chatSpan(tracer, root.context, i * 10 + 9);
    root.span.end();
  };
}

/** The workloads, for profiling one outside the comparison. */
export const shapes = { nonToolTrace, toolTrace, mixTrace, stepsTrace };

/**
 * Spans a batch is exported at: the batch processor's default batch size. An app's event loop
 * turns between its spans, so the batch processor exports each batch as it fills and its queue
 * stays short. A round of the bench is one synchronous loop, where that export could never run:
 * it is started here instead, every `BATCH_SPANS` spans. Holding a whole round of spans (15 000)
 * until the end would make every young-generation collection copy all of them, a cost no app
 * pays, paid by both sides and varying from round to round with where collections fall (it
 * buried the difference in noise: quartiles of ±15 % instead of ±3 %).
 */
const BATCH_SPANS = 512;

function contender(name: string, p: Pipeline, shape: TraceShape, tracesPerRound: number, spansPerTrace: number): { name: string; round: () => Promise<void> } {
  const tracesPerBatch = Math.max(1, Math.floor(BATCH_SPANS / spansPerTrace));
  let i = 0;
  return {
    name,
    round: async () => {
      for (let n = 1; n <= tracesPerRound; n++) {
        shape(p.tracer, i++);
        if (n % tracesPerBatch === 0) await p.flush();
      }
      await p.flush();
    },
  };
}

export interface LifecycleOptions {
  readonly quick: boolean;
}

export const MIX_TARGET = 1.1;

interface Scenario {
  readonly name: string;
  readonly shape: () => TraceShape;
  readonly traces: number;
  /** Spans in one trace of the shape. */
  readonly spans: number;
  readonly pairs: number;
  /** Fresh processes the comparison runs in (see `lifecycle`). */
  readonly processes: number;
  /** Compare a processor that does nothing instead of loopwatch: the floor of any processor. */
  readonly idle?: boolean;
  readonly target?: number;
}

// Rounds of tens of milliseconds: long enough for the collector's work to average out.
const SCENARIOS: readonly Scenario[] = [
  { name: 'realistic mix (90 % non-tool; 10 % tool: write_file, 1 KB arguments)', shape: () => mixTrace(), traces: 1500, spans: 10, pairs: 30, processes: 7, target: MIX_TARGET },
  { name: 'realistic mix, an idle span processor instead of loopwatch (the floor)', shape: () => mixTrace(), traces: 1500, spans: 10, pairs: 30, processes: 3, idle: true },
  { name: 'realistic mix, the tool answering 1 KB of search results', shape: () => mixTrace(1024), traces: 1500, spans: 10, pairs: 30, processes: 3 },
  { name: 'agent steps: model call (usage) then tool call, 4 steps (40 % tool spans)', shape: () => stepsTrace(), traces: 1500, spans: 10, pairs: 30, processes: 3 },
  { name: 'non-tool spans (10-span traces)', shape: () => nonToolTrace, traces: 1500, spans: 10, pairs: 30, processes: 3 },
  { name: 'tool spans, 200 B arguments', shape: () => toolTrace(200), traces: 1000, spans: 11, pairs: 30, processes: 3 },
  { name: 'tool spans, 10 KB arguments', shape: () => toolTrace(10 * 1024), traces: 200, spans: 11, pairs: 20, processes: 3 },
  { name: 'tool spans, 1 MB arguments', shape: () => toolTrace(1 << 20), traces: 2, spans: 11, pairs: 15, processes: 3 },
];

function tracesPerRound(s: Scenario, quick: boolean): number {
  return Math.max(1, Math.round(s.traces * (quick ? 0.03 : 1)));
}

/** One scenario compared in this process: the median of its paired rounds, with quartiles. */
export async function measureScenario(index: number, quick: boolean): Promise<Comparison> {
  const s = SCENARIOS[index];
  if (s === undefined) throw new Error(`no lifecycle scenario ${index}`);
  const bare = pipeline(false);
  const withLoops = pipeline(s.idle === true ? 'idle' : true);
  const shape = s.shape();
  const traces = tracesPerRound(s, quick);
  const options: CompareOptions = { warmupRounds: quick ? 2 : 15, pairs: quick ? 3 : s.pairs };
  const r = await compare(contender('bare', bare, shape, traces, s.spans), contender('loopwatch', withLoops, shape, traces, s.spans), options);
  await Promise.all([bare.shutdown(), withLoops.shutdown()]);
  return r;
}

/**
 * Each scenario runs in several fresh processes, one after the other, and the figure is the
 * median of their medians. Within one process the rounds are paired and alternate, so drift
 * cancels; but each process compiles the SDK and loopwatch its own way (what V8 inlines), so
 * process medians of one build differ by a few hundredths (1.12× to 1.17× for the mix, in one
 * sitting). `--quick` measures in one process per scenario.
 */
export async function lifecycle(options: LifecycleOptions): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const [index, s] of SCENARIOS.entries()) {
    const runs: Comparison[] = [];
    for (let k = 0; k < (options.quick ? 1 : s.processes); k++) runs.push(inFreshProcess(index, options.quick));
    const medians = runs.map((r) => r.ratio);
    const value = median(medians);
    const traces = tracesPerRound(s, options.quick);
    const spread =
      runs.length === 1
        ? `median of ${runs[0]?.pairs ?? 0} paired rounds of ${traces} traces, IQR ${runs[0]?.p25.toFixed(3)}–${runs[0]?.p75.toFixed(3)}`
        : `median of ${runs.length} processes (each the median of ${runs[0]?.pairs ?? 0} paired rounds of ${traces} traces), process medians ${Math.min(...medians).toFixed(3)}–${Math.max(...medians).toFixed(3)}`;
    figures.push({
      section: 'lifecycle',
      name: s.name,
      value: ratio(value),
      ...(s.target !== undefined ? { target: `≤ ${ratio(s.target)}`, met: value <= s.target } : {}),
      note: spread,
    });
  }
  return figures;
}

const CHILD = fileURLToPath(new URL('./lifecycle-child.ts', import.meta.url));

function inFreshProcess(index: number, quick: boolean): Comparison {
  const args = ['--expose-gc', '--import', 'tsx', CHILD, String(index), ...(quick ? ['--quick'] : [])];
  const out = execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const last = out.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as Comparison;
}
