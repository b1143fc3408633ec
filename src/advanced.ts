/**
 * `loopwatch/advanced`: the building blocks under the processor and the guard, for integrations
 * they do not cover. The engine fed from your own records, the fingerprint, the configuration's
 * resolved form and defaults, each built-in convention, the names of the events,
 * attributes and metrics loopwatch writes, and pricing. docs/api.md describes them.
 */
export { LoopEngine } from './detector/engine.js';
export type { TraceDetector } from './detector/trace-detector.js';
export { buildToolCall, type RawToolCall } from './detector/tool-call.js';
export { classifyError, type RawError } from './detector/error-class.js';
export type { RecordedCall, ToolCall, ToolOutcome } from './detector/types.js';
export { fingerprint, type Fingerprint, type FingerprintOptions } from './fingerprint/canonical.js';
export { DEFAULT_VOLATILE_ARGUMENT_KEYS, DEFAULT_VOLATILE_RESULT_KEYS } from './fingerprint/volatile.js';
export {
  resolveConfig,
  DEFAULT_THRESHOLDS,
  DEFAULT_POLLER_THRESHOLDS,
  DEFAULT_WAIT_THRESHOLDS,
  DEFAULT_POLLER_PATTERNS,
  DEFAULT_WAIT_PATTERNS,
  type ResolvedConfig,
  type Thresholds,
} from './detector/config/index.js';

export { genAiAdapter, aiSdkAdapter, openInferenceAdapter, traceloopAdapter, langfuseAdapter, langsmithAdapter, mastraAdapter, mcpAdapter } from './conventions/index.js';
export type { WritableToolSpan } from './otel/span-types.js';

export { LOOP_EVENT_NAME, LOOP_SUMMARY_EVENT_NAME, ATTR_LOOP_ARGUMENTS_PREVIEW, loopEventAttributes, loopSummaryAttributes } from './otel/event-attributes.js';
export { ATTR_LOOP_ACTION, type GuardSpanAction } from './guard/span-mark.js';
export { METRIC_LOOP_DETECTIONS, METRIC_TOOL_CALLS, METRIC_LOOP_TOKENS, METRIC_LOOP_COST } from './otel/loop-metrics.js';
export type { LoopLoggerProvider, LoopLogger, LoopLogRecord } from './otel/loop-logs.js';

export { PriceTable } from './cost/prices.js';
export { readModelUsage, type ModelUsage } from './conventions/usage.js';
