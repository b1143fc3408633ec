/**
 * One lifecycle scenario measured in a fresh process (see `lifecycle`): prints the CPU times of
 * its sets as one line of JSON. `node --expose-gc --import tsx bench/lifecycle-child.ts <scenario key> [--quick]`.
 */
import { measureScenario } from './lifecycle.js';

measureScenario(process.argv[2] ?? '', process.argv.includes('--quick')).then(
  (times) => console.log(JSON.stringify(times)),
  (e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  },
);
