// Compile-time check (run by `npm run typecheck`): the processor fits the SDK 2.x SpanProcessor type without a cast.
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LoopDetectionSpanProcessor } from '../../src/index.js';

const loops: SpanProcessor = new LoopDetectionSpanProcessor();
export const provider = new BasicTracerProvider({ spanProcessors: [loops, new LoopDetectionSpanProcessor()] });
