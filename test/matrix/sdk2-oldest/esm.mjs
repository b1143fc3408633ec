// SDK 2.x BasicTracerProvider, loopwatch loaded with `import`.
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import * as loopwatch from 'loopwatch';
import * as advanced from 'loopwatch/advanced';
import { runCell } from '../shared/scenario.cjs';

api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
await runCell({
  format: 'esm',
  resolved: import.meta.resolve('loopwatch'),
  api,
  loopwatch,
  advanced,
  makeProvider: (loops) => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), loops] });
    return { tracer: provider.getTracer('matrix'), finishedSpans: () => exporter.getFinishedSpans(), flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
  },
});
