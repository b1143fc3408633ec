/**
 * What the user said, read from every dialect's model-call spans: the engine hears it so that a
 * re-check the user asked for is no loop (test/unit/evidence.test.ts has the engine's side).
 */
import { describe, expect, it } from 'vitest';
import { defaultAdapters, readUserMessages } from '../../src/conventions/index.js';
import type { SpanView } from '../../src/conventions/types.js';
import { userTextsOf } from '../../src/conventions/user-messages.js';

const span = (name: string, attributes: Record<string, unknown>, extra: Partial<SpanView> = {}): SpanView => ({ name, attributes, ...extra });
const read = (s: SpanView): readonly string[] | undefined => readUserMessages(defaultAdapters, s);

const conversation = [
  { role: 'system', parts: [{ type: 'text', content: 'You are a support agent.' }] },
  { role: 'user', parts: [{ type: 'text', content: 'Where is order W-12?' }] },
  { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'get_order', arguments: { id: 'W-12' } }] },
  { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'processing' }] },
  { role: 'user', parts: [{ type: 'text', content: 'Please recheck, it should have shipped.' }, { type: 'image', uri: 'x' }] },
];

describe('user messages, as each dialect records them', () => {
  it('gen_ai.input.messages, as JSON text or structured: the user parts\' text, oldest first', () => {
    const expected = ['Where is order W-12?', 'Please recheck, it should have shipped.'];
    expect(read(span('chat gpt-5', { 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': JSON.stringify(conversation) }))).toEqual(expected);
    expect(read(span('chat gpt-5', { 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': conversation }))).toEqual(expected);
  });

  it('the older conventions\' gen_ai.user.message events, with their text; an event with only a time says nothing', () => {
    const events = [
      { name: 'gen_ai.system.message', attributes: { content: 'be brief' } },
      { name: 'gen_ai.user.message', attributes: { content: 'Cancel my booking.' } },
      { name: 'gen_ai.user.message', attributes: { 'gen_ai.event.content': JSON.stringify({ content: 'The one on Friday.' }) } },
      { name: 'gen_ai.user.message', attributes: {} },
    ];
    expect(read(span('chat m', { 'gen_ai.operation.name': 'chat' }, { events }))).toEqual(['Cancel my booking.', 'The one on Friday.']);
    expect(read(span('invoke_agent a', {}, { events: [{ name: 'gen_ai.user.message', attributes: {} }] }))).toBeUndefined();
  });

  it('OpenInference LLM spans: llm.input_messages.N.message.role / .content', () => {
    const attrs = {
      'openinference.span.kind': 'LLM',
      'llm.input_messages.0.message.role': 'system',
      'llm.input_messages.0.message.content': 'rules',
      'llm.input_messages.1.message.role': 'user',
      'llm.input_messages.1.message.content': 'Book the 9:40 flight.',
      'llm.input_messages.2.message.role': 'assistant',
      'llm.input_messages.2.message.content': 'Done.',
    };
    expect(read(span('ChatOpenAI', attrs))).toEqual(['Book the 9:40 flight.']);
    // only LLM spans: a chain's input is not a user message
    expect(read(span('chain', { ...attrs, 'openinference.span.kind': 'CHAIN' }))).toBeUndefined();
  });

  it('Traceloop / OpenLLMetry: gen_ai.prompt.N.role / .content', () => {
    expect(read(span('openai.chat', { 'gen_ai.prompt.0.role': 'user', 'gen_ai.prompt.0.content': 'Hi', 'gen_ai.prompt.1.role': 'assistant', 'gen_ai.prompt.1.content': 'Hello', 'gen_ai.prompt.2.role': 'user', 'gen_ai.prompt.2.content': 'Refund me.' }))).toEqual(['Hi', 'Refund me.']);
  });

  it('AI SDK: ai.prompt.messages of a model call, else the call\'s ai.prompt', () => {
    const messages = [{ role: 'user', content: [{ type: 'text', text: 'Summarize the report.' }] }, { role: 'assistant', content: 'Sure.' }, { role: 'user', content: 'Shorter.' }];
    expect(read(span('ai.generateText.doGenerate', { 'ai.operationId': 'ai.generateText.doGenerate', 'ai.prompt.messages': JSON.stringify(messages) }))).toEqual(['Summarize the report.', 'Shorter.']);
    expect(read(span('ai.generateText', { 'ai.operationId': 'ai.generateText', 'ai.prompt': JSON.stringify({ prompt: 'What is 2+2?' }) }))).toEqual(['What is 2+2?']);
  });

  it('Langfuse generations and LangSmith model runs: their input\'s messages (LangChain\'s human messages too)', () => {
    expect(read(span('generation', { 'langfuse.observation.type': 'generation', 'langfuse.observation.input': JSON.stringify([{ role: 'user', content: 'Find flights.' }]) }))).toEqual(['Find flights.']);
    expect(read(span('ChatModel', { 'langsmith.span.kind': 'llm', 'gen_ai.prompt': JSON.stringify({ messages: [{ type: 'human', data: { content: 'Track parcel 7.' } }] }) }))).toEqual(['Track parcel 7.']);
  });

  it('reads at most the 8 newest user messages of one input, and nothing from text that is no message list', () => {
    const many = Array.from({ length: 20 }, (_, i) => ({ role: 'user', content: `message ${i}` }));
    expect(userTextsOf(many)).toEqual(Array.from({ length: 8 }, (_, i) => `message ${12 + i}`));
    expect(userTextsOf('not json')).toBeUndefined();
    expect(userTextsOf('{"messages": "no list"}')).toBeUndefined();
    expect(userTextsOf('[{"role":"user","content":"  "}]')).toBeUndefined();
  });
});
