import { trace, type TracerProvider } from '@opentelemetry/api';
import type { LoopDetectionSpanProcessor } from '../processor/index.js';

/**
 * Opt-in (`LOOPWATCH_REGISTER=attach`): adds loopwatch to the tracer provider the application
 * registers itself (its own `new NodeSDK(...).start()` or `provider.register()`), without a code
 * change. There is no public API for adding a processor to a running provider: this uses the
 * SDK's private `_activeSpanProcessor._spanProcessors` array, the same in SDK 2.0–2.12 and 3.x
 * (tested on 2.x and 3.x), and says so loudly when it cannot find it. Prefer `spanProcessors`
 * in code wherever you can.
 */
export function attachWhenRegistered(
  loops: LoopDetectionSpanProcessor,
  timeoutMs: number,
  report: (message: string) => void,
): { stop(): void } {
  let done = false;
  const tryNow = (): boolean => {
    if (done) return true;
    const result = attachTo(trace.getTracerProvider(), loops);
    if (result === 'attached') {
      done = true;
      report('attached to the registered tracer provider');
    } else if (result === 'unsupported') {
      done = true;
      report('the registered tracer provider has no span processor list loopwatch knows (SDK 2.x / 3.x only); not attached');
    }
    return done;
  };
  if (tryNow()) return { stop: () => undefined };

  // Attach the moment the app registers its provider: wrap the API's setter...
  const api = trace as { setGlobalTracerProvider: (p: TracerProvider) => boolean };
  const original = api.setGlobalTracerProvider;
  api.setGlobalTracerProvider = function (this: unknown, provider: TracerProvider): boolean {
    const ok = original.call(this, provider);
    try {
      tryNow();
    } catch {
      // never let loopwatch break the app's registration
    }
    return ok;
  };
  // ...and poll, for apps whose SDK registers through another copy of @opentelemetry/api.
  const started = Date.now();
  const timer = setInterval(() => {
    try {
      if (tryNow()) clearInterval(timer);
      else if (Date.now() - started > timeoutMs) {
        clearInterval(timer);
        done = true;
        report(`no tracer provider was registered within ${timeoutMs} ms; not attached (LOOPWATCH_ATTACH_TIMEOUT_MS)`);
      }
    } catch {
      clearInterval(timer);
    }
  }, 20);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      done = true;
    },
  };
}

type ProviderInternals = { getDelegate?: () => unknown; _activeSpanProcessor?: { _spanProcessors?: unknown } };

function attachTo(provider: TracerProvider, loops: LoopDetectionSpanProcessor): 'attached' | 'not-yet' | 'unsupported' {
  const proxy = provider as ProviderInternals;
  const delegate = (typeof proxy.getDelegate === 'function' ? proxy.getDelegate() : provider) as ProviderInternals;
  if (!delegate || delegate.constructor?.name === 'NoopTracerProvider') return 'not-yet';
  const list = delegate._activeSpanProcessor?._spanProcessors;
  if (!Array.isArray(list)) return 'unsupported';
  if (!list.includes(loops)) list.push(loops);
  return 'attached';
}
