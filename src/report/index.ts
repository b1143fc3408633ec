/** `loopwatch scan --report FILE.html`: collect while scanning, then write one self-contained page. */
export { NO_TEMPLATE, ReportCollector, type ReportData, type TimedDetection, type WorstTrace } from './collect.js';
export { renderReport, type ReportMeta } from './html.js';
