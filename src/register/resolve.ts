import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * `require` for the application's OpenTelemetry packages. Resolved from the application's
 * directory first (its own `@opentelemetry/sdk-node` is the one to start), then from loopwatch's
 * location (hoisted installs). Synchronous on purpose: under `--require` the SDK must be running
 * before the application's first module loads, so that instrumentations can patch it; `require`
 * also loads the SDK's ESM build on Node >= 22.12 where a package ships ESM only.
 */
export function appRequire(specifier: string, from?: string): unknown {
  const anchors = from !== undefined ? [from] : [join(process.cwd(), 'noop.js'), import.meta.url];
  let last: unknown;
  for (const anchor of anchors) {
    try {
      return createRequire(anchor)(specifier);
    } catch (e) {
      last = e;
      if ((e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  throw last;
}

/** The resolved file of `specifier`, or undefined when it is not installed. */
export function appResolve(specifier: string, from?: string): string | undefined {
  const anchors = from !== undefined ? [from] : [join(process.cwd(), 'noop.js'), import.meta.url];
  for (const anchor of anchors) {
    try {
      return createRequire(anchor).resolve(specifier);
    } catch {
      // try the next anchor
    }
  }
  return undefined;
}
