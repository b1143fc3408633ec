/**
 * The dispatcher guard: the same engine as the span processor, asked before each tool call.
 * See `ToolLoopGuard`; `guardAiSdkTools` and `guardDispatcher` wrap the two common dispatchers.
 */
export { ToolLoopGuard } from './guard/guard.js';
export type { CheckOptions, RunOptions, GuardedCall, ProceedingCall, HintedCall } from './guard/calls.js';
export { guardAiSdkTools, type WrapToolsOptions } from './guard/ai-sdk.js';
export { guardDispatcher, type Dispatcher, type WrapDispatcherOptions } from './guard/dispatcher.js';
export { isLoopHint, LOOP_HINT_TYPE, type LoopHint } from './guard/hint.js';
export { isTransientError } from './guard/transient.js';
export { ATTR_LOOP_ACTION, type GuardSpanAction } from './guard/span-mark.js';
export type { GuardAction, StopScope, BackoffOptions, HintContext, ToolLoopGuardOptions } from './guard/options.js';
export type { ToolAnnotations } from './guard/tool-result.js';
export type { GuardEvent, GuardOutcome, GuardedCallRecord } from './guard/events.js';
