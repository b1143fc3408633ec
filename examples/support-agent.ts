import { context, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';

/**
 * A small customer-support agent, instrumented the way the OpenTelemetry gen_ai conventions say:
 * an `invoke_agent` span per run, a `chat {model}` span per model call with its token usage, an
 * `execute_tool {name}` span per tool call with the arguments and result as attributes. The
 * "model" is scripted (no network): it decides the next tool call from what the tools answered so
 * far, like a real model in a tool loop, and reports the usage a real one would: the whole
 * conversation is sent again at every step, so the input grows; what was sent before is read
 * from the provider's prompt cache.
 */

export interface ToolCallRequest {
  readonly tool: string;
  readonly args: Record<string, unknown>;
}

export interface Turn {
  readonly call: ToolCallRequest;
  readonly result: unknown;
}

/** Decides the next step: a tool call, or the final answer. */
export type Model = (history: readonly Turn[]) => ToolCallRequest | { answer: string };

/** The model the scripted agent "calls", and the snapshot that answers. */
export const MODEL = { request: 'gpt-4o', response: 'gpt-4o-2024-08-06' } as const;

/** Token usage of the model call at a step (`turns` tool results in the conversation so far). */
export function modelUsage(turns: number): { input: number; output: number; cacheRead: number } {
  const context = (n: number): number => 1_400 + 520 * n; // system prompt, tool definitions, then each turn
  return { input: context(turns), output: 42, cacheRead: turns === 0 ? 0 : context(turns - 1) };
}

const ORDERS: Record<string, { status: string; carrier: string }> = {
  'B-2002': { status: 'shipped', carrier: 'DHL' },
};

let requestCounter = 0;

/** The tools. Every answer carries a fresh request id and timestamp, as real APIs' answers do. */
export const tools: Record<string, (args: Record<string, unknown>) => unknown> = {
  search_orders: (args) => {
    const id = String(args.query ?? '');
    const found = ORDERS[id];
    return {
      request_id: `req_${(++requestCounter).toString(36)}${Math.random().toString(36).slice(2, 10)}`,
      served_at: new Date().toISOString(),
      matches: found ? [{ order: id, status: found.status }] : [],
      note: found ? undefined : `No order matches "${id}".`,
    };
  },
  get_tracking: (args) => {
    const order = ORDERS[String(args.order)];
    if (!order) throw new Error(`unknown order ${String(args.order)}`);
    return { carrier: order.carrier, eta: '2026-11-24' };
  },
  send_reply: () => 'ok',
};

/** The stubborn model: the order is not found, and it keeps searching for it the same way. */
export const stubbornModel: Model = (history) => {
  const last = history[history.length - 1];
  if (last && last.call.tool === 'send_reply') return { answer: 'done' };
  return { tool: 'search_orders', args: { query: 'A-1234', limit: 5 } };
};

/** The helpful model: finds the order, fetches tracking, replies. */
export const helpfulModel: Model = (history) => {
  switch (history.length) {
    case 0:
      return { tool: 'search_orders', args: { query: 'B-2002', limit: 5 } };
    case 1:
      return { tool: 'get_tracking', args: { order: 'B-2002' } };
    case 2:
      return { tool: 'send_reply', args: { text: 'Your order ships with DHL, arriving Nov 24.' } };
    default:
      return { answer: 'Your order ships with DHL, arriving Nov 24.' };
  }
};

export interface AgentRunOptions {
  readonly tracer: Tracer;
  readonly model: Model;
  readonly promptName: string;
  readonly maxSteps: number;
  /** Asked for inside the agent span, so it belongs to this run's trace. */
  readonly signalFor: () => AbortSignal;
  readonly onStep?: (step: number, turn: Turn) => void;
}

export interface AgentRunResult {
  readonly steps: number;
  readonly answer?: string;
  readonly stoppedBy?: unknown;
  readonly traceId: string;
}

/** The agent loop: ask the model, run the tool inside an execute_tool span, repeat. */
export async function runAgent(options: AgentRunOptions): Promise<AgentRunResult> {
  const { tracer } = options;
  return tracer.startActiveSpan(
    'invoke_agent support-bot',
    { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support-bot', 'gen_ai.prompt.name': options.promptName } },
    async (root) => {
      const signal = options.signalFor();
      const history: Turn[] = [];
      try {
        for (let step = 1; step <= options.maxSteps; step++) {
          // A real model client takes the signal and rejects once it is aborted.
          signal.throwIfAborted();
          const decision = await callModel(tracer, options.model, history);
          if ('answer' in decision) return { steps: step - 1, answer: decision.answer, traceId: root.spanContext().traceId };
          const turn = executeTool(tracer, decision);
          history.push(turn);
          options.onStep?.(step, turn);
        }
        return { steps: options.maxSteps, traceId: root.spanContext().traceId };
      } catch (e) {
        root.recordException(e as Error);
        root.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error).message });
        return { steps: history.length, stoppedBy: e, traceId: root.spanContext().traceId };
      } finally {
        root.end();
      }
    },
  );
}

/** One model call in a `chat` span with the usage a real provider would report. */
async function callModel(tracer: Tracer, model: Model, history: readonly Turn[]): Promise<ReturnType<Model>> {
  const span = tracer.startSpan(`chat ${MODEL.request}`, { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': MODEL.request } }, context.active());
  await new Promise((r) => setTimeout(r, 5)); // the model thinks
  const decision = model(history);
  const usage = modelUsage(history.length);
  span.setAttributes({
    'gen_ai.response.model': MODEL.response,
    'gen_ai.usage.input_tokens': usage.input,
    'gen_ai.usage.output_tokens': usage.output,
    'gen_ai.usage.cache_read.input_tokens': usage.cacheRead,
  });
  span.end();
  return decision;
}

function executeTool(tracer: Tracer, call: ToolCallRequest): Turn {
  const span = tracer.startSpan(
    `execute_tool ${call.tool}`,
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.tool,
        'gen_ai.tool.call.arguments': JSON.stringify(call.args),
      },
    },
    context.active(),
  );
  return context.with(trace.setSpan(context.active(), span), () => {
    try {
      const fn = tools[call.tool];
      if (!fn) throw new Error(`no such tool ${call.tool}`);
      const result = fn(call.args);
      span.setAttribute('gen_ai.tool.call.result', JSON.stringify(result));
      return { call, result };
    } catch (e) {
      span.recordException(e as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error).message });
      return { call, result: { error: (e as Error).message } };
    } finally {
      span.end();
    }
  });
}
