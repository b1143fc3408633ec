import { context, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';

/** One tool call of a scripted agent run. `error` makes it a failed call (span status ERROR). */
export interface ToolStep {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly result?: unknown;
  readonly error?: { readonly type: string; readonly message: string };
}

export interface RunSpec {
  readonly agent: string;
  /** gen_ai.prompt.name on the invoke_agent span; absent for agents without templates. */
  readonly template?: string;
  readonly steps: readonly ToolStep[];
  /** The model asked before each step (default: the agent's, see `MODEL_OF`). */
  readonly model?: string;
}

/** Each agent's model: three priced by `E2E_PRICES`, the legacy agent's not. */
export const MODEL_OF: Readonly<Record<string, string>> = {
  'support-agent': 'gpt-4o',
  'coding-agent': 'claude-sonnet-4-5',
  'research-agent': 'gpt-4o-mini',
  'legacy-agent': 'llama-3-70b',
};

/** Prices (USD per million tokens) the e2e agents run with: example figures, not list prices. */
export const E2E_PRICES = {
  'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'claude-sonnet-4*': { input: 3, output: 15, cachedInput: 0.3 },
};

/** Usage of the model call before step i (0-based): the context grows with every step, most of it cached. */
export function modelUsage(i: number): { input: number; output: number; cacheRead: number } {
  const input = 1200 + 150 * i;
  return { input, output: 20 + 3 * i, cacheRead: i === 0 ? 0 : 1200 + 150 * (i - 1) };
}

/** What one run put on the wire: the test's truth for tool calls and sampled traces. */
export interface RunRecord {
  readonly traceId: string;
  readonly template: string | undefined;
  /** Every span id of the trace, root included. */
  readonly spanIds: readonly string[];
  /** Tool name of each execute_tool span, in order. */
  readonly toolCalls: readonly string[];
  readonly hasError: boolean;
}

/**
 * Span times: now, but never the same millisecond twice. A real model call takes seconds; with
 * the SDK's own clock these instant runs put a model call, the tool call it asked for and the
 * next model call in one millisecond, where only the order spans reach the collector can order
 * them, and concurrent exports (a provider's forceFlush sends its batches at once) reach it in
 * any order. Whole milliseconds apart, the export orders them as the live processor saw them.
 */
let lastMs = 0;
const tick = (): number => (lastMs = Math.max(Date.now(), lastMs + 1));

/**
 * Emits one agent run the way gen_ai instrumentations do: an `invoke_agent` root span with the
 * prompt template; per step, the `chat` span of the model call that asked for it (with its token
 * usage) and one `execute_tool` child with JSON arguments and result.
 */
export function emitRun(tracer: Tracer, spec: RunSpec): RunRecord {
  const root = tracer.startSpan(`invoke_agent ${spec.agent}`, {
    startTime: tick(),
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': spec.agent,
      ...(spec.template !== undefined ? { 'gen_ai.prompt.name': spec.template } : {}),
    },
  });
  const parent = trace.setSpan(context.active(), root);
  const spanIds = [root.spanContext().spanId];
  let hasError = false;
  const model = spec.model ?? MODEL_OF[spec.agent] ?? 'gpt-4o';
  for (const [i, step] of spec.steps.entries()) {
    const usage = modelUsage(i);
    const chat = tracer.startSpan(
      `chat ${model}`,
      {
        startTime: tick(),
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': model,
          'gen_ai.usage.input_tokens': usage.input,
          'gen_ai.usage.output_tokens': usage.output,
          'gen_ai.usage.cache_read.input_tokens': usage.cacheRead,
        },
      },
      parent,
    );
    spanIds.push(chat.spanContext().spanId);
    chat.end(tick());
    const span = tracer.startSpan(
      `execute_tool ${step.tool}`,
      {
        startTime: tick(),
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': step.tool,
          'gen_ai.tool.call.arguments': JSON.stringify(step.args),
        },
      },
      parent,
    );
    if (step.error) {
      hasError = true;
      span.setAttribute('error.type', step.error.type);
      span.setStatus({ code: SpanStatusCode.ERROR, message: step.error.message });
    } else {
      span.setAttribute('gen_ai.tool.call.result', JSON.stringify(step.result ?? null));
    }
    spanIds.push(span.spanContext().spanId);
    span.end(tick());
  }
  root.end(tick());
  return { traceId: root.spanContext().traceId, template: spec.template, spanIds, toolCalls: spec.steps.map((s) => s.tool), hasError };
}

// --- Run shapes -------------------------------------------------------------------------------

/** The same call with the same outcome, `times` times: the plainest loop. */
export function repeatedCall(agent: string, template: string | undefined, tool: string, times: number, topic: string): RunSpec {
  const step: ToolStep = { tool, args: { query: topic, limit: 5 }, result: { hits: [], note: `nothing about ${topic}` } };
  return { agent, ...(template !== undefined ? { template } : {}), steps: Array.from({ length: times }, () => step) };
}

/** The same call failing again and again with changing error text. */
export function failingCall(agent: string, template: string, tool: string, times: number): RunSpec {
  return {
    agent,
    template,
    steps: Array.from({ length: times }, (_, i) => ({
      tool,
      args: { suite: 'unit', filter: 'checkout' },
      error: { type: 'TestFailure', message: `3 tests failed (run ${i + 1}, ${100 + i * 7} ms)` },
    })),
  };
}

/** A and B alternating with the same arguments and results: a period-2 cycle. */
export function pingPong(agent: string, template: string, toolA: string, toolB: string, periods: number): RunSpec {
  const a: ToolStep = { tool: toolA, args: { path: 'src/app.ts' }, result: { content: 'export const x = 1;' } };
  const b: ToolStep = { tool: toolB, args: { path: 'src/app.ts', text: 'export const x = 1;' }, result: { ok: false, reason: 'no change' } };
  return { agent, template, steps: Array.from({ length: periods }, () => [a, b]).flat() };
}

/** Honest work: pagination, every call different. */
export function paginated(agent: string, template: string | undefined, tool: string, pages: number): RunSpec {
  return {
    agent,
    ...(template !== undefined ? { template } : {}),
    steps: Array.from({ length: pages }, (_, i) => ({ tool, args: { query: 'refund policy', page: i + 1 }, result: { items: [`doc-${i * 10}`, `doc-${i * 10 + 1}`], page: i + 1 } })),
  };
}

/** Honest work with one transient failure: an error trace, not a loop. */
export function retryThenSucceed(agent: string, template: string, tool: string): RunSpec {
  const args = { city: 'Lisbon', units: 'metric' };
  return {
    agent,
    template,
    steps: [
      { tool, args, error: { type: 'UpstreamTimeout', message: 'upstream timed out after 5000 ms' } },
      { tool, args, result: { tempC: 21, sky: 'clear' } },
      { tool: 'send_message', args: { to: 'user', text: '21C and clear' }, result: { delivered: true } },
    ],
  };
}

/**
 * One round of mixed traffic. `round` varies the loop lengths, so totals differ between rounds
 * and an exporter that only kept the last batch would be caught.
 */
export function trafficRound(round: number): RunSpec[] {
  const r = round % 4;
  return [
    repeatedCall('support-agent', 'support-triage', 'search_kb', 3 + r, `refund-${round}`),
    repeatedCall('support-agent', 'support-triage', 'search_kb', 6, `shipping-${round}`),
    paginated('support-agent', 'support-triage', 'search_kb', 3 + r),
    retryThenSucceed('support-agent', 'support-triage', 'get_weather'),
    failingCall('coding-agent', 'code-fix', 'run_tests', 4 + r),
    pingPong('coding-agent', 'code-fix', 'read_file', 'edit_file', 3 + (round % 2)),
    paginated('coding-agent', 'code-fix', 'grep_repo', 2),
    repeatedCall('research-agent', 'research-brief', 'web_search', 5, `llm-loops-${round}`),
    paginated('research-agent', 'research-brief', 'fetch_url', 4),
    // An agent without prompt templates: counted under the connector's default, "unknown".
    repeatedCall('legacy-agent', undefined, 'lookup_order', 3 + (round % 3), `order-${round}`),
  ];
}
