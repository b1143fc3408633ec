import { expect } from 'vitest';
import { sleep } from './process.js';

/**
 * Polls `read` until it equals `expected`, then checks it again after `settleMs` (a late
 * duplicate would show up there), and asserts with a diff if it never matched.
 */
export async function expectEventuallyEqual<T>(
  read: () => Promise<T>,
  expected: T,
  options: { timeoutMs: number; settleMs?: number; what: string },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await read();
      lastError = undefined;
      if (JSON.stringify(last) === JSON.stringify(expected)) break;
    } catch (e) {
      lastError = e;
    }
    await sleep(500);
  }
  if (lastError !== undefined) throw lastError;
  // vitest shortens large objects in its message; the JSON makes a mismatch readable in CI logs.
  expect(last, `${options.what} (never matched within ${options.timeoutMs} ms)\n got:  ${brief(last)}\n want: ${brief(expected)}`).toEqual(expected);
  if (options.settleMs) {
    await sleep(options.settleMs);
    const again = await read();
    expect(again, `${options.what} (changed after matching)\n got:  ${brief(again)}\n want: ${brief(expected)}`).toEqual(expected);
  }
}

function brief(value: unknown): string {
  const json = JSON.stringify(value) ?? 'undefined';
  return json.length > 3000 ? `${json.slice(0, 3000)}...` : json;
}
