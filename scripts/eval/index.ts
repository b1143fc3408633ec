/**
 * `npm run eval [-- --json] [--corpus ID ...] [--runs] [--agreement] [--precision] [--config FILE]`: scores
 * loopwatch and the anchors' simple detectors on the labelled real-run corpus
 * (`test/fixtures/real/`) and on the synthetic OTLP fixtures, prints one table, and exits 1 when
 * loopwatch breaks the floor (a critical on a run labelled honest, or a labelled loop not caught).
 */
import { Command, Option } from 'commander';
import type { LoopwatchConfig } from '../../src/detector/config/index.js';
import { loadConfigFile } from '../../src/formats/config-file.js';
import { agreementAll, type Agreement } from './agreement.js';
import { evaluateCorpus, floorFailures, LOOPWATCH, type CorpusResult } from './evaluate.js';
import { loadRealCorpora, loadSyntheticCorpus, SYNTHETIC_ID } from './runs.js';
import { SPLITS, type Split } from './split.js';
import { precisionCensus, type PrecisionCensus } from './precision.js';
import { formatAgreement, formatPrecision, formatRuns, formatTable, resultsJson } from './report.js';

interface Flags {
  json?: boolean;
  corpus?: string[];
  runs?: boolean;
  agreement?: boolean;
  precision?: boolean;
  config?: string;
  split?: Split;
}

async function main(): Promise<number> {
  const program = new Command('eval')
    .option('--json', 'one JSON object: scores per corpus and detector, floor failures, agreement')
    .option('--corpus <id...>', `only these corpora (real source ids, or ${SYNTHETIC_ID})`)
    .option('--runs', 'also list every run some detector flagged or that is labelled a loop')
    .option('--agreement', 'also compare detections on the pseudonymized runs with the originals (needs .tmp/real-originals)')
    .option('--precision', "also count the calls the fingerprint's precision merges (key order, whitespace, volatile values) and the runs it decides")
    .addOption(
      new Option('--split <split>', 'only this split of the sources with a held-out test split (dev: what rule changes may look at; test: scored at the end)').choices(SPLITS),
    )
    .option('--config <file>', 'loopwatch configuration (YAML or JSON) to evaluate instead of the defaults')
    .parse(process.argv);
  const flags = program.opts<Flags>();
  const started = performance.now();
  let config: LoopwatchConfig = {};
  if (flags.config) config = await loadConfigFile(flags.config);
  const only = flags.corpus ?? [];
  const corpora = loadRealCorpora(
    only.filter((c) => c !== SYNTHETIC_ID),
    flags.split ? [flags.split] : SPLITS,
  );
  if (only.length > 0 && !only.some((c) => c !== SYNTHETIC_ID)) corpora.length = 0;
  if ((only.length === 0 || only.includes(SYNTHETIC_ID)) && flags.split !== 'test') corpora.push(loadSyntheticCorpus());
  const results: CorpusResult[] = corpora.map((c) => evaluateCorpus(c, { config }));
  const failures = floorFailures(results);
  const agreement: Agreement[] | undefined = flags.agreement ? agreementAll(only) : undefined;
  const precision: PrecisionCensus[] | undefined = flags.precision ? corpora.map((c) => precisionCensus(c, config)) : undefined;
  const seconds = (performance.now() - started) / 1000;
  if (flags.json) {
    process.stdout.write(JSON.stringify(resultsJson(results, failures, agreement, precision, seconds)) + '\n');
  } else {
    process.stdout.write(formatTable(results));
    if (flags.runs) process.stdout.write(formatRuns(results));
    if (agreement) process.stdout.write(formatAgreement(agreement));
    if (precision) process.stdout.write(formatPrecision(precision));
    const lw = results.flatMap((r) => r.scores.filter((s) => s.detector === LOOPWATCH));
    const unlabelled = lw.reduce((n, s) => n + s.unlabelled, 0);
    if (unlabelled > 0) process.stdout.write(`\n${unlabelled} runs have no label and are not scored.\n`);
    process.stdout.write(
      failures.length === 0
        ? `\nFloor held: no critical on a labelled honest run, every labelled loop caught. (${seconds.toFixed(1)} s)\n`
        : `\nFloor broken (${failures.length}):\n${failures.map((f) => `  ${f.corpus} ${f.runId}: ${f.problem}: ${f.detail}`).join('\n')}\n(${seconds.toFixed(1)} s)\n`,
    );
  }
  return failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`eval: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
  },
);
