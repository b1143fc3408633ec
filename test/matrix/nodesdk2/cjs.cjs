/* global require */
/* eslint-disable @typescript-eslint/no-require-imports -- this file is a CommonJS consumer on purpose */
// NodeSDK with spanProcessors: loopwatch first, the exporting processor after it. `require`.
const api = require('@opentelemetry/api');
const { NodeSDK } = require('@opentelemetry/sdk-node');
const { InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const loopwatch = require('loopwatch');
const advanced = require('loopwatch/advanced');
const { runCell } = require('../shared/scenario.cjs');

void runCell({
  format: 'cjs',
  resolved: require.resolve('loopwatch'),
  api,
  loopwatch,
  advanced,
  makeProvider: (loops) => {
    const exporter = new InMemorySpanExporter();
    const sdk = new NodeSDK({ spanProcessors: [loops, new SimpleSpanProcessor(exporter)] });
    sdk.start();
    const flush = () => api.trace.getTracerProvider().getDelegate().forceFlush();
    return { tracer: api.trace.getTracer('matrix'), finishedSpans: () => exporter.getFinishedSpans(), flush, shutdown: () => sdk.shutdown() };
  },
});
