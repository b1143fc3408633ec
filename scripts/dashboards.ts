/** `npm run dashboards`: regenerates dashboards/*.json, provisioning files and the panel docs. */
import { fileURLToPath } from 'node:url';
import { runGenerate } from '../dashboards/src/generate.js';

process.exitCode = runGenerate(process.argv.slice(2), fileURLToPath(new URL('..', import.meta.url)));
