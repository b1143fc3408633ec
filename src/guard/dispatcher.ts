import type { CallGuard, RunOptions } from './calls.js';

/** A tool dispatcher: the function an agent loop calls with each tool call the model makes. */
export type Dispatcher<Args, Rest extends unknown[], R> = (toolName: string, args: Args, ...rest: Rest) => R | PromiseLike<R>;

export interface WrapDispatcherOptions<Args, Rest extends unknown[]> {
  /** Parallel step of a call (default: calls overlapping in time are one step). */
  readonly batch?: (toolName: string, args: Args, ...rest: Rest) => string | undefined;
  /** Cancels a backoff delay (default: none besides the guard's own signal). */
  readonly signal?: (toolName: string, args: Args, ...rest: Rest) => AbortSignal | undefined;
}

/**
 * Guards a generic dispatcher: the returned function checks each call first and resolves to the
 * tool's result, or to the guard's hint instead of running it; it rejects with `ToolLoopError`
 * when the run must stop, and with the tool's own error, unchanged, when the tool failed.
 */
export function guardDispatcher<Args, Rest extends unknown[], R, H>(
  guard: CallGuard<H>,
  dispatch: Dispatcher<Args, Rest, R>,
  options: WrapDispatcherOptions<Args, Rest> = {},
): (toolName: string, args: Args, ...rest: Rest) => Promise<Awaited<R> | H> {
  return (toolName, args, ...rest) => {
    let run: RunOptions = {};
    try {
      const batch = options.batch?.(toolName, args, ...rest);
      const signal = options.signal?.(toolName, args, ...rest);
      run = { ...(batch !== undefined ? { batch } : {}), ...(signal ? { signal } : {}) };
    } catch {
      // a failing option callback only loses the hint it gives; the call is still guarded
    }
    return guard.run(toolName, args, () => dispatch(toolName, args, ...rest), run);
  };
}
