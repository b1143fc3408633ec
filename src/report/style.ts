/** The report's stylesheet, inlined into the page (no external font or file). */
export const REPORT_CSS = `
:root { --fg: #1f2328; --muted: #59636e; --line: #d8dee4; --bg: #f6f8fa; --card: #fff; --ok: #1a7f37; --watch: #b35900; --bad: #c0392b; --neutral: #0a58ca; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 20px 28px 8px; }
h1 { margin: 0; font-size: 22px; }
.sub, .explain { color: var(--muted); margin: 4px 0 10px; }
main { padding: 0 28px 12px; max-width: 1060px; }
h2 { font-size: 16px; margin: 0 0 2px; }
h2.section { margin: 22px 0 2px; }
h3 { font-size: 14px; margin: 0 0 2px; font-weight: 600; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 14px 0; }
.kpis { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px; margin: 10px 0; }
.kpi { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; }
.kpi .value { font-size: 26px; font-weight: 650; }
.kpi .label { font-weight: 600; }
.kpi .hint { color: var(--muted); font-size: 12px; }
.kpi.ok .value { color: var(--ok); } .kpi.watch .value { color: var(--watch); } .kpi.bad .value { color: var(--bad); } .kpi.neutral .value { color: var(--neutral); }
svg.chart { width: 100%; height: auto; display: block; }
svg.strip { max-width: 100%; height: auto; display: block; margin: 6px 0 2px; }
svg .grid { stroke: #eaeef2; } svg .axis { stroke: #8c959f; }
svg .tick { font-size: 11px; fill: var(--muted); }
svg rect.call.failed { stroke: var(--bad); stroke-width: 2; stroke-dasharray: 3 2; }
.legend { list-style: none; padding: 0; margin: 6px 0 0; display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 12.5px; }
.legend.small { font-size: 12px; color: var(--muted); }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
.swatch.failed { background: #fff; border: 2px dashed var(--bad); }
.tri { display: inline-block; width: 0; height: 0; border-left: 6px solid transparent; border-right: 6px solid transparent; border-top: 10px solid; margin-right: 5px; vertical-align: -1px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
table.templates td, table.templates th:not(:first-child) { text-align: right; }
table.templates tbody th { font-weight: 500; }
td.bad { color: var(--bad); font-weight: 600; }
table.detections td { white-space: nowrap; }
table.detections td.msg { color: var(--muted); white-space: normal; }
.pill { color: #fff; border-radius: 9px; padding: 1px 7px; font-size: 11.5px; }
.tag { background: #eef1f5; border-radius: 9px; padding: 1px 8px; font-size: 12px; font-weight: 500; margin-left: 6px; }
footer { color: var(--muted); font-size: 12px; padding: 8px 28px 24px; }
`;
