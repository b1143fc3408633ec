import { describe, expect, it } from 'vitest';
import { corpusFile, exists } from '../../scripts/corpus/files.js';
import { SOURCES } from '../../scripts/corpus/sources.js';
import { evaluateCorpus, floorFailures, LOOPWATCH, type CorpusResult } from '../../scripts/eval/evaluate.js';
import { loadLabels } from '../../scripts/eval/labels.js';
import { loadRealCorpora, loadSyntheticCorpus, type Corpus } from '../../scripts/eval/runs.js';

/**
 * The floor loopwatch must hold on real runs and on the synthetic fixtures (issue 27): no critical
 * detection on a run labelled honest; every run labelled a loop caught (at least a warning) and
 * stopped by the call that repeats one call and outcome for the 5th time with nothing new between;
 * as many loops stopped per source as the best anchor; at most 1 % of the honest runs warned,
 * and no source above 3 %. Rule changes look at the dev split only: the held-out test split is
 * scored at the end (`LOOPWATCH_SCORE_TEST=1`). The scores themselves are printed by `npm run eval`.
 */

/** Both splits, read for their structure (sources, runs, labels); only the dev split is scored unless asked. */
const real: Corpus[] = loadRealCorpora();
const dev: CorpusResult[] = real.filter((c) => c.split !== 'test').map((c) => evaluateCorpus(c));
const scoreTest = (): CorpusResult[] => real.filter((c) => c.split === 'test').map((c) => evaluateCorpus(c));

/**
 * Where the held-out test splits of the sources added for issue 27 break the floor, as scored at
 * the end of issue 27's rule work (FINDINGS.md, "The test split, scored at the end"; 12 breaks at
 * first look), and the first look of the test splits drawn since (session 5: by id only):
 * listed, not hidden, and scored only on request. A fix comes from a mechanism found
 * on dev runs or a new source, then a freshly drawn test split; issue 27 is done when this is empty.
 */
const TEST_SPLIT_BREAKS = [
  'toolathlon [test] claude-4.5-sonnet/k8s-redis-helm-upgrade: honest run stopped',
  'bfcl-memory-qwen3 [test] Qwen3-4B-Instruct-2507/memory_kv_prereq_16-finance-1: loop not caught',
  'toolathlon-3 [test] -: fewer loops stopped than the best anchor',
  'tau2-leaderboard [test] -: fewer loops stopped than the best anchor',
  'tau2-leaderboard [test] gpt-oss-120b/langchain_agent_airline_2025-11-26_00-37-06/5/0: loop not caught',
  'tau-bench-agentverify [test] -: fewer loops stopped than the best anchor',
];

/**
 * Where the dev split of a source added after the last rule work breaks the floor at its first
 * look (FINDINGS.md, "First look at the session-5 draw"): listed, not hidden, for the engine's
 * next rule work to empty. Session 5's rule work removed `toolathlon-3` `academic-warning` and
 * `openhands-claude35`'s three stopped runs, session 6's `tau2-leaderboard`'s anchor gap (a write
 * resent back to back: 7 → 12 of 12 stopped; FINDINGS.md "Session 6").
 */
const DEV_FIRST_LOOK_BREAKS: string[] = [
  // session 7's draw (FINDINGS.md "First look at the session-7 draw"): loops of three or four identical calls that end by themselves
  'tau-bench-agentverify [dev] -: fewer loops stopped than the best anchor',
];

/** Dev loops stopped after session 6 with session 7's draw (50: FINDINGS.md "Session 7"): a rule change may add to it, not take away. */
const DEV_LOOPS_STOPPED = 50;

/**
 * Sources drawn fresh whose dev split warns more than 3 % of its honest runs at first look, with
 * that first-look count: listed, not hidden, so that the floor holds everywhere else and a rule
 * change that lowers it shows here. Issue 27 is done when this is empty; session 5's rules emptied
 * it of `toolathlon-early` (2 → 0), session 6's of `openhands-claude35` (7 at first look, 4 after
 * session 5, 0 of 34 now) and of session 6's fresh draw `openhands-claude35-2` (3 of 36 at first
 * look, 0 now: FINDINGS.md "Session 6"), session 7's of `swe-agent-lm32b-2` (2 of 58 at first look,
 * 1 now: a re-run right after a write that applied verifies it, FINDINGS.md "Session 7").
 */
const FIRST_LOOK_WARNED_ABOVE_3_PERCENT: Readonly<Record<string, number>> = {};
const synthetic = evaluateCorpus(loadSyntheticCorpus());

describe('the corpus', () => {
  it('holds every real source, each with a few hundred tool calls or more in total', () => {
    expect([...new Set(real.map((c) => c.id))]).toEqual(SOURCES.filter((s) => exists(corpusFile(s.id))).map((s) => s.id));
    expect(real.length).toBeGreaterThanOrEqual(3);
    expect(real.reduce((n, c) => n + c.runs.length, 0)).toBeGreaterThanOrEqual(300);
  });

  it('labels every run, and only runs it holds', () => {
    // a source with a held-out test split comes as two results: its labels cover both
    const runsOf = new Map<string, Set<string>>();
    for (const c of [...real, loadSyntheticCorpus()]) {
      const runs = runsOf.get(c.id) ?? new Set<string>();
      for (const r of c.runs) runs.add(r.runId);
      runsOf.set(c.id, runs);
    }
    for (const [corpus, runs] of runsOf) {
      const labels = loadLabels(corpus);
      expect([...runs].filter((id) => !labels.has(id)), `${corpus}: runs without a label`).toEqual([]);
      expect([...labels.keys()].filter((id) => !runs.has(id)), `${corpus}: labels of runs not in the corpus`).toEqual([]);
    }
  });

  it('holds back a third of every source marked heldOut, by hash, as a test split', () => {
    for (const s of SOURCES.filter((x) => x.heldOut && exists(corpusFile(x.id)))) {
      const parts = real.filter((c) => c.id === s.id);
      expect(parts.map((c) => c.split)).toEqual(['dev', 'test']);
      const [dev, test] = parts.map((c) => c.runs.length) as [number, number];
      expect(test / (dev + test), s.id).toBeGreaterThan(0.2);
      expect(test / (dev + test), s.id).toBeLessThan(0.46);
    }
  });

  it('has real loops to catch on the dev split, not only honest runs', () => {
    const loops = dev.flatMap((r) => r.scores.filter((s) => s.detector === LOOPWATCH)).reduce((n, s) => n + s.loops, 0);
    expect(loops).toBeGreaterThanOrEqual(10);
  });
});

describe('the floor', () => {
  it('holds on the synthetic OTLP fixtures', () => {
    expect(floorFailures([synthetic])).toEqual([]);
  });

  it('holds on the dev split of the real corpus: no honest run stopped, every loop caught and stopped by its 5th repeat, no source behind its best anchor', () => {
    expect(floorFailures(dev).map((f) => `${f.corpus} ${f.runId}: ${f.problem}`)).toEqual(DEV_FIRST_LOOK_BREAKS);
  });

  it(`stops at least ${DEV_LOOPS_STOPPED} of the dev split's loops (session 6)`, () => {
    const stopped = dev.flatMap((r) => r.scores.filter((s) => s.detector === LOOPWATCH)).reduce((n, s) => n + s.loopsStopped, 0);
    expect(stopped).toBeGreaterThanOrEqual(DEV_LOOPS_STOPPED);
  });

  it('warns at most 1 % of the honest runs of the dev split, and no source above 3 %', () => {
    const lw = dev.map((r) => ({ name: r.corpus, s: r.scores.find((x) => x.detector === LOOPWATCH) }));
    const honest = lw.reduce((n, x) => n + (x.s?.honest ?? 0), 0);
    const warned = lw.reduce((n, x) => n + (x.s?.honestWarned ?? 0), 0);
    expect(warned / honest).toBeLessThanOrEqual(0.01);
    for (const x of lw) {
      const limit = FIRST_LOOK_WARNED_ABOVE_3_PERCENT[x.name] ?? Math.floor(0.03 * (x.s?.honest ?? 0));
      expect(x.s?.honestWarned ?? 0, x.name).toBeLessThanOrEqual(limit);
    }
  });

  it('warns no more honest dev runs than after session 7 (3 of 1 719: bfcl-memory-qwen3 rec_sum_prereq_14 and vector_prereq_33, swe-agent-lm32b-2 django-12308), plus the first-look warnings listed above', () => {
    const warned = dev.flatMap((r) => r.scores.filter((s) => s.detector === LOOPWATCH)).reduce((n, s) => n + s.honestWarned, 0);
    const listed = Object.values(FIRST_LOOK_WARNED_ABOVE_3_PERCENT).reduce((a, b) => a + b, 0);
    expect(warned).toBeLessThanOrEqual(3 + listed);
  });

  it.skipIf(process.env.LOOPWATCH_SCORE_TEST !== '1')('breaks on the held-out test split only where it did when scored at the end', () => {
    expect(floorFailures(scoreTest()).map((f) => `${f.corpus} ${f.runId}: ${f.problem}`)).toEqual(TEST_SPLIT_BREAKS);
  });
});

describe('npm run eval', () => {
  it('prints JSON and exits 0 when the floor holds, 1 when it breaks', async () => {
    const { spawnSync } = await import('node:child_process');
    const run = (args: string[]): { status: number | null; json: { floor: { held: boolean }; corpora: Array<{ corpus: string }> } } => {
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/eval/index.ts', '--json', ...args], { encoding: 'utf8' });
      return { status: r.status, json: JSON.parse(r.stdout) as never };
    };
    const synthetic = run(['--corpus', 'synthetic-otlp']);
    expect(synthetic.status).toBe(0);
    expect(synthetic.json.floor.held).toBe(true);
    expect(synthetic.json.corpora.map((c) => c.corpus)).toEqual(['synthetic-otlp']);
    const broken = run(['--corpus', 'swe-agent-lm32b']);
    expect(broken.json.floor.held).toBe(floorFailures(dev.filter((r) => r.corpus === 'swe-agent-lm32b')).length === 0);
    expect(broken.status).toBe(broken.json.floor.held ? 0 : 1);
  });
});
