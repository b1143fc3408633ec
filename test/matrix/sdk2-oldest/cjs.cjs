/* global require */
/* eslint-disable @typescript-eslint/no-require-imports -- this file is a CommonJS consumer on purpose */
// SDK 2.x BasicTracerProvider, loopwatch loaded with `require`.
const api = require('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const loopwatch = require('loopwatch');
const advanced = require('loopwatch/advanced');
const { runCell } = require('../shared/scenario.cjs');

api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
void runCell({
  format: 'cjs',
  resolved: require.resolve('loopwatch'),
  api,
  loopwatch,
  advanced,
  makeProvider: (loops) => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), loops] });
    return { tracer: provider.getTracer('matrix'), finishedSpans: () => exporter.getFinishedSpans(), flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
  },
});
