import type { Agreement } from './agreement.js';
import { LOOPWATCH, totalScores, type CorpusResult, type FloorFailure } from './evaluate.js';
import type { PrecisionCensus } from './precision.js';
import { corpusName } from './runs.js';
import { bestAnchor, type DetectorScore } from './score.js';

/** The eval's printed table, per-run listing, agreement summary and JSON form. */

function signed(n: number | undefined): string {
  if (n === undefined) return '-';
  const r = Math.round(n * 10) / 10;
  return r > 0 ? `+${r}` : `${r}`;
}

const COLUMNS = ['corpus', 'detector', 'runs', 'calls', 'honest', 'h.warned', 'h.stopped', 'loops', 'caught', 'stopped', 'stuck→warn', 'stuck→crit'];

function row(corpus: string, s: DetectorScore): string[] {
  return [
    corpus,
    s.detector,
    String(s.runs),
    String(s.calls),
    String(s.honest),
    String(s.honestWarned),
    String(s.honestStopped),
    String(s.loops),
    String(s.loopsCaught),
    String(s.loopsStopped),
    signed(s.medianToWarning),
    signed(s.medianToCritical),
  ];
}

export function formatTable(results: readonly CorpusResult[]): string {
  const rows: string[][] = [COLUMNS, ['all real runs'], ['all real runs [test]']];
  for (const r of results) {
    r.scores.forEach((s, i) => rows.push(row(i === 0 ? corpusName(r) : '', s)));
  }
  const widths = COLUMNS.map((_, c) => Math.max(...rows.map((x) => (x[c] ?? '').length)));
  const line = (x: readonly string[]): string => x.map((v, c) => (c < 2 ? v.padEnd(widths[c] ?? 0) : v.padStart(widths[c] ?? 0))).join('  ');
  const out = [line(rows[0] as string[]), widths.map((w) => '-'.repeat(w)).join('  ')];
  const blocks: Array<{ name: string; scores: readonly DetectorScore[] }> = results.map((r) => ({ name: corpusName(r), scores: r.scores }));
  const real = results.filter((r) => r.kind === 'real');
  if (real.length > 1) blocks.push({ name: 'all real runs', scores: totalScores(real) });
  // The held-out splits together, apart from everything a rule change may look at.
  const test = real.filter((r) => r.split === 'test');
  const dev = real.filter((r) => r.split !== 'test');
  if (test.length > 0 && dev.length > 0) {
    blocks.push({ name: 'all real runs [dev]', scores: totalScores(dev) });
    blocks.push({ name: 'all real runs [test]', scores: totalScores(test) });
  }
  blocks.forEach((b, k) => {
    if (k > 0) out.push('');
    b.scores.forEach((s, i) => out.push(line(row(i === 0 ? b.name : '', s))));
    const best = bestAnchor(b.scores);
    const lw = b.scores.find((s) => s.detector === LOOPWATCH);
    if (best && lw && best.loopsStopped > 0) {
      out.push(`${''.padEnd(widths[0] ?? 0)}  best anchor: ${best.detector} stops ${best.loopsStopped} loops; loopwatch ${lw.loopsStopped}${lw.loopsStopped < best.loopsStopped ? ' (BEHIND)' : ''}`);
    }
  });
  return (
    out.join('\n') +
    '\n\nruns/calls: labelled runs scored (unclear left out) and their tool calls. h.warned / h.stopped: honest runs with any detection / a critical.\n' +
    'caught / stopped: loops with any detection / a critical. stuck→warn / stuck→crit: median calls from the labelled stuck call to the first detection / first critical.\n' +
    '[dev] / [test]: the splits of a source with a held-out test split (a third of its runs by hash of the run id); [dev] totals include the sources without one.\n'
  );
}

export function formatRuns(results: readonly CorpusResult[]): string {
  const out: string[] = [];
  for (const r of results) {
    out.push(`\n== ${corpusName(r)}`);
    const lw = r.verdicts.get(LOOPWATCH) ?? [];
    lw.forEach((v, i) => {
      const label = r.labels.get(v.runId);
      const anchors = [...r.verdicts]
        .filter(([name]) => name !== LOOPWATCH)
        .map(([name, vs]) => ({ name, v: vs[i] }))
        .filter((x) => x.v?.warning !== undefined);
      if (v.warning === undefined && anchors.length === 0 && label?.label !== 'loop' && label?.label !== 'unclear') return;
      const ds = (r.detections.get(v.runId) ?? []).map((d) => `${d.callIndex}:${d.kind}/${d.rule}:${d.level}(${d.toolName}×${d.count})`).join(' ');
      const tag = label ? `${label.label}${label.stuckAt !== undefined ? `@${label.stuckAt}` : ''}` : 'unlabelled';
      out.push(`${v.runId}  [${tag}]  loopwatch: ${ds || '-'}  | ${anchors.map((a) => `${a.name} ${a.v?.warning}/${a.v?.critical ?? '-'}`).join(', ') || '-'}`);
    });
  }
  return out.join('\n') + '\n';
}

export function formatAgreement(agreement: readonly Agreement[]): string {
  if (agreement.length === 0) return '\nAgreement: no originals under .tmp/real-originals (run npm run corpus:extract && npm run corpus:build); skipped.\n';
  const runs = agreement.reduce((n, a) => n + a.runs, 0);
  const agreeing = agreement.reduce((n, a) => n + a.agreeing, 0);
  const out = [`\nAgreement, pseudonymized vs original (per run: loopwatch's detections, every anchor's verdict, the fingerprint classes of every call, the classes of user messages and their words): ${agreeing}/${runs} runs`];
  for (const a of agreement) {
    out.push(`  ${a.corpus}: ${a.agreeing}/${a.runs} runs agree; fingerprint classes identical in ${a.sameFingerprintClasses}/${a.runs}; user message classes in ${a.sameUserMessageClasses}/${a.runs}; ${a.detections} loopwatch detections on the originals`);
    for (const m of a.mismatches.slice(0, 20)) out.push(`    ${m.runId} ${m.detector}: original ${m.original || '-'} | pseudonymized ${m.pseudonymized || '-'}`);
  }
  return out.join('\n') + '\n';
}

export function formatPrecision(census: readonly PrecisionCensus[]): string {
  const real = census.filter((c) => c.kind === 'real');
  const calls = real.reduce((n, c) => n + c.calls, 0);
  const merged = real.reduce((n, c) => n + c.argumentCalls + c.resultCalls, 0);
  const changed = real.reduce((n, c) => n + c.changed.length, 0);
  const out = [
    `\nFingerprint precision (within a run and tool: texts that differ but fingerprint alike; detections again with those merges undone). Real runs: ${merged} of ${calls} calls merged, ${changed} runs decided by it`,
  ];
  for (const c of census) {
    const causes = Object.entries(c.byCause)
      .filter(([, n]) => n > 0)
      .map(([cause, n]) => `${n} ${cause}`)
      .join(', ');
    const kept = c.keptMerged > 0 ? ` (${c.keptMerged} not undone: not informative)` : '';
    out.push(
      `  ${c.corpus}: arguments ${c.argumentClasses} classes (${c.argumentCalls} calls), results ${c.resultClasses} (${c.resultCalls})${causes ? `: ${causes}` : ''}; ${c.runsWithMerges}/${c.runs} runs; detections changed in ${c.changed.length}${kept}`,
    );
    for (const x of c.changed.slice(0, 20)) out.push(`    ${x.runId}: merged ${x.merged} | undone ${x.undone}`);
  }
  return out.join('\n') + '\n';
}

export function resultsJson(
  results: readonly CorpusResult[],
  failures: readonly FloorFailure[],
  agreement: readonly Agreement[] | undefined,
  precision: readonly PrecisionCensus[] | undefined,
  seconds: number,
): object {
  return {
    seconds,
    corpora: results.map((r) => ({
      corpus: r.corpus,
      kind: r.kind,
      ...(r.split ? { split: r.split } : {}),
      runs: r.runs,
      calls: r.calls,
      scores: r.scores,
      runsDetail: (r.verdicts.get(LOOPWATCH) ?? []).map((v, i) => ({
        runId: v.runId,
        label: r.labels.get(v.runId) ?? null,
        loopwatch: (r.detections.get(v.runId) ?? []).map((d) => ({ callIndex: d.callIndex, kind: d.kind, rule: d.rule, level: d.level, toolName: d.toolName, count: d.count })),
        anchors: Object.fromEntries([...r.verdicts].filter(([n]) => n !== LOOPWATCH).map(([n, vs]) => [n, { warning: vs[i]?.warning ?? null, critical: vs[i]?.critical ?? null, rule: vs[i]?.rule ?? null }])),
      })),
    })),
    total: totalScores(results.filter((r) => r.kind === 'real')),
    totalDev: totalScores(results.filter((r) => r.kind === 'real' && r.split !== 'test')),
    totalTest: totalScores(results.filter((r) => r.kind === 'real' && r.split === 'test')),
    floor: { held: failures.length === 0, failures },
    ...(agreement ? { agreement } : {}),
    ...(precision ? { precision } : {}),
  };
}
