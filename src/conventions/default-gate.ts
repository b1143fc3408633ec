/**
 * The attribute keys of the default adapters' gates, written out as code.
 *
 * `SpanGate` reads the gate of any list of adapters from their declarations, and compares each
 * attribute key of a span with the declared keys of the same length, loaded from a table. For
 * the default list, which nearly every app runs, this function gives the same answer with the
 * keys as constants in the code: V8 then compares a key with a constant in one instruction,
 * without loading and checking the declared key first. In the bench's realistic mix that is
 * about 1 % of the whole span pipeline, a quarter of what the gate costs.
 *
 * It must answer exactly as the declarations do: test/unit/default-gate.test.ts compares the two
 * for every declared key and value, near misses of them, and random spans. Change an adapter's
 * gate and that test says what to change here.
 */

/** Bit i: adapter i of `defaultAdapters` (the test checks the order). */
const enum Adapter {
  AiSdk = 1,
  OpenInference = 2,
  Traceloop = 4,
  LangSmith = 8,
  Langfuse = 16,
  Mastra = 32,
  GenAi = 64,
}

/** The default adapters whose gate keys a span's attributes pass, as a bit mask (see `SpanGate.test`). */
export function defaultKeyMask(attrs: Readonly<Record<string, unknown>>): number {
  let mask = 0;
  for (const k in attrs) {
    switch (k.length) {
      case 14:
        if (k === 'ai.operationId') mask |= Adapter.AiSdk;
        break;
      case 16:
        if (k === 'mastra.span.type') mask |= Adapter.Mastra;
        break;
      case 17:
        if (k === 'gen_ai.agent.name') mask |= Adapter.GenAi;
        break;
      case 18:
        if (k === 'gen_ai.prompt.name') mask |= Adapter.GenAi;
        break;
      case 19:
        if (k === 'traceloop.span.kind') mask |= Adapter.Traceloop;
        else if (k === 'langsmith.span.kind' && attrs[k] === 'tool') mask |= Adapter.LangSmith;
        break;
      case 20:
        if (k === 'langfuse.prompt.name') mask |= Adapter.Langfuse;
        else if (k === 'traceloop.prompt.key') mask |= Adapter.Traceloop;
        break;
      case 21:
        if (k === 'gen_ai.operation.name') {
          if (attrs[k] === 'execute_tool') mask |= Adapter.GenAi;
        } else if (k === 'traceloop.entity.name') mask |= Adapter.Traceloop;
        break;
      case 23:
        if (k === 'openinference.span.kind') mask |= Adapter.OpenInference;
        break;
      case 25:
        if (k === 'langfuse.observation.type') mask |= Adapter.Langfuse;
        else if (k === 'mastra.metadata.agentName') mask |= Adapter.Mastra;
        break;
      case 26:
        if (k === 'mastra.metadata.agent_name' || k === 'mastra.metadata.promptName') mask |= Adapter.Mastra;
        break;
      case 27:
        if (k === 'mastra.metadata.prompt_name') mask |= Adapter.Mastra;
        break;
      case 30:
        if (k === 'ai.settings.context.promptName') mask |= Adapter.AiSdk;
        break;
      case 31:
        if (k === 'ai.settings.context.prompt_name') mask |= Adapter.AiSdk;
        break;
      case 32:
        if (k === 'ai.telemetry.metadata.promptName') mask |= Adapter.AiSdk;
        else if (k === 'langfuse.observation.prompt.name') mask |= Adapter.Langfuse;
        break;
      case 33:
        if (k === 'ai.telemetry.metadata.prompt_name') mask |= Adapter.AiSdk;
        break;
      case 36:
        if (k === 'ai.telemetry.metadata.langfusePrompt') mask |= Adapter.AiSdk;
        break;
    }
  }
  return mask;
}
