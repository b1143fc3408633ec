// SDK 3.x TracerProvider (@opentelemetry/sdk-trace), API 1.10, structured attribute values, `import`.
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
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
  structured: true,
  makeProvider: (loops) => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter }), loops] });
    return { tracer: provider.getTracer('matrix'), finishedSpans: () => exporter.getFinishedSpans(), flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
  },
});
