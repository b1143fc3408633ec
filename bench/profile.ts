/**
 * Runs one lifecycle workload through a pipeline for profiling, outside the comparison:
 *   node --cpu-prof --cpu-prof-dir=prof --import tsx bench/profile.ts [agent|agent-tiny|single|non-tool|parentless] [traces] [bare|idle|naive|loopwatch]
 *   node --import tsx bench/profile.ts agent 4000 loopwatch --heap=prof/agent.heapprofile
 *   node --import tsx bench/support/profile-summary.ts prof/<the largest>.cpuprofile (or the .heapprofile)
 * With `--heap=FILE`, V8's sampling heap profile of the run (freed objects included: what was
 * allocated, not what stayed) is written to FILE. Runs on the built package (dist/), as users do.
 */
import { writeFileSync } from 'node:fs';
import { allocationProfile } from './support/allocation.js';
import { pipeline, type PipelineKind } from './support/pipeline.js';
import { agentMix, nonToolTraces, parentlessToolCalls, singleToolMix, type Workload } from './support/traces.js';

const WORKLOADS: Record<string, () => Workload> = { agent: () => agentMix('json'), 'agent-tiny': () => agentMix('tiny'), single: singleToolMix, 'non-tool': nonToolTraces, parentless: parentlessToolCalls };

async function main(): Promise<void> {
  const heapFile = process.argv.find((a) => a.startsWith('--heap='))?.slice('--heap='.length);
  const [name = 'agent', count, kind = 'loopwatch'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const make = WORKLOADS[name];
  if (!make) throw new Error(`no workload ${name}: ${Object.keys(WORKLOADS).join(', ')}`);
  const w = make();
  const traces = Number(count ?? Math.round(1_000_000 / w.spans));
  const p = pipeline(kind as PipelineKind);
  const perBatch = Math.max(1, Math.floor(512 / w.spans));
  const run = async (from: number, to: number): Promise<void> => {
    for (let i = from; i <= to; i++) {
      w.shape(p.tracer, i);
      if (i % perBatch === 0) await p.flush();
    }
    await p.flush();
  };
  const start = process.cpuUsage();
  if (heapFile === undefined) {
    await run(1, traces);
  } else {
    // warmed up first: the profile is of the steady state
    await run(1, Math.ceil(traces / 4));
    const profile = await allocationProfile(() => run(traces + 1, 2 * traces));
    writeFileSync(heapFile, JSON.stringify(profile));
  }
  const used = process.cpuUsage(start);
  console.log(`${name} × ${traces} traces (${kind}): ${((used.user + used.system) / 1000).toFixed(0)} ms CPU${heapFile ? `, allocation profile in ${heapFile}` : ''}`);
  await p.shutdown();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
