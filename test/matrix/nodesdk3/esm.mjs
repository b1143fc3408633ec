// NodeSDK with spanProcessors: loopwatch first, the exporting processor after it. `import`.
import * as api from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
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
    const sdk = new NodeSDK({ spanProcessors: [loops, new SimpleSpanProcessor({ exporter })] });
    sdk.start();
    // NodeSDK's resource has async attributes: SimpleSpanProcessor exports once they settle.
    const flush = () => api.trace.getTracerProvider().getDelegate().forceFlush();
    return { tracer: api.trace.getTracer('matrix'), finishedSpans: () => exporter.getFinishedSpans(), flush, shutdown: () => sdk.shutdown() };
  },
});
