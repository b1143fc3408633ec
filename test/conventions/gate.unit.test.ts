/**
 * The span gate is a shortcut: it may let through spans no adapter wants, but it must never turn
 * away one that an adapter would claim as a tool call or read a prompt or agent name from.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { customAdapter, defaultAdapters, gateOf } from '../../src/conventions/index.js';
import type { ConventionAdapter, SpanView } from '../../src/conventions/types.js';
import { MODEL_USAGE_KEYS, readModelUsage } from '../../src/conventions/usage.js';

const inHouse = customAdapter({
  toolSpan: { attribute: 'acme.kind', equals: 'tool' },
  toolName: 'acme.tool',
  arguments: 'acme.args',
  promptName: 'acme.prompt',
  agentName: 'acme.agent',
});
const byName = customAdapter({ toolSpan: { spanName: 'tool:' }, toolName: 'acme.tool' });
/** Keys the gate's length and first-character filter must not lose: past its table, non-ASCII first. */
const LONG_KEY = `${'k'.repeat(140)}.kind`;
const unusual = customAdapter({ toolSpan: { attribute: LONG_KEY, equals: 'tool' }, toolName: 'ü.tool', agentName: 'ü.agent' });
const adapters: readonly ConventionAdapter[] = [inHouse, byName, unusual, ...defaultAdapters];

/** Every key some adapter reads, near misses of them (same length, one character off) and ordinary keys. */
const keys = [
  'ai.operationId', 'ai.toolCall.name', 'ai.toolCall.args', 'ai.telemetry.metadata.promptName', 'ai.settings.context.promptName',
  'openinference.span.kind', 'tool.name', 'input.value', 'output.value', 'traceloop.span.kind', 'traceloop.entity.name',
  'traceloop.entity.input', 'traceloop.prompt.key', 'langsmith.span.kind', 'langfuse.observation.type', 'langfuse.observation.prompt.name',
  'langfuse.prompt.name', 'mastra.span.type', 'mastra.metadata.promptName', 'mastra.metadata.agentName', 'gen_ai.operation.name',
  'gen_ai.tool.name', 'gen_ai.tool.call.arguments', 'gen_ai.prompt.name', 'gen_ai.agent.name', 'acme.kind', 'acme.tool', 'acme.prompt',
  'acme.agent', 'gen_ai.provider.name', 'gen_ai.request.model', 'http.request.method', 'server.address', 'url.full', 'x', '',
  'gen_ai.prompt.namf', 'gen_ai.agent.namx', 'acme.kinD', 'traceloop.span.kinx',
  LONG_KEY, `${'k'.repeat(141)}.kind`, 'ü.tool', 'ü.agent', 'ü.agenx',
];
const values = ['execute_tool', 'chat', 'tool', 'TOOL', 'tool_call', 'AGENT', 'x', 'support-v2', '{"q":1}', 42, true];
const names = ['execute_tool search', 'execute_tool', 'ai.toolCall', 'tool:search', 'tool', 'POST', 'chat gpt-4.1', '', 'e', 'a'];

const spanView: fc.Arbitrary<SpanView> = fc.record({
  name: fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 14 })),
  attributes: fc.dictionary(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...keys) }, fc.string({ maxLength: 24 })), fc.constantFrom(...values), {
    maxKeys: 8,
  }),
});

function wants(a: ConventionAdapter, span: SpanView): boolean {
  return a.isToolSpan(span) || a.promptName?.(span) !== undefined || a.agentName?.(span) !== undefined;
}

describe('span gate', () => {
  const gate = gateOf(adapters);

  it('exists for the built-in and mapped adapters', () => {
    expect(gate).toBeDefined();
  });

  it('never turns away a span an adapter claims or names', () => {
    fc.assert(
      fc.property(spanView, (span) => {
        const mask = gate?.test(span) ?? 0;
        adapters.forEach((a, i) => {
          if (wants(a, span)) expect(mask & (1 << i), `${a.name} wants ${JSON.stringify(span)}`).not.toBe(0);
        });
        // and the adapters it lets through are those of the mask, in order
        expect(gate?.adaptersOf(mask)).toEqual(adapters.filter((_, i) => (mask & (1 << i)) !== 0));
      }),
      { numRuns: 5000 },
    );
  });

  it('turns away the spans of ordinary work without asking any adapter', () => {
    const http: SpanView = {
      name: 'POST',
      attributes: { 'http.request.method': 'POST', 'server.address': 'api.example.com', 'url.full': 'https://api.example.com/x', 'http.response.status_code': 200 },
    };
    const chat: SpanView = {
      name: 'chat gpt-4.1-mini',
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4.1-mini' },
    };
    expect(gate?.test(http)).toBe(0);
    expect(gate?.test(chat)).toBe(0);
    expect(gate?.test({ name: '', attributes: {} })).toBe(0);
  });

  it('lets through a tool span by its name alone, and by a value of a key', () => {
    const bit = (a: ConventionAdapter): number => 1 << adapters.indexOf(a);
    expect((gate?.test({ name: 'tool:lookup', attributes: {} }) ?? 0) & bit(byName)).not.toBe(0);
    expect((gate?.test({ name: 'x', attributes: { 'acme.kind': 'tool' } }) ?? 0) & bit(inHouse)).not.toBe(0);
    expect((gate?.test({ name: 'x', attributes: { 'acme.kind': 'span' } }) ?? 0) & bit(inHouse)).toBe(0);
  });

  it('finds gate keys built at run time and keys longer than its length slots', () => {
    // a key of 70 characters shares its slot with keys of 6 (70 mod 64), built by joining so that
    // neither string is a literal the engine interned
    const long = ['acme', 'x'.repeat(60), 'kind'].join('.');
    const short = ['acme', 'k'].join('.');
    expect(long.length % 64).toBe(short.length);
    const longKind = customAdapter({ toolSpan: { attribute: long, equals: 'tool' }, toolName: short });
    const shortKind = customAdapter({ toolSpan: { attribute: short, equals: 'tool' }, toolName: long });
    const g = gateOf([longKind, shortKind]);
    const attrs = (key: string): Record<string, string> => ({ [['acme', 'x'.repeat(60), 'kindX'].join('.')]: 'tool', [key.split('').join('')]: 'tool' });
    expect(g?.test({ name: 'x', attributes: attrs(long) })).toBe(1);
    expect(g?.test({ name: 'x', attributes: attrs(short) })).toBe(2);
    expect(g?.test({ name: 'x', attributes: { [long]: 'span' } })).toBe(0);
  });

  it('never leaves out an adapter that reads user messages from the span', () => {
    const said = JSON.stringify([{ role: 'user', content: 'find my order' }]);
    // each dialect's model-call input, and near misses (a kind that is not a model call, a role list without its first entry)
    const inputs: ReadonlyArray<readonly [string, unknown]> = [
      ['gen_ai.input.messages', said],
      ['ai.operationId', 'ai.generateText.doGenerate'],
      ['ai.prompt.messages', said],
      ['ai.prompt', JSON.stringify({ prompt: 'find my order' })],
      ['openinference.span.kind', 'LLM'],
      ['openinference.span.kind', 'TOOL'],
      ['llm.input_messages.0.message.role', 'user'],
      ['llm.input_messages.0.message.content', 'find my order'],
      ['gen_ai.prompt.0.role', 'user'],
      ['gen_ai.prompt.1.role', 'user'],
      ['gen_ai.prompt.0.content', 'find my order'],
      ['langsmith.span.kind', 'llm'],
      ['gen_ai.prompt', said],
      ['langfuse.observation.type', 'generation'],
      ['langfuse.observation.input', said],
      ['gen_ai.operation.name', 'chat'],
    ];
    const userEvent = { name: 'gen_ai.user.message', attributes: { content: 'find my order' } };
    const modelCall: fc.Arbitrary<SpanView> = fc.record({
      name: fc.constantFrom('chat gpt-4.1', 'ai.generateText.doGenerate', 'llm'),
      attributes: fc.subarray([...inputs]).map((pairs) => Object.fromEntries(pairs)),
      events: fc.constantFrom([], [userEvent], [{ name: 'gen_ai.choice' }]),
    });
    fc.assert(
      fc.property(fc.oneof(modelCall, spanView), (span) => {
        gate?.test(span);
        const mask = gate?.userMessageMask ?? 0;
        adapters.forEach((a, i) => {
          if (a.userMessages?.(span) !== undefined) expect(mask & (1 << i), `${a.name} reads user messages from ${JSON.stringify(span)}`).not.toBe(0);
        });
      }),
      { numRuns: 5000 },
    );
    // ordinary spans ask no adapter
    gate?.test({ name: 'chat gpt-4.1-mini', attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 1200 }, events: [] });
    expect(gate?.userMessageMask).toBe(0);
  });

  it('says a span carries no usage key only when no convention reads a token count from it', () => {
    const discriminators: ReadonlyArray<readonly [string, unknown]> = [
      ['ai.operationId', 'ai.generateText.doGenerate'],
      ['openinference.span.kind', 'LLM'],
      ['langsmith.span.kind', 'llm'],
      ['langfuse.observation.type', 'generation'],
      ['gen_ai.operation.name', 'chat'],
      ['ai.usage.cachedInputTokens', 10],
      ['gen_ai.usage.cache_read.input_tokens', 10],
      ['llm.token_count.prompt_details.cache_read', 10],
    ];
    const counts = [...MODEL_USAGE_KEYS.map((k) => [k, 12] as const), ['langfuse.observation.usage_details', '{"input":3,"output":4}'] as const];
    const span: fc.Arbitrary<SpanView> = fc.record({
      name: fc.constantFrom('chat gpt-4.1', 'ai.generateText.doGenerate', 'POST'),
      attributes: fc
        .tuple(fc.subarray([...discriminators]), fc.subarray(counts, { maxLength: 2 }), fc.dictionary(fc.constantFrom(...keys), fc.constantFrom(...values), { maxKeys: 3 }))
        .map(([d, c, rest]) => ({ ...rest, ...Object.fromEntries(d), ...Object.fromEntries(c) })),
    });
    fc.assert(
      fc.property(span, (s) => {
        gate?.test(s);
        if (readModelUsage(s) !== undefined) expect(gate?.usageSeen, JSON.stringify(s)).toBe(true);
        if (!Object.keys(s.attributes).some((k) => MODEL_USAGE_KEYS.includes(k))) expect(gate?.usageSeen).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('span gate, spans of library-call instrumentations', () => {
  const builtIn = gateOf(defaultAdapters);
  const scope = (name: string): { name: string; version: string } => ({ name, version: '1.0.0' });
  const undici = scope('@opentelemetry/instrumentation-undici');
  const http = scope('@opentelemetry/instrumentation-http');
  const app = scope('support-agent');
  const CLIENT = 2;
  const SERVER = 1;
  /** Agent keys no library-call instrumentation writes: put on one here only to see whether its keys are read. */
  const agentKeys = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.agent.name': 'support-bot' };

  it('does not read the keys of a library call, and reads them on every other span', () => {
    const bit = 1 << defaultAdapters.findIndex((a) => a.name === 'gen_ai');
    const at = (instrumentationScope: SpanView['instrumentationScope'], kind?: number): number =>
      builtIn?.test({ name: 'GET', attributes: agentKeys, instrumentationScope, kind }) ?? 0;
    expect(at(undici, CLIENT)).toBe(0);
    expect(at(undici)).toBe(0);
    // the HTTP instrumentation's client spans are library calls; its server spans hold the app's handler
    expect(at(http, CLIENT)).toBe(0);
    expect(at(http, SERVER) & bit).not.toBe(0);
    expect(at(http) & bit).not.toBe(0);
    expect(at(app, CLIENT) & bit).not.toBe(0);
    expect(at(undefined) & bit).not.toBe(0);
    // a span name an adapter claims is still seen
    expect(builtIn?.test({ name: 'execute_tool search', attributes: {}, instrumentationScope: undici, kind: CLIENT }) ?? 0).not.toBe(0);
  });

  it('answers for a library call exactly as for the same span from any other scope, when it carries what such instrumentations write', () => {
    const infraKeys = ['http.request.method', 'url.full', 'server.address', 'server.port', 'db.system.name', 'db.query.text', 'network.peer.address', 'http.response.status_code', 'error.type'];
    const span: fc.Arbitrary<SpanView> = fc.record({
      name: fc.constantFrom('GET', 'POST', 'SELECT orders', 'fs readFile', 'execute_tool search', 'ai.toolCall'),
      attributes: fc.dictionary(fc.constantFrom(...infraKeys), fc.constantFrom(...values), { maxKeys: 6 }),
      events: fc.constantFrom([], [{ name: 'exception' }], [{ name: 'gen_ai.user.message', attributes: { content: 'hi' } }]),
    });
    fc.assert(
      fc.property(span, (s) => {
        const seen = (instrumentationScope: SpanView['instrumentationScope']): unknown[] => {
          const mask = builtIn?.test({ ...s, instrumentationScope, kind: CLIENT });
          return [mask, builtIn?.userMessageMask, builtIn?.usageSeen];
        };
        expect(seen(undici)).toEqual(seen(app));
        expect(seen(http)).toEqual(seen(undefined));
      }),
      { numRuns: 2000 },
    );
  });

  it('decides by the scope name, never by what the scope carried so far', () => {
    // an app's own tracer: hundreds of HTTP-like spans first, then a tool span, which is seen
    const own = scope('support-agent');
    for (let i = 0; i < 500; i++) builtIn?.test({ name: 'GET', attributes: { 'http.request.method': 'GET', 'url.full': `https://x/${i}` }, instrumentationScope: own, kind: CLIENT });
    expect(builtIn?.test({ name: 'search', attributes: agentKeys, instrumentationScope: own, kind: CLIENT })).not.toBe(0);
    // and each scope object is told apart, however many an app makes (the table is bounded)
    for (let i = 0; i < 1000; i++) expect(builtIn?.test({ name: 'GET', attributes: agentKeys, instrumentationScope: scope(i % 2 === 0 ? `app-${i}` : undici.name), kind: CLIENT }) === 0).toBe(i % 2 === 1);
  });

  it('reads every span when an adapter may read keys a library call writes (a custom mapping)', () => {
    const httpTools = customAdapter({ toolSpan: { attribute: 'url.full' }, toolName: 'url.full' });
    const g = gateOf([httpTools, ...defaultAdapters]);
    expect(g?.test({ name: 'GET', attributes: { 'url.full': 'https://tools.example.com/search' }, instrumentationScope: undici, kind: CLIENT })).toBe(1);
    expect((g?.test({ name: 'GET', attributes: agentKeys, instrumentationScope: undici, kind: CLIENT }) ?? 0) & ~1).not.toBe(0);
  });
});
