/**
 * `node --import loopwatch/register app.js` (ESM) or `node --require loopwatch/register app.js`:
 * loopwatch without a code change. Configured by `LOOPWATCH_*` variables (see env.ts and
 * docs/instrumentations.md) and the standard `OTEL_*` ones. Never throws into the app: a problem
 * is printed on stderr and the app starts without loop detection.
 */
import { ConfigError } from '../detector/config.js';
import type { LoopDetection } from '../detector/types.js';
import { LoopDetectionSpanProcessor, type LoopDetectionSpanProcessorOptions } from '../processor.js';
import { attachWhenRegistered } from './attach.js';
import { settingsFromEnv, type LogMode } from './env.js';
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
  const loops = makeProcessor(settings.options, logger(settings.log));
  const mode = loops.engine.config.mode;
  if (settings.register === 'attach') {
    setRegisteredProcessor(loops);
    attachWhenRegistered(loops, settings.attachTimeoutMs, (m) => say(`${m} (mode ${mode})`));
    return;
  }
  const { sdk, describe } = startNodeSdk(loops, process.env);
  setRegisteredProcessor(loops);
  say(`started ${describe}; loop detection mode ${mode}`);
  // Flush what is buffered when the app ends; the same hooks OpenTelemetry's own register uses.
  let stopping = false;
  const shutdown = (): Promise<void> => {
    if (stopping) return Promise.resolve();
    stopping = true;
    return sdk.shutdown().catch((e: unknown) => say(`shutdown failed: ${e instanceof Error ? e.message : String(e)}`));
  };
  process.once('beforeExit', () => void shutdown());
  process.once('SIGTERM', () => {
    void shutdown().finally(() => process.exit(143));
  });
}

try {
  start();
} catch (e) {
  say(`not started: ${e instanceof Error ? e.message : String(e)}`);
}

export { registeredProcessor };
