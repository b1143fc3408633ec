/* global module */
'use strict';
/**
 * The application of the zero-code tests: an agent that emits gen_ai tool spans through the
 * OpenTelemetry API only (as an instrumented agent framework would) and knows nothing of
 * loopwatch but `registeredProcessor()`, which it uses to stop the run when asked to.
 */
function runAgent({ api, registeredProcessor, ToolLoopError, steps = 10 }) {
  const tracer = api.trace.getTracer('agent-app');
  return tracer.startActiveSpan(
    'invoke_agent support-bot',
    { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support-bot', 'gen_ai.prompt.name': 'support-v2' } },
    (root) => {
      const loops = registeredProcessor();
      const signal = loops ? loops.abortSignal() : new AbortController().signal;
      let executed = 0;
      for (let i = 0; i < steps && !signal.aborted; i++) {
        const span = tracer.startSpan('execute_tool search', {
          attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': '{"q":"order 1234"}' },
        });
        span.setAttribute('gen_ai.tool.call.result', '{"status":"unknown order"}');
        span.end();
        executed++;
      }
      root.end();
      return {
        registered: loops !== undefined,
        executed,
        aborted: signal.aborted,
        reasonIsToolLoopError: signal.aborted && signal.reason instanceof ToolLoopError,
        traceId: root.spanContext().traceId,
      };
    },
  );
}

module.exports = { runAgent };
