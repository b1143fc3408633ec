export { LoopDetectionSpanProcessor, type LoopDetectionSpanProcessorOptions } from './processor.js';
export { ToolLoopError } from './errors.js';
export { LOOP_EVENT_NAME, LOOP_SUMMARY_EVENT_NAME, ATTR_LOOP_ARGUMENTS_PREVIEW, loopEventAttributes, loopSummaryAttributes } from './otel/event-attributes.js';
export type { ArgumentPreviewOptions } from './otel/argument-preview.js';
export { METRIC_LOOP_DETECTIONS, METRIC_TOOL_CALLS, METRIC_LOOP_TOKENS, METRIC_LOOP_COST } from './otel/loop-metrics.js';
export type { TraceLoopSummary } from './cost/summary.js';
export type { Spend, TokenCount } from './cost/trace-cost.js';
export { PriceTable } from './cost/prices.js';
export { readModelUsage, type ModelUsage } from './conventions/usage.js';
export type { LoopLoggerProvider, LoopLogger, LoopLogRecord } from './otel/loop-logs.js';
export type { ReadableToolSpan, WritableToolSpan } from './otel/span-types.js';

export { LoopEngine } from './detector/engine.js';
export type { TraceDetector } from './detector/trace-detector.js';
export { buildToolCall, type RawToolCall } from './detector/tool-call.js';
export { classifyError, type RawError } from './detector/error-class.js';
export {
  resolveConfig,
  validateConfig,
  ConfigError,
  DEFAULT_THRESHOLDS,
  DEFAULT_POLLER_THRESHOLDS,
  DEFAULT_WAIT_THRESHOLDS,
  DEFAULT_POLLER_PATTERNS,
  DEFAULT_WAIT_PATTERNS,
  type LoopwatchConfig,
  type ResolvedConfig,
  type ConfigIssue,
  type ThresholdInput,
  type Thresholds,
  type RuleThresholdsInput,
  type ToolOverride,
  type ToolRole,
  type ModelPriceInput,
} from './detector/config.js';
export type {
  Evidence,
  LoopDetection,
  LoopKind,
  LoopLevel,
  Mode,
  RecordedCall,
  RuleName,
  ToolCall,
  ToolOutcome,
} from './detector/types.js';

export { fingerprint, type Fingerprint, type FingerprintOptions } from './fingerprint/canonical.js';
export { DEFAULT_VOLATILE_ARGUMENT_KEYS, DEFAULT_VOLATILE_RESULT_KEYS } from './fingerprint/volatile.js';

export {
  defaultAdapters,
  genAiAdapter,
  type ConventionAdapter,
  type SpanView,
  type SpanEventView,
  type ToolCallFields,
} from './conventions/index.js';
export {
  aiSdkAdapter,
  openInferenceAdapter,
  traceloopAdapter,
  langfuseAdapter,
  langsmithAdapter,
  mastraAdapter,
  mcpAdapter,
  customAdapter,
  type CustomAdapterOptions,
  type AttributeSource,
  type ToolSpanMatcher,
} from './conventions/index.js';
export { registeredProcessor } from './register/global.js';
export {
  ToolLoopGuard,
  guardAiSdkTools,
  guardDispatcher,
  isLoopHint,
  isTransientError,
  LOOP_HINT_TYPE,
  ATTR_LOOP_ACTION,
  type LoopHint,
  type GuardAction,
  type StopScope,
  type ToolAnnotations,
  type GuardEvent,
  type GuardOutcome,
  type GuardedCallRecord,
  type GuardedCall,
  type ProceedingCall,
  type HintedCall,
  type CheckOptions,
  type RunOptions,
  type BackoffOptions,
  type HintContext,
  type ToolLoopGuardOptions,
  type WrapToolsOptions,
  type Dispatcher,
  type WrapDispatcherOptions,
  type GuardSpanAction,
} from './guard.js';
