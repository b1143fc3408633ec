import type { Context, Tracer } from '@opentelemetry/api';
import { acknowledgement, argumentsOfSize, jsonOfSize } from './support/payloads.js';
import { childSpan, pipeline, rootSpan, type Pipeline } from './support/pipeline.js';
import { ratio, type Figure } from './support/report.js';
import { compare, type CompareOptions } from './support/side-by-side.js';

/**
 * The span lifecycle (start with attributes, set more, end, export through a batch processor to a
 * no-op exporter) with and without loopwatch, side by side. Each round runs whole traces and then
 * flushes the batch processor, so the export step is inside the measured time. Spans carry the
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

/** The workloads, for profiling one outside the comparison. */
export const shapes = { nonToolTrace, toolTrace, mixTrace };

function contender(name: string, p: Pipeline, shape: TraceShape, tracesPerRound: number): { name: string; round: () => Promise<void> } {
  let i = 0;
  return {
    name,
    round: async () => {
      for (let n = 0; n < tracesPerRound; n++) shape(p.tracer, i++);
      await p.flush();
    },
  };
}

export interface LifecycleOptions {
  readonly quick: boolean;
  readonly only?: string;
}

export const MIX_TARGET = 1.1;

export async function lifecycle(options: LifecycleOptions): Promise<Figure[]> {
  const cmp = (pairs: number): CompareOptions => ({ warmupRounds: options.quick ? 2 : 15, pairs: options.quick ? 3 : pairs });
  // Rounds of tens of milliseconds: long enough for the collector's work to average out.
  const scenarios: Array<{ name: string; shape: TraceShape; traces: number; pairs: number; target?: number }> = [
    { name: 'realistic mix (90 % non-tool; 10 % tool: write_file, 1 KB arguments)', shape: mixTrace(), traces: 1500, pairs: 50, target: MIX_TARGET },
    { name: 'realistic mix, the tool answering 1 KB of search results', shape: mixTrace(1024), traces: 1500, pairs: 30 },
    { name: 'non-tool spans (10-span traces)', shape: nonToolTrace, traces: 1500, pairs: 30 },
    { name: 'tool spans, 200 B arguments', shape: toolTrace(200), traces: 1000, pairs: 30 },
    { name: 'tool spans, 10 KB arguments', shape: toolTrace(10 * 1024), traces: 200, pairs: 20 },
    { name: 'tool spans, 1 MB arguments', shape: toolTrace(1 << 20), traces: 2, pairs: 15 },
  ];
  const figures: Figure[] = [];
  for (const s of scenarios) {
    if (options.only !== undefined && !s.name.includes(options.only)) continue;
    const bare = pipeline(false);
    const withLoops = pipeline(true);
    const traces = Math.max(1, Math.round(s.traces * (options.quick ? 0.03 : 1)));
    const r = await compare(contender('bare', bare, s.shape, traces), contender('loopwatch', withLoops, s.shape, traces), cmp(s.pairs));
    await Promise.all([bare.shutdown(), withLoops.shutdown()]);
    figures.push({
      section: 'lifecycle',
      name: s.name,
      value: ratio(r.ratio),
      ...(s.target !== undefined ? { target: `≤ ${ratio(s.target)}`, met: r.ratio <= s.target } : {}),
      note: `median of ${r.pairs} paired rounds of ${traces} traces, IQR ${r.p25.toFixed(3)}–${r.p75.toFixed(3)}`,
    });
  }
  return figures;
}
