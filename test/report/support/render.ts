/**
 * Runs `loopwatch scan --report` in process on a fixture, and renders the result to a PNG: the
 * report tests and `npm run dashboards:screenshot` (docs/report.png) share this path.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { main } from '../../../src/cli/main.js';
import { launchChromium, openReport } from './browser.js';
import { writeReportFixture } from './fixture.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function runCli(args: readonly string[]): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (c: Buffer) => void out.push(c.toString()));
  stderr.on('data', (c: Buffer) => void err.push(c.toString()));
  const code = await main(args, { stdout, stderr, stdin: Readable.from([]), env: {}, interactive: false });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/** The docs screenshot: the report's top (summary, the template chart and table, the tool chart). */
export const SCREENSHOT = { width: 1120, height: 1262 } as const;

/** Scans the report fixture into `dir`/report.html; returns its path and the CLI run. */
export async function reportFromFixture(dir = mkdtempSync(join(tmpdir(), 'loopwatch-report-'))): Promise<{ readonly html: string; readonly fixture: string; readonly run: CliRun }> {
  const fixture = writeReportFixture(dir);
  const html = join(dir, 'report.html');
  const run = await runCli(['scan', '--report', html, fixture]);
  if (run.code !== 1) throw new Error(`scan --report exited ${run.code}: ${run.stderr}`);
  return { html, fixture, run };
}

/** Renders `html` in headless Chromium and writes the top of the page to `png`. */
export async function screenshotReport(html: string, png: string): Promise<void> {
  const browser = await launchChromium();
  try {
    const opened = await openReport(browser, html, { width: SCREENSHOT.width, height: 900 });
    await opened.page.screenshot({ path: png, fullPage: true, clip: { x: 0, y: 0, ...SCREENSHOT } });
    await opened.close();
  } finally {
    await browser.close();
  }
}

/** Width and height from a PNG's IHDR chunk (and a check that it is a PNG). */
export function pngSize(file: string): { readonly width: number; readonly height: number } {
  const b = readFileSync(file);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (b.length < 24 || !b.subarray(0, 8).equals(signature) || b.toString('ascii', 12, 16) !== 'IHDR') throw new Error(`${file} is not a PNG`);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}
