// SDK 2.x NodeTracerProvider (registers itself globally, with its own context manager), `import`.
import * as api from '@opentelemetry/api';
import { NodeTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import * as loopwatch from 'loopwatch';
import * as advanced from 'loopwatch/advanced';
import { runCell } from '../shared/scenario.cjs';

await runCell({
  format: 'esm',
  resolved: import.meta.resolve('loopwatch'),
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
