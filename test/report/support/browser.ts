/**
 * Opens a report in Debian's headless Chromium (scripts/setup/40-chromium.sh) through
 * playwright-core, recording every network request, console error and page error.
 */
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/** As the machine notes prescribe: no sandbox as root, and no background connections to Google. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface OpenedReport {
  readonly page: Page;
  readonly url: string;
  /** Every request the page made, the document itself included. */
  readonly requests: string[];
  readonly consoleErrors: string[];
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

export async function openReport(browser: Browser, file: string, viewport = { width: 1120, height: 900 }): Promise<OpenedReport> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  page.on('request', (r) => void requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => void consoleErrors.push(e.message));
  const url = pathToFileURL(file).href;
  await page.goto(url, { waitUntil: 'load' });
  return { page, url, requests, consoleErrors, close: () => context.close() };
}
