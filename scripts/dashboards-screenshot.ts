/**
 * `npm run dashboards:screenshot`: scans the report fixture with `loopwatch scan --report` and
 * writes the top of the page, rendered by headless Chromium, to docs/report.png.
 */
import { fileURLToPath } from 'node:url';
import { reportFromFixture, screenshotReport } from '../test/report/support/render.js';

const target = fileURLToPath(new URL('../docs/report.png', import.meta.url));
const { html } = await reportFromFixture();
await screenshotReport(html, target);
console.log(`Wrote ${target}`);
