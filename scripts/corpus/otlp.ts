import { createHash } from 'node:crypto';
import type { CorpusRun } from './run.js';

/**
 * One run as one OTLP/JSON document, as an OpenTelemetry SDK would export it: a root
 * `invoke_agent` span, a `chat` span per model turn (with token usage when the source has it),
 * an `execute_tool` span per tool call (arguments and result as JSON / text strings, failures as
 * status ERROR with `error.type` unless the failure has no class: a command that exited non-zero),
 * parallel calls of one turn overlapping under the same parent.
 * User messages are `gen_ai.user.message` events on the root (their times), and their content is
 * `gen_ai.input.messages` on the `chat` span that follows them. The corpus' own attributes
 * (`corpus.*`) name the run and how it ended.
 */

/** The gen_ai conventions' input messages of a model call (JSON text on the span). */
export const ATTR_GEN_AI_INPUT_MESSAGES = 'gen_ai.input.messages';

/** One input message in the conventions' shape; the corpus writes user text parts only. */
export interface InputMessage {
  readonly role: 'user';
  readonly parts: ReadonlyArray<{ readonly type: 'text'; readonly content: string }>;
}

/**
 * The user messages sent since the previous model call: the part of the model's input that is
 * new to it. The conventions record the whole history on every call; a run's history grows with
 * each turn, so the corpus writes only what is new (the earlier messages are on earlier spans).
 * A user message without text (a τ² user's own tool call) is a message with no parts.
 */
function inputMessages(texts: readonly string[]): string {
  const messages: InputMessage[] = texts.map((t) => ({ role: 'user', parts: t === '' ? [] : [{ type: 'text', content: t }] }));
  return JSON.stringify(messages);
}

type AnyValue = { stringValue: string } | { intValue: string } | { boolValue: boolean };
interface KeyValue {
  key: string;
  value: AnyValue;
}

function attr(key: string, v: string | number | boolean): KeyValue {
  if (typeof v === 'string') return { key, value: { stringValue: v } };
  if (typeof v === 'boolean') return { key, value: { boolValue: v } };
  return { key, value: { intValue: String(Math.round(v)) } };
}

function id(seed: string, bytes: 8 | 16): string {
  return createHash('sha256').update(seed).digest('hex').slice(0, bytes * 2);
}

function ns(ms: number): string {
  return `${BigInt(Math.round(ms * 1000)) * 1000n}`;
}

export function traceIdOf(source: string, runId: string): string {
  return id(`trace\0${source}\0${runId}`, 16);
}

function argumentsText(a: unknown): string {
  return typeof a === 'string' ? a : JSON.stringify(a ?? {});
}

export function runToOtlp(run: CorpusRun): object {
  const traceId = traceIdOf(run.source, run.id);
  const rootId = id(`${traceId}:root`, 8);
  const spans: object[] = [];
  const first = run.turns[0]?.start ?? 0;
  let last = first;
  const agentSpans = new Map<string, string>();
  const events: object[] = [];
  let callNo = 0;
  let userTexts: string[] = [];
  run.turns.forEach((turn, i) => {
    last = Math.max(last, turn.end, ...turn.calls.map((c) => c.end));
    if (turn.kind === 'user') {
      events.push({ timeUnixNano: ns(turn.end), name: 'gen_ai.user.message', attributes: [] });
      userTexts.push(turn.text ?? '');
      return;
    }
    const input = userTexts.length > 0 ? [attr(ATTR_GEN_AI_INPUT_MESSAGES, inputMessages(userTexts))] : [];
    userTexts = [];
    let parent = rootId;
    if (turn.agent !== undefined) {
      const sub = agentSpans.get(turn.agent) ?? id(`${traceId}:agent:${turn.agent}`, 8);
      agentSpans.set(turn.agent, sub);
      parent = sub;
    }
    const chatId = id(`${traceId}:chat:${i}`, 8);
    spans.push({
      traceId,
      spanId: chatId,
      parentSpanId: parent,
      name: `chat ${run.model}`,
      kind: 3,
      startTimeUnixNano: ns(turn.start),
      endTimeUnixNano: ns(turn.end),
      attributes: [
        attr('gen_ai.operation.name', 'chat'),
        attr('gen_ai.request.model', run.model),
        ...(turn.usage ? [attr('gen_ai.usage.input_tokens', turn.usage.input), attr('gen_ai.usage.output_tokens', turn.usage.output)] : []),
        ...input,
      ],
    });
    for (const call of turn.calls) {
      callNo++;
      const attributes: KeyValue[] = [
        attr('gen_ai.operation.name', 'execute_tool'),
        attr('gen_ai.tool.name', call.name),
        attr('gen_ai.tool.call.arguments', argumentsText(call.arguments)),
      ];
      if (call.id !== undefined) attributes.push(attr('gen_ai.tool.call.id', call.id));
      if (call.error !== undefined) {
        if (call.errorType !== null) attributes.push(attr('error.type', call.errorType ?? '_OTHER'));
      } else if (call.result !== undefined) attributes.push(attr('gen_ai.tool.call.result', call.result));
      spans.push({
        traceId,
        spanId: id(`${traceId}:tool:${callNo}`, 8),
        parentSpanId: parent,
        name: `execute_tool ${call.name}`,
        kind: 1,
        startTimeUnixNano: ns(call.start),
        endTimeUnixNano: ns(call.end),
        attributes,
        ...(call.error !== undefined ? { status: { code: 2, message: call.error } } : {}),
      });
    }
  });
  for (const [agent, spanId] of agentSpans) {
    spans.push({
      traceId,
      spanId,
      parentSpanId: rootId,
      name: `invoke_agent ${agent}`,
      kind: 1,
      startTimeUnixNano: ns(first),
      endTimeUnixNano: ns(last),
      attributes: [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.agent.name', agent)],
    });
  }
  spans.push({
    traceId,
    spanId: rootId,
    name: `invoke_agent ${run.agent}`,
    kind: 1,
    startTimeUnixNano: ns(first),
    endTimeUnixNano: ns(last + 1),
    attributes: [
      attr('gen_ai.operation.name', 'invoke_agent'),
      attr('gen_ai.agent.name', run.agent),
      attr('gen_ai.request.model', run.model),
      attr('corpus.source', run.source),
      attr('corpus.run.id', run.id),
      attr('corpus.run.outcome', run.outcome),
      attr('corpus.run.recorded_times', run.recordedTimes),
    ],
    ...(events.length > 0 ? { events } : {}),
  });
  return {
    resourceSpans: [
      {
        resource: { attributes: [attr('service.name', run.source)] },
        scopeSpans: [{ scope: { name: 'loopwatch-corpus', version: '1' }, spans }],
      },
    ],
  };
}
