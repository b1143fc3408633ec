import type { LoopwatchConfig } from '../../src/detector/config/index.js';
import type { LoopDetection } from '../../src/detector/types.js';
import { ANCHORS } from './anchors/index.js';
import { loadLabels, type RunLabel } from './labels.js';
import { loopwatchDetections } from './loopwatch.js';
import { corpusName, corpusSize, type Corpus, type EvalRun } from './runs.js';
import { bestAnchor, scoreDetector, type DetectorScore, type RunVerdict } from './score.js';
import { STUCK_REPEATS, stuckFive } from './stuck-five.js';
import type { Split } from './split.js';

export const LOOPWATCH = 'loopwatch';

export interface CorpusResult {
  readonly corpus: string;
  readonly kind: 'real' | 'synthetic';
  /** Set when the result is one split of a source with a held-out test split. */
  readonly split?: Split;
  readonly runs: number;
  readonly calls: number;
  readonly scores: readonly DetectorScore[];
  /** Per detector, per run (file order). */
  readonly verdicts: ReadonlyMap<string, readonly RunVerdict[]>;
  /** loopwatch's detections per run id. */
  readonly detections: ReadonlyMap<string, readonly LoopDetection[]>;
  /** The labels of the whole source (both splits). */
  readonly labels: ReadonlyMap<string, RunLabel>;
  readonly callsPerRun: ReadonlyMap<string, number>;
  /** Per run, the call at which it repeated one call and outcome for the 5th time with nothing new between (`stuckFive`), when it did. */
  readonly stuckAtFive: ReadonlyMap<string, number>;
}

/** loopwatch's verdict: first detection of any level, first critical, and the rule that fired first. */
export function loopwatchVerdict(runId: string, detections: readonly LoopDetection[]): RunVerdict {
  const sorted = [...detections].sort((a, b) => a.callIndex - b.callIndex);
  const first = sorted[0];
  const critical = sorted.find((d) => d.level === 'critical');
  return {
    runId,
    warning: first?.callIndex,
    critical: critical?.callIndex,
    rule: first ? `${first.kind}/${first.rule}` : undefined,
  };
}

export function evaluateCorpus(corpus: Corpus, options: { config?: LoopwatchConfig; labels?: ReadonlyMap<string, RunLabel> } = {}): CorpusResult {
  const labels = options.labels ?? loadLabels(corpus.id);
  const byTrace = loopwatchDetections(corpus, options.config);
  const callsOf = new Map(corpus.runs.map((r) => [r.runId, r.calls.length]));
  const stuckAtFive = new Map<string, number>();
  for (const run of corpus.runs) {
    const at = stuckFive(run);
    if (at !== undefined) stuckAtFive.set(run.runId, at);
  }
  const detections = new Map<string, readonly LoopDetection[]>();
  const verdicts = new Map<string, RunVerdict[]>();
  const lw: RunVerdict[] = [];
  for (const run of corpus.runs) {
    const d = byTrace.get(run.traceId) ?? [];
    detections.set(run.runId, d);
    lw.push(loopwatchVerdict(run.runId, d));
  }
  verdicts.set(LOOPWATCH, lw);
  for (const anchor of ANCHORS) verdicts.set(anchor.name, corpus.runs.map((run) => anchorVerdict(anchor.name, run)));
  const scores = [...verdicts].map(([name, v]) => scoreDetector(name, v, labels, callsOf));
  return {
    ...corpusSize(corpus),
    scores,
    verdicts,
    detections,
    labels,
    callsPerRun: callsOf,
    stuckAtFive,
  };
}

function anchorVerdict(name: string, run: EvalRun): RunVerdict {
  const anchor = ANCHORS.find((a) => a.name === name);
  const v = anchor?.run(run) ?? {};
  return { runId: run.runId, warning: v.warning, critical: v.critical, rule: v.rule };
}

/**
 * The scores of several corpora taken together (runs re-keyed by corpus), per detector: the
 * "all real runs" rows of the table.
 */
export function totalScores(results: readonly CorpusResult[]): DetectorScore[] {
  const labels = new Map<string, RunLabel>();
  const calls = new Map<string, number>();
  const verdicts = new Map<string, RunVerdict[]>();
  for (const r of results) {
    for (const [id, l] of r.labels) labels.set(`${r.corpus}\0${id}`, l);
    for (const [name, vs] of r.verdicts) {
      const list = verdicts.get(name) ?? [];
      for (const v of vs) list.push({ ...v, runId: `${r.corpus}\0${v.runId}` });
      verdicts.set(name, list);
    }
    for (const v of r.verdicts.get(LOOPWATCH) ?? []) calls.set(`${r.corpus}\0${v.runId}`, r.callsPerRun.get(v.runId) ?? 0);
  }
  return [...verdicts].map(([name, vs]) => scoreDetector(name, vs, labels, calls));
}

export interface FloorFailure {
  readonly corpus: string;
  /** `-` for a failure of the whole corpus (behind the best anchor). */
  readonly runId: string;
  readonly problem: 'honest run stopped' | 'loop not caught' | 'loop not stopped by the 5th repeat' | 'fewer loops stopped than the best anchor';
  readonly detail: string;
}

/**
 * The floor loopwatch must hold on every corpus (issue 27): no critical detection on a run
 * labelled honest; every run labelled a loop caught (at least a warning), and stopped by the call
 * at which it repeated one call and outcome for the 5th time with nothing new between
 * (`stuckFive`); and as many loops stopped as the best anchor stops (the one that stops the most
 * among those that stop no honest run there).
 */
export function floorFailures(results: readonly CorpusResult[]): FloorFailure[] {
  const out: FloorFailure[] = [];
  for (const r of results) {
    const best = bestAnchor(r.scores);
    const lw = r.scores.find((s) => s.detector === LOOPWATCH);
    if (best !== undefined && lw !== undefined && lw.loopsStopped < best.loopsStopped) {
      out.push({ corpus: corpusName(r), runId: '-', problem: 'fewer loops stopped than the best anchor', detail: `loopwatch ${lw.loopsStopped}, ${best.detector} ${best.loopsStopped}` });
    }
    for (const v of r.verdicts.get(LOOPWATCH) ?? []) {
      const l = r.labels.get(v.runId);
      if (l?.label === 'honest' && v.critical !== undefined) {
        const d = (r.detections.get(v.runId) ?? []).find((x) => x.level === 'critical');
        out.push({ corpus: corpusName(r), runId: v.runId, problem: 'honest run stopped', detail: d ? `${d.kind}/${d.rule} critical at call ${d.callIndex} (${d.toolName})` : '' });
      }
      if (l?.label === 'loop' && v.warning === undefined) {
        out.push({ corpus: corpusName(r), runId: v.runId, problem: 'loop not caught', detail: `stuck at call ${l.stuckAt}: ${l.reason}` });
      }
      const five = r.stuckAtFive.get(v.runId);
      if (l?.label === 'loop' && five !== undefined && (v.critical === undefined || v.critical > five)) {
        out.push({
          corpus: corpusName(r),
          runId: v.runId,
          problem: 'loop not stopped by the 5th repeat',
          detail: `call ${five} repeats one call and outcome for the ${STUCK_REPEATS}th time with nothing new between; first critical ${v.critical ?? 'none'}`,
        });
      }
    }
  }
  return out;
}
