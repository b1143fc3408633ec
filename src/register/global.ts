import type { LoopDetectionSpanProcessor } from '../processor/index.js';

/** Where `loopwatch/register` leaves its processor; a global symbol, so the ESM and CJS builds share it. */
const KEY = Symbol.for('loopwatch.registered-processor');

type Holder = { [KEY]?: LoopDetectionSpanProcessor };

export function setRegisteredProcessor(p: LoopDetectionSpanProcessor): void {
  (globalThis as Holder)[KEY] = p;
}

/**
 * The processor started by `node --import loopwatch/register` (or `--require`), if any. An app
 * started that way can still stop a run: `registeredProcessor()?.abortSignal()`.
 */
export function registeredProcessor(): LoopDetectionSpanProcessor | undefined {
  return (globalThis as Holder)[KEY];
}
