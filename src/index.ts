/**
 * `loopwatch`: what an application calls. The span processor and `registeredProcessor` (the one
 * `loopwatch/register` started), the dispatcher guard, configuration, the detection a callback
 * receives, the errors, and the conventions to read an instrumentation of your own. The engine,
 * the built-in conventions one by one, event and metric names and pricing are `loopwatch/advanced`
 * (src/advanced.ts); docs/api.md describes both.
 */
export { LoopDetectionSpanProcessor, type LoopDetectionSpanProcessorOptions } from './processor/index.js';
export { registeredProcessor } from './register/global.js';
export type { ReadableToolSpan } from './otel/span-types.js';
export type { ArgumentPreviewOptions } from './otel/argument-preview.js';
export type { TraceLoopSummary } from './cost/summary.js';
export type { Spend, TokenCount } from './cost/trace-cost.js';

export { ToolLoopError } from './errors.js';
export {
  validateConfig,
  ConfigError,
  type ConfigIssue,
  type LoopwatchConfig,
  type ModelPriceInput,
  type RuleThresholdsInput,
  type ThresholdInput,
  type ToolOverride,
  type ToolRole,
} from './detector/config/index.js';
export type { Evidence, LoopDetection, LoopKind, LoopLevel, Mode, RuleName } from './detector/types.js';

export * from './guard/index.js';

export {
  defaultAdapters,
  customAdapter,
  type ConventionAdapter,
  type SpanView,
  type SpanEventView,
  type ToolCallFields,
  type CustomAdapterOptions,
  type AttributeSource,
  type ToolSpanMatcher,
} from './conventions/index.js';
