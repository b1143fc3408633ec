// Preloaded into a bench process (`--import`): the start (CLOCK_MONOTONIC, ms: the clock every
// process shares, as `process.hrtime`) and duration of each of its garbage collections, and their
// kind (1: a young-generation scavenge), written at exit to `$BENCH_GC_DIR/<pid>.json`.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';

const dir = process.env.BENCH_GC_DIR;
if (dir) {
  const gcs = [];
  const obs = new PerformanceObserver((list) => {
    const nowHr = Number(process.hrtime.bigint()) / 1e6;
    const nowPerf = performance.now();
    for (const e of list.getEntries()) gcs.push([nowHr - (nowPerf - e.startTime), e.duration, e.detail?.kind ?? 0]);
  });
  obs.observe({ entryTypes: ['gc'] });
  process.on('exit', () => {
    try {
      writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(gcs));
    } catch {
      // the bench reports no GC figure for this process
    }
  });
}
