import { diag, DiagLogLevel } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { customAdapter, defaultAdapters } from '../../src/index.js';
import { LoopEngine, buildToolCall, genAiAdapter, openInferenceAdapter, aiSdkAdapter } from '../../src/advanced.js';
import { findToolAdapter } from '../../src/conventions/index.js';
import type { SpanView, ToolCallFields } from '../../src/conventions/types.js';

const engine = new LoopEngine();
const hashes = (f: ToolCallFields | undefined) => {
  const c = buildToolCall(engine, { toolName: f?.toolName ?? '?', arguments: f?.arguments, result: f?.result, ...(f?.error ? { error: f.error } : {}), startTime: 0, endTime: 1, batch: 'b', callIndex: 1 });
  return { args: c.argsHash, outcome: c.outcome };
};
const span = (name: string, attributes: Record<string, unknown>, extra: Partial<SpanView> = {}): SpanView => ({ name, attributes, ...extra });

afterEach(() => diag.disable());

describe('gen_ai adapter: string and structured values', () => {
  it('JSON-string and structured (SDK 3.x) arguments and results fingerprint the same', () => {
    const asString = genAiAdapter.readToolCall(
      span('execute_tool search', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"b":2,"a":{"q":"x"}}', 'gen_ai.tool.call.result': '{"hits":[1,2]}' }),
    );
    const structured = genAiAdapter.readToolCall(
      span('execute_tool search', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': { a: { q: 'x' }, b: 2 }, 'gen_ai.tool.call.result': { hits: [1, 2] } }),
    );
    expect(structured?.arguments).toEqual({ a: { q: 'x' }, b: 2 });
    expect(hashes(structured)).toEqual(hashes(asString));
    const other = genAiAdapter.readToolCall(span('execute_tool search', { 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': { a: { q: 'y' }, b: 2 } }));
    expect(hashes(other).args).not.toEqual(hashes(asString).args);
  });

  it('takes the tool name from the span name when gen_ai.tool.name is missing, and degrades to name + outcome', () => {
    const f = genAiAdapter.readToolCall(span('execute_tool read_file', { 'gen_ai.operation.name': 'execute_tool' }));
    expect(f).toEqual({ toolName: 'read_file' });
    expect(genAiAdapter.readToolCall(span('execute_tool ', { 'gen_ai.operation.name': 'execute_tool' }))).toBeUndefined();
  });

  it('reads error.message when the exception event is missing', () => {
    const f = genAiAdapter.readToolCall(span('execute_tool x', { 'error.type': 'HTTPError', 'error.message': '503 from upstream', 'gen_ai.tool.call.result': 'partial' }));
    expect(f?.error).toEqual({ type: 'HTTPError', message: '503 from upstream' });
    // what the failing call returned is part of what the failure said
    expect(f?.result).toBe('partial');
  });
});

describe('AI SDK adapter', () => {
  const base = { 'ai.operationId': 'ai.toolCall', 'ai.toolCall.name': 'search', 'ai.toolCall.args': '{"q":1}' };
  it('prompt name: metadata.promptName, then Langfuse JSON, then v7 runtime context; a bad JSON is no name', () => {
    expect(aiSdkAdapter.promptName?.(span('ai.toolCall', { ...base, 'ai.telemetry.metadata.promptName': 'a', 'ai.telemetry.metadata.langfusePrompt': '{"name":"b"}' }))).toBe('a');
    expect(aiSdkAdapter.promptName?.(span('ai.toolCall', { ...base, 'ai.telemetry.metadata.langfusePrompt': '{"name":"b","version":2}' }))).toBe('b');
    expect(aiSdkAdapter.promptName?.(span('ai.toolCall', { ...base, 'ai.telemetry.metadata.langfusePrompt': '{not json' }))).toBeUndefined();
    expect(aiSdkAdapter.promptName?.(span('invoke_agent m', { 'ai.settings.context.promptName': 'c' }))).toBe('c');
  });
  it('agent name: metadata.agentName, else functionId, only on AI SDK spans', () => {
    expect(aiSdkAdapter.agentName?.(span('ai.toolCall', { ...base, 'ai.telemetry.functionId': 'fn' }))).toBe('fn');
    expect(aiSdkAdapter.agentName?.(span('ai.toolCall', { ...base, 'ai.telemetry.functionId': 'fn', 'ai.telemetry.metadata.agentName': 'bot' }))).toBe('bot');
    expect(aiSdkAdapter.agentName?.(span('x', { 'ai.telemetry.functionId': 'fn' }))).toBeUndefined();
  });
  it('falls back on gen_ai keys once a normalising processor has rewritten the span (no onEnding SDKs)', () => {
    const f = aiSdkAdapter.readToolCall(span('execute_tool search', { 'ai.operationId': 'ai.toolCall', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"q":1}', 'gen_ai.tool.call.result': '"r"' }));
    expect(f).toMatchObject({ toolName: 'search', arguments: '{"q":1}', result: '"r"' });
  });
});

describe('OpenInference adapter', () => {
  it('never takes a JSON schema in tool.parameters for the arguments', () => {
    const schema = '{"type":"object","properties":{"q":{"type":"string"}}}';
    const a = openInferenceAdapter.readToolCall(span('search', { 'openinference.span.kind': 'TOOL', 'tool.name': 'search', 'tool.parameters': schema }));
    expect(a?.arguments).toBeUndefined();
    const b = openInferenceAdapter.readToolCall(span('search', { 'openinference.span.kind': 'TOOL', 'tool.name': 'search', 'tool.parameters': '{"q":"x"}' }));
    expect(b?.arguments).toBe('{"q":"x"}');
  });

  it('unwraps LangChain ToolMessages: fresh tool_call_ids do not hide a repeat, status error is a failure', () => {
    const message = (id: string, status: string, content: string) =>
      JSON.stringify({ output: { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'ToolMessage'], kwargs: { status, content, tool_call_id: id, name: 'search' } } });
    const read = (v: string) => openInferenceAdapter.readToolCall(span('search', { 'openinference.span.kind': 'TOOL', 'tool.name': 'search', 'input.value': 'x', 'output.value': v }));
    const one = read(message('call_1', 'success', '{"hits":[]}'));
    const two = read(message('call_2', 'success', '{"hits":[]}'));
    expect(one?.result).toBe('{"hits":[]}');
    expect(hashes(one)).toEqual(hashes(two));
    const failed = read(message('call_3', 'error', 'Error: rate limited'));
    expect(failed?.error).toEqual({ message: 'Error: rate limited' });
    expect(failed?.result).toBeUndefined();
    // anything else is left alone
    expect(read('{"ToolMessage":"is just a word here"}')?.result).toBe('{"ToolMessage":"is just a word here"}');
  });
});

describe('late binding: the adapter is chosen again when the span ends', () => {
  it('a span that looked like plain gen_ai at start and carries Traceloop content at end is read as Traceloop', () => {
    const start = span('execute_tool search', { 'gen_ai.operation.name': 'execute_tool' });
    const chosen = findToolAdapter(defaultAdapters, start);
    expect(chosen?.name).toBe('gen_ai');
    const end = span('execute_tool search', { 'gen_ai.operation.name': 'execute_tool', 'traceloop.entity.name': 'search', 'traceloop.entity.input': '{"args":["x"]}', 'traceloop.entity.output': '"y"' });
    expect(chosen?.readToolCall(end)).toMatchObject({ toolName: 'search', arguments: '{"args":["x"]}', result: '"y"' });
  });
  it('keeps the start adapter when nothing claims the span at end', () => {
    const chosen = findToolAdapter(defaultAdapters, span('execute_tool a', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'a' }));
    expect(chosen?.readToolCall(span('renamed', { 'gen_ai.tool.name': 'a' }))?.toolName).toBe('a');
  });
});

describe('customAdapter', () => {
  it('maps in-house attributes, with key lists, functions and span-name matchers', () => {
    const a = customAdapter({ toolSpan: { spanName: /^tool:/ }, toolName: (s) => s.name.slice(5), arguments: ['x.args', 'x.input'], result: 'x.out', error: 'x.error', callId: 'x.id' });
    expect(a.readToolCall(span('tool:grep', { 'x.input': '{"p":1}', 'x.out': 'ok', 'x.id': 'c9' }))).toEqual({ toolName: 'grep', arguments: '{"p":1}', result: 'ok', callId: 'c9' });
    expect(a.readToolCall(span('tool:grep', { 'x.args': '{}', 'x.out': 'ok', 'x.error': 'disk full' }))?.error).toEqual({ message: 'disk full' });
    expect(a.isToolSpan(span('tool:grep', {}))).toBe(true);
    expect(a.isToolSpan(span('grep', {}))).toBe(false);
    const b = customAdapter({ toolSpan: { attribute: 'k', equals: ['tool', 'mcp'] } });
    expect([b.isToolSpan(span('s', { k: 'mcp' })), b.isToolSpan(span('s', { k: 'llm' }))]).toEqual([true, false]);
    expect(b.readToolCall(span('fallback-name', { k: 'tool' }))?.toolName).toBe('fallback-name');
  });

  it('contains a throwing mapping (the value counts as absent) and tells diag once', () => {
    const errors: string[] = [];
    diag.setLogger({ error: (...m: unknown[]) => errors.push(m.join(' ')), warn: () => undefined, info: () => undefined, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.ERROR);
    const a = customAdapter({
      name: 'acme',
      toolSpan: () => {
        throw new Error('matcher broke');
      },
      arguments: () => {
        throw new Error('args broke');
      },
    });
    expect(a.isToolSpan(span('x', {}))).toBe(false);
    expect(a.readToolCall(span('x', {}))).toEqual({ toolName: 'x' });
    expect(a.isToolSpan(span('x', {}))).toBe(false);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("adapter 'acme'");
  });

  it('rejects a matcher it cannot use when it is built, not inside a span hook', () => {
    expect(() => customAdapter({ toolSpan: {} as never })).toThrow(TypeError);
  });
});
