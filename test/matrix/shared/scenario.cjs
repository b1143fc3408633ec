/* global module */
'use strict';
/**
 * The matrix scenario, shared by every cell and both module formats. Dependency-injected: the cell
 * script builds its own provider with its own SDK and hands over the API, a tracer, the loopwatch
 * processor and a way to read exported spans, so that nothing here resolves a package (which
 * would find the repository's copies instead of the cell's).
 *
 * Runs three agent runs and returns plain data for the driving test to assert on:
 * - loop: the same gen_ai tool call again and again under an invoke_agent root with a prompt name,
 *   stopping when `abortSignal()` aborts;
 * - honest: distinct calls, which must stay quiet;
 * - dialect: AI SDK `ai.toolCall` spans, which must get the gen_ai keys the collector counts by.
 */
async function runScenario({ api, tracer, loops, detections, finishedSpans, flush, structured = false }) {
  function toolCall(name, args, result, parentCtx, dialect) {
    const attributes =
      dialect === 'ai-sdk'
        ? { 'ai.operationId': 'ai.toolCall', 'ai.toolCall.name': name, 'ai.toolCall.args': JSON.stringify(args) }
        : { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.call.arguments': structured ? args : JSON.stringify(args) };
    const span = tracer.startSpan(dialect === 'ai-sdk' ? 'ai.toolCall' : `execute_tool ${name}`, { attributes }, parentCtx);
    if (dialect === 'ai-sdk') span.setAttribute('ai.toolCall.result', JSON.stringify(result));
    else span.setAttribute('gen_ai.tool.call.result', structured ? result : JSON.stringify(result));
    span.end();
  }

  function agentRun(rootName, steps, dialect) {
    return tracer.startActiveSpan(
      rootName,
      { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'matrix-bot', 'gen_ai.prompt.name': 'matrix-prompt' } },
      (root) => {
        const signal = loops.abortSignal();
        let executed = 0;
        for (const [name, args, result] of steps) {
          if (signal.aborted) break;
          toolCall(name, args, result, api.context.active(), dialect);
          executed++;
        }
        root.end();
        return { executed, aborted: signal.aborted, reason: signal.aborted ? { name: signal.reason.name, toolName: signal.reason.toolName, kind: signal.reason.kind, count: signal.reason.count, isError: signal.reason instanceof Error } : null, traceId: root.spanContext().traceId };
      },
    );
  }

  const loopSteps = Array.from({ length: 10 }, () => ['search', { q: 'order 1234', page: 1 }, { status: 'unknown order', hits: [] }]);
  const loop = agentRun('invoke_agent loop', loopSteps);
  const loopDetections = detections.splice(0);

  const honest = agentRun('invoke_agent honest', [
    ['search', { q: 'order 1234' }, { status: 'shipped' }],
    ['get_tracking', { order: 1234 }, { carrier: 'DHL' }],
    ['send_reply', { text: 'It ships with DHL' }, 'sent'],
  ]);
  const honestDetections = detections.splice(0);

  const dialect = agentRun('invoke_agent ai-sdk', Array.from({ length: 3 }, () => ['lookup', { id: 7 }, 'not found']), 'ai-sdk');
  const dialectDetections = detections.splice(0);

  await flush();
  const spans = finishedSpans();
  const describe = (s) => ({
    name: s.name,
    traceId: s.spanContext().traceId,
    toolName: s.attributes['gen_ai.tool.name'] ?? null,
    operation: s.attributes['gen_ai.operation.name'] ?? null,
    promptName: s.attributes['gen_ai.prompt.name'] ?? null,
    argumentsType: typeof s.attributes['gen_ai.tool.call.arguments'],
    loopEvents: s.events.filter((e) => e.name === 'loop.detected').map((e) => ({ level: e.attributes['loop.level'], kind: e.attributes['loop.kind'], spanId: e.attributes['loop.span_id'] ?? null })),
  });
  const byTrace = (traceId) => spans.filter((s) => s.spanContext().traceId === traceId).map(describe);
  const brief = (d) => ({ level: d.level, kind: d.kind, callIndex: d.callIndex, toolName: d.toolName, promptName: d.promptName ?? null, agentName: d.agentName ?? null, evidence: d.evidence });

  return {
    loop: { ...loop, detections: loopDetections.map(brief), spans: byTrace(loop.traceId) },
    honest: { ...honest, detections: honestDetections.map(brief), spans: byTrace(honest.traceId) },
    dialect: { ...dialect, detections: dialectDetections.map(brief), spans: byTrace(dialect.traceId) },
  };
}

/**
 * Builds the processor, runs the scenario and prints one JSON line. `makeProvider(loops)` returns
 * `{ tracer, finishedSpans, flush, shutdown }` for the cell's SDK; `loopwatch` and `advanced`
 * (`loopwatch/advanced`) are the modules as the cell loaded them (import or require) and
 * `resolved` the file the first came from.
 */
async function runCell({ format, resolved, api, loopwatch, advanced, makeProvider, structured = false }) {
  const detections = [];
  const loops = new loopwatch.LoopDetectionSpanProcessor({ onLoop: (d) => detections.push(d) });
  const { tracer, finishedSpans, flush, shutdown } = await makeProvider(loops);
  const result = await runScenario({ api, tracer, loops, detections, finishedSpans, flush, structured });
  await shutdown();
  const api_ = ['LoopDetectionSpanProcessor', 'ToolLoopError', 'customAdapter', 'defaultAdapters', 'registeredProcessor', 'ToolLoopGuard', 'LoopEngine'];
  const advanced_ = ['LoopEngine', 'buildToolCall', 'LOOP_EVENT_NAME'];
  process.stdout.write(
    JSON.stringify({
      format,
      resolved,
      node: process.version,
      exports: api_.filter((k) => loopwatch[k] !== undefined),
      advancedExports: advanced_.filter((k) => advanced[k] !== undefined),
      // one engine class per module format: the processor's engine is an advanced LoopEngine
      sharedEngine: loops.engine instanceof advanced.LoopEngine,
      toolLoopErrorClass: result.loop.reason !== null && result.loop.reason.isError,
      ...result,
    }) + '\n',
  );
}

module.exports = { runScenario, runCell };
