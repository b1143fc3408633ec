import { ROOT_CONTEXT, SpanKind, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { acknowledgement, argumentsOfSize, jsonOfSize } from './payloads.js';
import { childSpan, instrumentationTracer, rootSpan } from './pipeline.js';

/**
 * The traces the lifecycle bench runs, as instrumentations write them: the span names and
 * attributes of the gen_ai and HTTP semantic conventions, ids made by the SDK, and each child
 * started in its parent's context (the context an app's context manager propagates).
 */

/** One trace of a workload; `i` varies ids and payloads from trace to trace. */
export type TraceShape = (tracer: Tracer, i: number) => void;

export interface Workload {
  readonly shape: TraceShape;
  /** The same trace with its root left open (an agent run in progress), for the memory bench. */
  readonly openTrace: (tracer: Tracer, i: number) => Span;
  /** Spans in one trace. */
  readonly spans: number;
  /** Tool spans in one trace. */
  readonly toolCalls: number;
}

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
    SpanKind.CLIENT,
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
    SpanKind.CLIENT,
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

/** A tool span: arguments when it starts (the model wrote them), the result set after start. */
function toolSpan(tracer: Tracer, parent: Context, name: string, args: string, result: string, i: number): Span {
  return childSpan(
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

/** A workload from a trace that leaves its root open (`run` returns the root). */
function workload(spans: number, toolCalls: number, run: (tracer: Tracer, i: number) => Span): Workload {
  return { spans, toolCalls, openTrace: run, shape: (tracer, i) => run(tracer, i).end() };
}

/** Payload sets rotate over this many traces (distinct inputs, as a stream of traces has). */
const POOL = 64;

/** `POOL` distinct payloads of a tool call: arguments and results by index. */
interface Payloads {
  readonly args: readonly string[];
  readonly results: readonly string[];
}

/** File writes: 1 KB arguments (mostly the content), a short acknowledgement as the result. */
function fileWrites(): Payloads {
  return { args: Array.from({ length: POOL }, (_, k) => argumentsOfSize(1024, k)), results: Array.from({ length: POOL }, (_, k) => acknowledgement(k, 1024)) };
}

/** Searches: 256 B of structured JSON arguments, 512 B of records as the result. */
function smallSearches(): Payloads {
  return { args: Array.from({ length: POOL }, (_, k) => jsonOfSize(256, k, 'args')), results: Array.from({ length: POOL }, (_, k) => jsonOfSize(512, k, 'result')) };
}

/**
 * What agents do (issue 17): an agent root, 44 model calls and 5 tool calls, 50 spans. The agent
 * searches orders four times with different queries (about 1 KB of structured JSON arguments
 * each) and reads one order; every result is about 1 KB of records, set after the span starts.
 * All calls differ, so no loop fires: this is the honest work loopwatch must not slow down.
 *
 * `tiny`: the same traces with arguments and results of a few bytes (still all different), so
 * that what loopwatch adds is everything but reading 10 KB of JSON: the gate, the span reading,
 * the model calls' usage and cost, the rules.
 */
export function agentMix(payloads: 'json' | 'tiny' = 'json'): Workload {
  const tiny = payloads === 'tiny';
  const search = Array.from({ length: POOL * 4 }, (_, k) => (tiny ? `{"q":${k}}` : jsonOfSize(1024, k, 'args')));
  const found = Array.from({ length: POOL * 4 }, (_, k) => (tiny ? `{"n":${k}}` : jsonOfSize(1024, k, 'result')));
  const order = Array.from({ length: POOL }, (_, k) => (tiny ? `{"o":${k}}` : jsonOfSize(1024, 10_000 + k, 'result')));
  // the model calls between tool calls: the agent thinks, calls a tool, reads its answer, ...
  const TOOLS_AFTER = [8, 16, 24, 32, 40];
  const run = (tracer: Tracer, i: number): Span => {
    const root = agentRoot(tracer, i);
    const p = i % POOL;
    let tools = 0;
    for (let k = 0; k < 44; k++) {
      chatSpan(tracer, root.context, i * 50 + k);
      if (TOOLS_AFTER[tools] === k) {
        if (tools < 4) toolSpan(tracer, root.context, 'search_orders', search[p * 4 + tools] ?? '', found[p * 4 + tools] ?? '', i * 50 + 44 + tools);
        else toolSpan(tracer, root.context, 'get_order', tiny ? `{"id":${i}}` : `{"order_id":"ord_${i}","include":["items","shipping"]}`, order[p] ?? '', i * 50 + 49);
        tools++;
      }
    }
    return root.span;
  };
  return workload(50, 5, run);
}

/**
 * The mix the bench ran before issue 17: an agent root, 8 other spans (chat and HTTP) and 1 tool
 * call with 1 KB of arguments (a file write, its acknowledgement as the result): one tool call
 * per trace, never a repeated tool.
 */
export function singleToolMix(): Workload {
  const { args, results } = fileWrites();
  return workload(10, 1, (tracer, i) => {
    const root = agentRoot(tracer, i);
    for (let k = 0; k < 8; k++) {
      if (k % 2 === 0) chatSpan(tracer, root.context, i * 10 + k);
      else httpSpan(tracer, root.context, i * 10 + k);
    }
    toolSpan(tracer, root.context, 'write_file', args[i % POOL] ?? '', results[i % POOL] ?? '', i);
    return root.span;
  });
}

/** An HTTP server root and 9 children (chat and HTTP client spans): spans loopwatch must pass over. */
export function nonToolTraces(): Workload {
  // Each span from the tracer of the instrumentation that makes it in an app: the request's server
  // span from the HTTP instrumentation, the model calls from an OpenAI client instrumentation, the
  // calls they and the app make from the `fetch` (undici) instrumentation.
  let app: Tracer | undefined;
  let scoped = { server: undefined as unknown as Tracer, model: undefined as unknown as Tracer, fetch: undefined as unknown as Tracer };
  const tracersOf = (tracer: Tracer): typeof scoped => {
    if (tracer !== app) {
      app = tracer;
      scoped = {
        server: instrumentationTracer(tracer, '@opentelemetry/instrumentation-http', '0.208.0'),
        model: instrumentationTracer(tracer, '@opentelemetry/instrumentation-openai', '0.6.0'),
        fetch: instrumentationTracer(tracer, '@opentelemetry/instrumentation-undici', '0.19.0'),
      };
    }
    return scoped;
  };
  return workload(10, 0, (tracer, i) => {
    const { server, model, fetch } = tracersOf(tracer);
    const root = rootSpan(
      server,
      'POST /api/support',
      {
        'http.request.method': 'POST',
        'http.route': '/api/support',
        'url.path': '/api/support',
        'url.scheme': 'https',
        'server.address': 'support.example.com',
        'http.response.status_code': 200,
      },
      SpanKind.SERVER,
    );
    for (let k = 0; k < 9; k++) {
      if (k % 3 === 0) chatSpan(model, root.context, i * 10 + k);
      else httpSpan(fetch, root.context, i * 10 + k);
    }
    return root.span;
  });
}

/**
 * Tool spans with no parent at all: a tool server receiving calls without trace context, or an
 * app without a context manager. Each call is a trace of one span.
 */
export function parentlessToolCalls(): Workload {
  const { args, results } = smallSearches();
  // a trace of one span, ended: nothing stays open
  const run = (tracer: Tracer, i: number): Span => toolSpan(tracer, ROOT_CONTEXT, 'search_orders', args[i % POOL] ?? '', results[i % POOL] ?? '', i);
  return { spans: 1, toolCalls: 1, openTrace: run, shape: (tracer, i) => void run(tracer, i) };
}

/**
 * One tool call per trace under an agent root, the root ended after it (`ended`) or never (an
 * abandoned run): abandoned traces stay tracked until `maxTraces` (10 000 by default) pushes the
 * least recently used out, so from then on every new trace evicts one. Beside the ended runs,
 * whose state goes when the root ends, the two rows price an eviction.
 */
export function oneCallTraces(ended: boolean): Workload {
  const { args, results } = smallSearches();
  const run = (tracer: Tracer, i: number): Span => {
    const root = agentRoot(tracer, i);
    toolSpan(tracer, root.context, 'search_orders', args[i % POOL] ?? '', results[i % POOL] ?? '', i);
    return root.span;
  };
  return { spans: 2, toolCalls: 1, openTrace: run, shape: (tracer, i) => (ended ? run(tracer, i).end() : void run(tracer, i)) };
}

/**
 * An agent run as steps: a model call (with usage), then the tool call it asked for, four times,
 * and the model's final call: from the first tool call on, loopwatch reads each model call's
 * usage for what loops cost (issue 16), which the other shapes reach only after their first tool.
 */
export function agentSteps(): Workload {
  const { args, results } = fileWrites();
  return workload(10, 4, (tracer, i) => {
    const root = agentRoot(tracer, i);
    for (let k = 0; k < 4; k++) {
      chatSpan(tracer, root.context, i * 10 + k);
      toolSpan(tracer, root.context, 'write_file', args[(i + k) % POOL] ?? '', results[(i + k) % POOL] ?? '', i * 10 + k);
    }
    chatSpan(tracer, root.context, i * 10 + 9);
    return root.span;
  });
}

/**
 * An agent root and 10 calls of a `write_file` tool with `argBytes` of arguments (the file's
 * content, mostly) and its short acknowledgement as the result, all distinct.
 */
export function writeFileTraces(argBytes: number): Workload {
  const args = Array.from({ length: 10 }, (_, k) => argumentsOfSize(argBytes, k));
  const results = Array.from({ length: 10 }, (_, k) => acknowledgement(k, argBytes));
  return workload(11, 10, (tracer, i) => {
    const root = agentRoot(tracer, i);
    for (let k = 0; k < 10; k++) toolSpan(tracer, root.context, 'write_file', args[k] ?? '', results[k] ?? '', i * 10 + k);
    return root.span;
  });
}
