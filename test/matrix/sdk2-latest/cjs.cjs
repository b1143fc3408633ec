/* global require */
/* eslint-disable @typescript-eslint/no-require-imports -- this file is a CommonJS consumer on purpose */
// SDK 2.x NodeTracerProvider (registers itself globally, with its own context manager), `require`.
const api = require('@opentelemetry/api');
const { NodeTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-node');
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
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), loops] });
    provider.register();
    return { tracer: api.trace.getTracer('matrix'), finishedSpans: () => exporter.getFinishedSpans(), flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
  },
});
