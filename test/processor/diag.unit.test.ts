/**
 * loopwatch's one way to `diag`: a component logger under the namespace `loopwatch`, and the
 * helpers that contain failures of user code. None of them may throw, whatever the logger does.
 */
import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { callContained, log, notifyContained } from '../../src/otel/diag.js';

function capture(): Array<{ level: string; args: unknown[] }> {
  const seen: Array<{ level: string; args: unknown[] }> = [];
  const at = (level: string) => (...args: unknown[]) => void seen.push({ level, args });
  const logger: DiagLogger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), verbose: at('verbose') };
  diag.disable(); // else setLogger warns the previous logger that it is replaced
  diag.setLogger(logger, DiagLogLevel.INFO); // (ALL would capture the API's own registration message)
  return seen;
}

afterEach(() => diag.disable());

describe('diag', () => {
  it('writes under the namespace loopwatch, as OpenTelemetry components do', () => {
    const seen = capture();
    log.warn('something to know');
    expect(seen).toEqual([{ level: 'warn', args: ['loopwatch', 'something to know'] }]);
  });

  it('contains a throwing logger', () => {
    const boom = (): never => {
      throw new Error('logger exploded');
    };
    diag.disable();
    diag.setLogger({ error: boom, warn: boom, info: boom, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.ALL);
    expect(() => log.error('x')).not.toThrow();
    expect(callContained('a callback', boom, 7)).toBe(7);
    expect(() => notifyContained('a callback', boom)).not.toThrow();
  });

  it('reports a throwing callback and a rejecting one, and returns the fallback', async () => {
    const seen = capture();
    expect(
      callContained('the resolver', () => {
        throw new Error('resolver broke');
      }, 'fallback'),
    ).toBe('fallback');
    notifyContained('onLoop', async () => Promise.reject(new Error('async broke')));
    await new Promise((r) => setImmediate(r));
    expect(seen.map((s) => s.args.join(' '))).toEqual([
      'loopwatch the resolver failed and was contained: resolver broke',
      'loopwatch onLoop (async) failed and was contained: async broke',
    ]);
  });
});
