/* global require */
/* eslint-disable @typescript-eslint/no-require-imports -- this file is a CommonJS consumer on purpose */
// SDK 3.x TracerProvider (@opentelemetry/sdk-trace), API 1.10, structured attribute values, `require`.
const api = require('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace');
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
  structured: true,
  makeProvider: (loops) => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter }), loops] });
    return { tracer: provider.getTracer('matrix'), finishedSpans: () => exporter.getFinishedSpans(), flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
  },
});
