/**
 * Prints the fingerprints of the JSON values read from stdin (one JSON array of inputs), one hash
 * per line, both sides: the fingerprint stability test runs this in a separate process.
 *   tsx test/support/fingerprint-child.ts < inputs.json
 */
import { readFileSync } from 'node:fs';
import { fingerprint, volatileKeySet } from '../../src/fingerprint/canonical.js';
import { DEFAULT_VOLATILE_ARGUMENT_KEYS, DEFAULT_VOLATILE_RESULT_KEYS } from '../../src/fingerprint/volatile.js';

const inputs = JSON.parse(readFileSync(0, 'utf8')) as unknown[];
const argumentsKeys = volatileKeySet(DEFAULT_VOLATILE_ARGUMENT_KEYS);
const resultKeys = volatileKeySet(DEFAULT_VOLATILE_RESULT_KEYS);
const lines = inputs.map((v) => {
  const a = fingerprint(v, { side: 'arguments', volatileKeys: argumentsKeys });
  const r = fingerprint(v, { side: 'result', volatileKeys: resultKeys });
  return `${a.hash} ${a.informative} ${r.hash} ${r.informative}`;
});
process.stdout.write(`${lines.join('\n')}\n`);
