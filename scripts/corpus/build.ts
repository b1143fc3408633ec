/**
 * Builds the committed corpus from the originals: `npm run corpus:build [-- source-id...]`.
 * Each run becomes one OTLP/JSON line; the pseudonymized lines go to
 * `test/fixtures/real/<id>.otlp.jsonl.gz` (committed), the same runs unpseudonymized to
 * `.tmp/real-originals/<id>.otlp.jsonl.gz` (for the agreement check, never committed).
 */
import { basename } from 'node:path';
import { corpusFile, exists, originalOtlpFile, originalRunsFile, readLines, writeLines } from './files.js';
import { runToOtlp } from './otlp.js';
import { pseudonymizeRun, pseudonymKey } from './pseudonymize-run.js';
import type { CorpusRun } from './run.js';
import { SOURCES } from './sources.js';

function main(): void {
  const wanted = process.argv.slice(2);
  const key = pseudonymKey();
  for (const spec of SOURCES) {
    if (wanted.length > 0 && !wanted.includes(spec.id)) continue;
    const from = originalRunsFile(spec.id);
    if (!exists(from)) {
      console.error(`${spec.id}: no originals at ${from} (run npm run corpus:extract first); skipped`);
      continue;
    }
    const runs = readLines(from).map((l) => JSON.parse(l) as CorpusRun);
    writeLines(originalOtlpFile(spec.id), runs.map((r) => JSON.stringify(runToOtlp(r))));
    writeLines(corpusFile(spec.id), runs.map((r) => JSON.stringify(runToOtlp(pseudonymizeRun(r, key)))));
    console.log(`${spec.id}: ${runs.length} runs written to ${corpusFile(spec.id)}`);
  }
}

if (process.argv[1] && import.meta.url.endsWith(basename(process.argv[1]))) main();
