import { diag } from '@opentelemetry/api';

/**
 * loopwatch's messages go to OpenTelemetry's `diag` logger under the namespace `loopwatch` (the
 * logger receives the namespace as its first argument, as from every OpenTelemetry component).
 * loopwatch runs inside other people's agents: a throwing logger must not break the app, nor
 * loopwatch, so nothing here throws.
 */
const component = diag.createComponentLogger({ namespace: 'loopwatch' });

type Level = 'error' | 'warn' | 'debug';

function write(level: Level, message: string): void {
  try {
    component[level](message);
  } catch {
    // nothing left to tell it with
  }
}

export const log = {
  error: (message: string): void => write('error', message),
  warn: (message: string): void => write('warn', message),
  debug: (message: string): void => write('debug', message),
};

/** The message of whatever was thrown, read defensively (a hostile value may throw again). */
export function errorText(e: unknown): string {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return 'an unreadable error';
  }
}

/** Tells diag that `where` (a hook, a user callback) failed and that the failure went no further. */
export function reportContained(where: string, e: unknown): void {
  write('error', `${where} failed and was contained: ${errorText(e)}`);
}

/** Runs code that must not throw into the app (a user callback, a mapping): on a throw, diag is told and `fallback` returned. */
export function callContained<T>(where: string, run: () => T, fallback: T): T {
  try {
    return run();
  } catch (e) {
    reportContained(where, e);
    return fallback;
  }
}

/** Runs a user callback whose result may be a promise: a throw or a rejection is reported (`<where> (async)`), never passed on. */
export function notifyContained(where: string, run: () => unknown): void {
  try {
    const r = run();
    if (r !== null && (typeof r === 'object' || typeof r === 'function') && typeof (r as PromiseLike<unknown>).then === 'function') {
      (r as PromiseLike<unknown>).then(undefined, (e: unknown) => reportContained(`${where} (async)`, e));
    }
  } catch (e) {
    reportContained(where, e);
  }
}
