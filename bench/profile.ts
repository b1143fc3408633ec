/**
 * Runs one lifecycle workload through a pipeline for profiling, outside the comparison:
 *   node --cpu-prof --cpu-prof-dir=prof --import tsx bench/profile.ts [agent|single|non-tool|parentless] [traces] [bare|idle|naive|loopwatch]
 *   node --import tsx bench/support/profile-summary.ts prof/<the largest>.cpuprofile
 * Runs on the built package (dist/), as users do.
 */
import { pipeline, type PipelineKind } from './support/pipeline.js';
import { agentMix, nonToolTraces, parentlessToolCalls, singleToolMix, type Workload } from './support/traces.js';

const WORKLOADS: Record<string, () => Workload> = { agent: agentMix, single: singleToolMix, 'non-tool': nonToolTraces, parentless: parentlessToolCalls };

async function main(): Promise<void> {
  const [name = 'agent', count, kind = 'loopwatch'] = process.argv.slice(2);
  const make = WORKLOADS[name];
  if (!make) throw new Error(`no workload ${name}: ${Object.keys(WORKLOADS).join(', ')}`);
  const w = make();
  const traces = Number(count ?? Math.round(1_000_000 / w.spans));
  const p = pipeline(kind as PipelineKind);
  const perBatch = Math.max(1, Math.floor(512 / w.spans));
  const start = process.cpuUsage();
  for (let i = 1; i <= traces; i++) {
    w.shape(p.tracer, i);
    if (i % perBatch === 0) await p.flush();
  }
  await p.flush();
  const used = process.cpuUsage(start);
  console.log(`${name} × ${traces} traces (${kind}): ${((used.user + used.system) / 1000).toFixed(0)} ms CPU`);
  await p.shutdown();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
