/**
 * One lifecycle scenario measured in a fresh process (see `lifecycle`): prints its comparison as
 * one line of JSON. `node --expose-gc --import tsx bench/lifecycle-child.ts <scenario index> [--quick]`.
 */
import { measureScenario } from './lifecycle.js';

const index = Number(process.argv[2]);
measureScenario(index, process.argv.includes('--quick')).then(
  (r) => console.log(JSON.stringify(r)),
  (e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  },
);
