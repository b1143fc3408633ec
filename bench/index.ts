/**
 * `npm run bench`: what loopwatch costs the app it watches, measured side by side in one run.
 *   node --expose-gc --import tsx bench/index.ts [--quick] [--only=lifecycle,engine,memory,churn,scan,serve,mcp] [--scenario=agent,single,...]
 * Opt-in sections, run only when named: `--only=serve-limits [--repro=flood,sigterm,idle,evict,corrupt,slow-sink,kill,kill-spool]`
 * (issue 28's full-size reproductions; LOOPWATCH_BENCH_CLI=path/to/cli.js measures another build)
 * and `--only=soak [--soak-minutes=10]` (serve under mixed traffic for ten minutes).
 * Ratios, not times: each figure compares loopwatch with the same work without it, in the same
 * process, in alternating rounds. Measures the built package (dist/), as users run it.
 * `--quick` shrinks every section to seconds (the smoke test); figures are then only indicative.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engineFigures } from './engine.js';
import { lifecycle } from './lifecycle.js';
import { mcpFigures } from './mcp.js';
import { churnFigures, memoryFigures } from './memory.js';
import { scanFigures } from './scan.js';
import { serveFigures } from './serve.js';
import { serveLimitFigures } from './serve-limits.js';
import { soakFigures } from './soak.js';
import { printSection, type Figure } from './support/report.js';

const scenarios = process.argv.find((a) => a.startsWith('--scenario='))?.slice('--scenario='.length).split(',');

const listArg = (name: string): string[] | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3).split(',');
const repro = listArg('repro');
const soakMinutes = Number(listArg('soak-minutes')?.[0] ?? 10);

/** `optIn`: minutes long, run only when `--only` names it. */
const SECTIONS: Record<string, { title: string; optIn?: boolean; run: (quick: boolean) => Promise<Figure[]> }> = {
  lifecycle: { title: 'Span lifecycle, with loopwatch ÷ without', run: (quick) => lifecycle({ quick, ...(scenarios ? { only: scenarios } : {}) }) },
  engine: { title: 'Engine cost per tool call as the history grows, fingerprint cost per KB, beside the naive detector', run: (quick) => engineFigures({ quick }) },
  memory: { title: 'Memory', run: (quick) => memoryFigures({ quick }) },
  churn: { title: 'Churn', run: (quick) => churnFigures({ quick }) },
  scan: { title: 'loopwatch scan', run: (quick) => scanFigures({ quick }) },
  serve: { title: 'loopwatch serve', run: (quick) => serveFigures({ quick }) },
  mcp: { title: 'loopwatch mcp (stdio proxy beside a direct connection)', run: (quick) => mcpFigures({ quick }) },
  'serve-limits': { title: 'loopwatch serve at its limits (issue 28 reproductions)', optIn: true, run: (quick) => serveLimitFigures({ quick, ...(repro ? { only: repro } : {}) }) },
  soak: { title: 'loopwatch serve soak', optIn: true, run: (quick) => soakFigures({ quick, minutes: soakMinutes }) },
};

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  if (!existsSync(join(root, 'dist', 'index.js')) || !existsSync(join(root, 'packages', 'cli', 'dist', 'cli.js'))) {
    console.error('bench: build first (npm run build); npm run bench does');
    process.exitCode = 2;
    return;
  }
  console.log(`loopwatch bench${quick ? ' (quick: indicative only)' : ''}: node ${process.version}, ${process.platform}/${process.arch}`);
  const all: Figure[] = [];
  for (const [key, section] of Object.entries(SECTIONS)) {
    if (only ? !only.includes(key) : section.optIn) continue;
    const started = Date.now();
    const figures = await section.run(quick);
    printSection(`${section.title} (${((Date.now() - started) / 1000).toFixed(0)} s)`, figures);
    all.push(...figures);
  }
  const targets = all.filter((f) => f.met !== undefined);
  printSection('Targets', targets);
  const missed = targets.filter((f) => !f.met).length;
  console.log(`\n${targets.length - missed} of ${targets.length} targets met.`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
