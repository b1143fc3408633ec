/**
 * `node --import loopwatch/register app.js` (ESM) or `node --require loopwatch/register app.js`:
 * loopwatch without a code change. Configured by `LOOPWATCH_*` variables (see env.ts and
 * docs/instrumentations.md) and the standard `OTEL_*` ones. Never throws into the app: a problem
 * is printed on stderr and the app starts without loop detection.
 */
import { ConfigError } from '../detector/config/index.js';
import type { LoopDetection } from '../detector/types.js';
import { LoopDetectionSpanProcessor, type LoopDetectionSpanProcessorOptions } from '../processor/index.js';
import { attachWhenRegistered } from './attach.js';
import { settingsFromEnv, type LogMode } from './env.js';
import { flushOnExit } from './exit.js';
import { registeredProcessor, setRegisteredProcessor } from './global.js';
import { startNodeSdk } from './node-sdk.js';

const say = (message: string): void => {
  try {
    process.stderr.write(`loopwatch: ${message}\n`);
  } catch {
    // stderr closed: nothing to do
  }
};

function logger(mode: LogMode): ((d: LoopDetection) => void) | undefined {
  if (mode === 'off') return undefined;
  if (mode === 'json') return (d) => say(JSON.stringify(d));
  return (d) =>
    say(`${d.level} ${d.kind} '${d.toolName}' x${d.count}${d.promptName ? ` prompt=${d.promptName}` : ''} trace=${d.traceId} span=${d.spanId}: ${d.message}`);
}

function makeProcessor(options: LoopDetectionSpanProcessorOptions, onLoop: ((d: LoopDetection) => void) | undefined): LoopDetectionSpanProcessor {
  const withLog = { ...options, ...(onLoop ? { onLoop } : {}) };
  try {
    return new LoopDetectionSpanProcessor(withLog);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    say(`the configuration from LOOPWATCH_* is invalid (${e.message}); using the defaults${options.mode ? ` with mode ${options.mode}` : ''}`);
    return new LoopDetectionSpanProcessor({ ...(options.mode ? { mode: options.mode } : {}), ...(onLoop ? { onLoop } : {}) });
  }
}

function start(): void {
  if (registeredProcessor()) return; // loaded twice (--import and --require, or ESM and CJS builds)
  const settings = settingsFromEnv();
  for (const p of settings.problems) say(p);
  if (settings.register === 'off') return;
  if (settings.register === 'sdk' && sdkDisabled(process.env)) {
    // NodeSDK.start() is a no-op then: say so instead of "started", and stay out of the way.
    say('OTEL_SDK_DISABLED is true: the OpenTelemetry SDK is off, so loopwatch is not started either');
    return;
  }
  const loops = makeProcessor(settings.options, logger(settings.log));
  const mode = loops.engine.config.mode;
  if (settings.register === 'attach') {
    setRegisteredProcessor(loops);
    attachWhenRegistered(loops, settings.attachTimeoutMs, (m) => say(`${m} (mode ${mode})`));
    return;
  }
  const { sdk, describe, endpoints } = startNodeSdk(loops, process.env);
  setRegisteredProcessor(loops);
  say(`started ${describe}; loop detection mode ${mode}`);
  flushOnExit(sdk, endpoints, say);
}

/** OTEL_SDK_DISABLED as the SDK reads it: "true", any case, surrounding spaces ignored. */
function sdkDisabled(env: Readonly<Record<string, string | undefined>>): boolean {
  return env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true';
}

try {
  start();
} catch (e) {
  say(`not started: ${e instanceof Error ? e.message : String(e)}`);
}

export { registeredProcessor };
