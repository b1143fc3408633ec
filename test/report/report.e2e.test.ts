/**
 * `loopwatch scan --report` rendered in a real headless Chromium: it loads without a network
 * request or console error, and its charts, tables and worst traces show exactly what the scanned
 * traces hold (worked out from the fixture's spans and `scan --json`, not from the report code).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoopDetection } from '../../src/index.js';
import { agentTrace } from '../support/otlp.js';
import { launchChromium, openReport, type OpenedReport } from './support/browser.js';
import { fixtureTraces, writeReportFixture } from './support/fixture.js';
import { detectionTime, fixtureTruth, rawContent, type FixtureTrace } from './support/fixture-truth.js';
import { pngSize, reportFromFixture, runCli, screenshotReport, SCREENSHOT } from './support/render.js';

const REPO_ROOT = join(import.meta.dirname, '../..');
const UNKNOWN = 'unknown';

let browser: Browser;
let report: OpenedReport;
let html: string;
let htmlFile: string;
let detections: LoopDetection[];
const traces: FixtureTrace[] = fixtureTruth(fixtureTraces());

/**
 * The little of the DOM the page functions below use. They run in the browser; the project's
 * TypeScript has no DOM library, so they declare their elements with this.
 */
interface DomNode {
  getAttribute(name: string): string | null;
  readonly classList: { contains(name: string): boolean };
  readonly textContent: string | null;
  querySelector(selector: string): DomNode | null;
  querySelectorAll(selector: string): Iterable<DomNode>;
  getBBox(): { readonly height: number };
}

interface Bar {
  readonly series: string;
  readonly bucket: number;
  readonly value: number;
  readonly height: number;
}

const countBy = <T>(items: readonly T[], key: (t: T) => string): Map<string, number> => {
  const out = new Map<string, number>();
  for (const i of items) out.set(key(i), (out.get(key(i)) ?? 0) + 1);
  return out;
};
const sortedEntries = (m: ReadonlyMap<string, number>): [string, number][] => [...m].sort(([a], [b]) => a.localeCompare(b));

describe('scan --report in headless Chromium', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    const made = await reportFromFixture();
    htmlFile = made.html;
    html = readFileSync(htmlFile, 'utf8');
    const json = await runCli(['scan', '--json', made.fixture]);
    detections = json.stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as LoopDetection);
    browser = await launchChromium();
    report = await openReport(browser, htmlFile);
  }, 60_000);

  afterAll(async () => {
    await report?.close();
    await browser?.close();
  });

  it('is one self-contained file: no script, no external reference, a CSP that forbids fetching', () => {
    expect(html).not.toMatch(/<script|<link|<iframe|<img|\bsrc=|\bhref=|url\(|@import/i);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`);
  });

  it('renders with no network request besides the file itself and no console error', async () => {
    expect(report.requests).toEqual([report.url]);
    expect(report.consoleErrors).toEqual([]);
    expect(await report.page.title()).toBe('loopwatch scan report');
    expect(await report.page.locator('script').count()).toBe(0);
  });

  it('never shows a tool argument, result or error message', () => {
    const toolNames = new Set(traces.flatMap((t) => t.calls.map((c) => c.tool)));
    const leaked = [...rawContent(traces)].filter((s) => s.length >= 5 && !toolNames.has(s) && html.includes(s));
    expect(rawContent(traces).size).toBeGreaterThan(20);
    expect(leaked).toEqual([]);
  });

  it('summarises the scan: detections, critical stops, traces with loops, loops per 100 tool calls', async () => {
    const toolCalls = traces.reduce((n, t) => n + t.calls.length, 0);
    // critical stops are runs with a critical detection, however many they had
    const criticals = new Set(detections.filter((d) => d.level === 'critical').map((d) => d.traceId)).size;
    const looping = new Set(detections.map((d) => d.traceId)).size;
    expect(detections.length).toBeGreaterThan(20);
    expect(await report.page.locator('.kpi .value').allInnerTexts()).toEqual([
      String(detections.length),
      String(criticals),
      `${looping} of ${traces.length}`,
      ((100 * detections.length) / toolCalls).toFixed(1),
    ]);
  });

  const charts: readonly [string, (d: LoopDetection) => string][] = [
    ['by-template', (d) => d.promptName ?? UNKNOWN],
    ['by-tool', (d) => d.toolName],
    ['by-kind', (d) => d.kind],
  ];

  it.each(charts)('chart %s draws one bar segment per series and time bucket, sized by its count', async (id, key) => {
    const svg = report.page.locator(`svg[data-chart="${id}"]`);
    const size = Number(await svg.getAttribute('data-bucket-ms'));
    const first = Number(await svg.getAttribute('data-first-bucket'));
    const expected = countBy(detections, (d) => `${key(d)} @ ${first + Math.floor((detectionTime(traces, d) - first) / size) * size}`);
    const bars: Bar[] = await svg.locator('rect.bar').evaluateAll((els) =>
      (els as unknown as DomNode[]).map((r) => ({
        series: r.getAttribute('data-series') ?? '',
        bucket: Number(r.getAttribute('data-bucket')),
        value: Number(r.getAttribute('data-value')),
        height: r.getBBox().height,
      })),
    );
    expect(sortedEntries(new Map(bars.map((b) => [`${b.series} @ ${b.bucket}`, b.value])))).toEqual(sortedEntries(expected));
    // Heights are proportional to the counts: one pixel scale for the whole chart.
    const scale = bars.map((b) => b.height / b.value);
    expect(Math.max(...scale) - Math.min(...scale)).toBeLessThan(0.2);
    // The legend lists every series with its total.
    const legend = await report.page
      .locator(`svg[data-chart="${id}"] + ul.legend li`)
      .evaluateAll((els) => (els as unknown as DomNode[]).map((e) => [e.getAttribute('data-series') ?? '', Number(e.querySelector('b')?.textContent)] as [string, number]));
    expect(legend.sort(([a], [b]) => a.localeCompare(b))).toEqual(sortedEntries(countBy(detections, key)));
  });

  it('puts the loops of the fixture in the hour where they happened (the spike is in the last hour)', async () => {
    const svg = report.page.locator('svg[data-chart="by-template"]');
    const bars: Bar[] = await svg
      .locator('rect.bar[data-series="support-triage"]')
      .evaluateAll((els) => (els as unknown as DomNode[]).map((e) => ({ series: '', bucket: Number(e.getAttribute('data-bucket')), value: Number(e.getAttribute('data-value')), height: 0 })));
    const lastHour = Date.parse('2026-11-21T10:00:00Z');
    const late = bars.filter((b) => b.bucket >= lastHour).reduce((n, b) => n + b.value, 0);
    const early = bars.filter((b) => b.bucket < lastHour).reduce((n, b) => n + b.value, 0);
    expect(late).toBeGreaterThan(3 * early);
  });

  it('tabulates every prompt template: traces, traces with loops, tool calls, detections, per 100 calls, critical stops', async () => {
    const rows = await report.page
      .locator('table.templates tbody tr')
      .evaluateAll((els) => (els as unknown as DomNode[]).map((e) => [e.getAttribute('data-template') ?? '', ...[...e.querySelectorAll('td')].map((td) => td.textContent ?? '')]));
    const expected = [...new Set(traces.map((t) => t.prompt ?? UNKNOWN))].map((p) => {
      const own = traces.filter((t) => (t.prompt ?? UNKNOWN) === p);
      const calls = own.reduce((n, t) => n + t.calls.length, 0);
      const loops = detections.filter((d) => (d.promptName ?? UNKNOWN) === p);
      const looping = new Set(loops.map((d) => d.traceId)).size;
      const stopped = new Set(loops.filter((d) => d.level === 'critical').map((d) => d.traceId)).size;
      return [p, String(own.length), String(looping), String(calls), String(loops.length), ((100 * loops.length) / calls).toFixed(1), String(stopped)];
    });
    expect(rows.sort()).toEqual(expected.sort());
  });

  it('shows the 10 worst traces in order, each call as a cell and each detection as a marker on its call', async () => {
    const byTrace = new Map<string, LoopDetection[]>();
    for (const d of detections) byTrace.set(d.traceId, [...(byTrace.get(d.traceId) ?? []), d]);
    const calls = (id: string): number => traces.find((t) => t.traceId === id)?.calls.length ?? 0;
    const crit = (ds: readonly LoopDetection[]): number => ds.filter((d) => d.level === 'critical').length;
    const worst = [...byTrace]
      .sort(([a, x], [b, y]) => crit(y) - crit(x) || y.length - x.length || calls(b) - calls(a) || a.localeCompare(b))
      .slice(0, 10)
      .map(([id]) => id);
    const shown = await report.page.locator('article.trace').evaluateAll((els) => (els as unknown as DomNode[]).map((e) => e.getAttribute('data-trace') ?? ''));
    expect(shown).toEqual(worst);
    for (const id of worst) {
      const article = report.page.locator(`article.trace[data-trace="${id}"]`);
      const trace = traces.find((t) => t.traceId === id);
      const cells = await article.locator('rect.call').evaluateAll((els) => (els as unknown as DomNode[]).map((e) => [e.getAttribute('data-tool') ?? '', e.classList.contains('failed')] as [string, boolean]));
      expect(cells).toEqual(trace?.calls.map((c) => [c.tool, c.failed]));
      const markers = await article.locator('path.marker').evaluateAll((els) => (els as unknown as DomNode[]).map((e) => `${e.getAttribute('data-call') ?? ''} ${e.getAttribute('data-level') ?? ''}`));
      expect(markers).toEqual((byTrace.get(id) ?? []).map((d) => `${d.callIndex} ${d.level}`));
      expect(await article.locator('table.detections tbody tr').count()).toBe(byTrace.get(id)?.length);
    }
  });

  it('renders hostile names as text: no markup from a trace reaches the page', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-report-xss-'));
    const evil = '<img src=x onerror="document.title=1">';
    const tool = '<script>document.title=2</script>';
    const spans = agentTrace({ label: 'xss', prompt: evil, steps: Array.from({ length: 5 }, () => ({ tool, args: { q: 'same' }, result: { r: 'same' } })) });
    const fixture = writeReportFixture(dir, [spans]);
    const out = join(dir, 'report.html');
    expect((await runCli(['scan', '--report', out, fixture])).code).toBe(1);
    const page = await openReport(browser, out);
    try {
      expect(page.requests).toEqual([page.url]);
      expect(page.consoleErrors).toEqual([]);
      expect(await page.page.locator('img, script').count()).toBe(0);
      expect(await page.page.title()).toBe('loopwatch scan report');
      expect(await page.page.locator('table.templates tbody th').allInnerTexts()).toEqual([evil]);
      expect(await page.page.locator('svg[data-chart="by-tool"] + ul.legend li').first().innerText()).toContain(tool);
    } finally {
      await page.close();
    }
  });

  it('gives the same screenshot size as the committed docs/report.png when re-generated', async () => {
    const png = join(mkdtempSync(join(tmpdir(), 'loopwatch-report-png-')), 'report.png');
    await screenshotReport(htmlFile, png);
    expect(pngSize(png)).toEqual(SCREENSHOT);
    const committed = join(REPO_ROOT, 'docs', 'report.png');
    expect(existsSync(committed), 'docs/report.png (npm run dashboards:screenshot)').toBe(true);
    expect(pngSize(committed)).toEqual(SCREENSHOT);
  });
});
