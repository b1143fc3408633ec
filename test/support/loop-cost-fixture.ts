import { agentTrace, type OtlpSpan } from './otlp.js';

/**
 * The agent runs of test/fixtures/otlp/loop-cost.jsonl (written by its generate.ts), and the
 * token usage of their model calls, which the tests derive their expectations from.
 * What loops cost: five agent runs whose model calls report token usage, each in another dialect,
 * exported together. Prices for it: loop-cost.prices.yaml (gpt-4o, gpt-4o-mini, claude-sonnet-4;
 * the OpenInference run's llama model is deliberately left unpriced).
 *  - support-v2, gen_ai spans (AI SDK v7 style): one search 8 times; the context grows 400
 *    tokens a step and all but the newest part is read from the prompt cache; the root carries
 *    the run's sums (which must not count twice);
 *  - docs-qa-v1, AI SDK v6 spans (ai.generateText.doGenerate, ai.toolCall, the ai.generateText sums);
 *  - triage-v3, OpenInference LLM and TOOL spans: a period-2 cycle, 4 laps, on an unpriced model;
 *  - refund-v1, Langfuse generations and tool observations: the same refund failing 5 times;
 *  - billing-v1, gen_ai: honest work with usage (no loop, no bill).
 */
export const COST_START = Date.parse('2026-11-21T12:00:00Z');
/** Input tokens of step i's model call (0-based); each run's output tokens are constant. */
export const supportIn = (i: number): number => 1500 + 400 * i;
export const SUPPORT_OUT = 60;
export const docsIn = (i: number): number => 2000 + 300 * i;
export const DOCS_OUT = 45;
export const triageIn = (i: number): number => 900 + 150 * i;
export const TRIAGE_OUT = 30;
export const refundIn = (i: number): number => 1100 + 250 * i;
export const REFUND_OUT = 35;

const sums = (n: number, f: (i: number) => number): number => Array.from({ length: n }, (_, i) => f(i)).reduce((a, b) => a + b, 0);

export function loopCostTraces(): Record<'supportLoop' | 'docsLoop' | 'triageCycle' | 'refundFailures' | 'billingHonest', OtlpSpan[]> {
  const supportLoop = agentTrace({
    label: 'cost-support',
    prompt: 'support-v2',
    agent: 'support-bot',
    startMs: COST_START,
    steps: Array.from({ length: 8 }, () => ({ tool: 'search_orders', args: { customer_id: 'C-77' }, result: { orders: [] } })),
    model: (i) => ({
      name: 'chat gpt-4o',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.usage.input_tokens': supportIn(i),
        'gen_ai.usage.output_tokens': SUPPORT_OUT,
        'gen_ai.usage.cache_read.input_tokens': i === 0 ? 0 : supportIn(i - 1),
      },
    }),
    root: (n) => ({
      name: 'invoke_agent support-bot',
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'support-bot',
        'gen_ai.prompt.name': 'support-v2',
        'gen_ai.usage.input_tokens': sums(n, supportIn),
        'gen_ai.usage.output_tokens': SUPPORT_OUT * n,
      },
    }),
  });
  const docsMeta = { 'ai.telemetry.functionId': 'docs-bot', 'ai.telemetry.metadata.promptName': 'docs-qa-v1' };
  const docsLoop = agentTrace({
    label: 'cost-docs',
    startMs: COST_START + 200,
    steps: Array.from({ length: 6 }, () => ({ tool: 'lookup_docs', args: { topic: 'warranty' }, result: { pages: [] } })),
    model: (i) => ({
      name: 'ai.generateText.doGenerate',
      attributes: {
        ...docsMeta,
        'ai.operationId': 'ai.generateText.doGenerate',
        'ai.model.id': 'claude-sonnet-4-5',
        'gen_ai.request.model': 'claude-sonnet-4-5',
        'ai.response.model': 'claude-sonnet-4-5-20250929',
        'ai.usage.inputTokens': docsIn(i),
        'ai.usage.outputTokens': DOCS_OUT,
        'ai.usage.cachedInputTokens': i === 0 ? 0 : docsIn(i - 1),
        'gen_ai.usage.input_tokens': docsIn(i),
        'gen_ai.usage.output_tokens': DOCS_OUT,
      },
    }),
    tool: (c, i) => ({
      name: 'ai.toolCall',
      attributes: { ...docsMeta, 'ai.operationId': 'ai.toolCall', 'ai.toolCall.name': c.tool, 'ai.toolCall.id': `call_${i}`, 'ai.toolCall.args': JSON.stringify(c.args), 'ai.toolCall.result': JSON.stringify(c.result) },
    }),
    root: (n) => ({
      name: 'ai.generateText',
      attributes: { ...docsMeta, 'ai.operationId': 'ai.generateText', 'ai.model.id': 'claude-sonnet-4-5', 'ai.usage.inputTokens': sums(n, docsIn), 'ai.usage.outputTokens': DOCS_OUT * n },
    }),
  });
  const triageLap = [
    { tool: 'open_ticket', args: { id: 'T-9' }, result: { id: 'T-9', state: 'closed' } },
    { tool: 'assign_ticket', args: { id: 'T-9', to: 'tier-2' }, result: { ok: false, reason: 'ticket is closed' } },
  ];
  const triageCycle = agentTrace({
    label: 'cost-triage',
    startMs: COST_START + 400,
    steps: [...triageLap, ...triageLap, ...triageLap, ...triageLap],
    model: (i) => ({
      name: 'ChatOpenAI',
      attributes: { 'openinference.span.kind': 'LLM', 'llm.model_name': 'llama-3.1-70b-instruct', 'llm.token_count.prompt': triageIn(i), 'llm.token_count.completion': TRIAGE_OUT, 'llm.token_count.total': triageIn(i) + TRIAGE_OUT },
    }),
    tool: (c) => ({
      name: c.tool,
      attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': c.tool, 'input.value': JSON.stringify(c.args), 'output.value': JSON.stringify(c.result) },
    }),
    root: () => ({ name: 'triage-agent', attributes: { 'openinference.span.kind': 'AGENT', metadata: JSON.stringify({ prompt_name: 'triage-v3' }) } }),
  });
  const refundFailures = agentTrace({
    label: 'cost-refund',
    startMs: COST_START + 600,
    steps: Array.from({ length: 5 }, () => ({ tool: 'issue_refund', args: { order: 'A-1', amount: 30 }, error: 'payment amount does not add up' })),
    model: (i) => ({
      name: 'llm',
      attributes: {
        'langfuse.observation.type': 'generation',
        'langfuse.observation.model.name': 'gpt-4o-mini',
        'langfuse.observation.usage_details': JSON.stringify({ input: refundIn(i), output: REFUND_OUT }),
      },
    }),
    tool: (c) => ({
      name: c.tool,
      attributes: { 'langfuse.observation.type': 'tool', 'langfuse.observation.input': JSON.stringify(c.args), 'langfuse.observation.level': 'ERROR', 'langfuse.observation.status_message': c.error },
    }),
    root: () => ({ name: 'refund-agent', attributes: { 'langfuse.observation.type': 'agent', 'langfuse.observation.prompt.name': 'refund-v1' } }),
  });
  const billingHonest = agentTrace({
    label: 'cost-billing',
    prompt: 'billing-v1',
    agent: 'billing-bot',
    startMs: COST_START + 800,
    steps: [
      { tool: 'get_invoice', args: { id: 'inv-1' }, result: { total: 120 } },
      { tool: 'get_invoice', args: { id: 'inv-2' }, result: { total: 80 } },
      { tool: 'send_reply', args: { text: '200 EUR' }, result: 'ok' },
    ],
    model: (i) => ({ name: 'chat gpt-4o', attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 1200 + 100 * i, 'gen_ai.usage.output_tokens': 40 } }),
  });
  return { supportLoop, docsLoop, triageCycle, refundFailures, billingHonest };
}
