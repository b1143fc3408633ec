/**
 * The span processor: `LoopDetectionSpanProcessor` (processor/span-processor.ts) and its options.
 * See processor/ for the way of a span: tool-spans.ts (span → tool call), the engine, outputs.ts.
 */
export { LoopDetectionSpanProcessor } from './span-processor.js';
export type { LoopDetectionSpanProcessorOptions } from './options.js';
