/**
 * The dispatcher guard: the same engine as the span processor, asked before each tool call.
 * See `ToolLoopGuard`; `guardAiSdkTools` and `guardDispatcher` wrap the two common dispatchers.
 */
export { ToolLoopGuard } from './guard.js';
export type { CheckOptions, RunOptions, GuardedCall, ProceedingCall, HintedCall } from './calls.js';
export { guardAiSdkTools, type WrapToolsOptions } from './ai-sdk.js';
export { guardDispatcher, type Dispatcher, type WrapDispatcherOptions } from './dispatcher.js';
export { isLoopHint, LOOP_HINT_TYPE, type LoopHint } from './hint.js';
export { isTransientError } from './transient.js';
export type { GuardAction, StopScope, BackoffOptions, HintContext, ToolLoopGuardOptions } from './options.js';
export type { ToolAnnotations } from './tool-result.js';
export type { GuardEvent, GuardOutcome, GuardedCallRecord } from './events.js';
