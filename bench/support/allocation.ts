import { Session, type HeapProfiler } from 'node:inspector/promises';

/**
 * Bytes allocated while `work` runs, by V8's sampling heap profiler with the objects that the
 * collector has freed since counted too: what a piece of code puts through the allocator (and so
 * makes the collector do), not what it keeps. The sum of the samples' sizes estimates the total.
 */
export async function allocated(work: () => Promise<void>, samplingInterval = 4096): Promise<number> {
  const profile = await allocationProfile(work, samplingInterval);
  let total = 0;
  const stack = [profile.head];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    total += node.selfSize;
    stack.push(...node.children);
  }
  return total;
}

/** The sampling heap profile of `work`, freed objects included (what `allocated` sums; a `.heapprofile` for DevTools). */
export async function allocationProfile(work: () => Promise<void>, samplingInterval = 4096): Promise<HeapProfiler.SamplingHeapProfile> {
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.enable');
    // the two flags are in V8's protocol (Node 20 included), not yet in @types/node
    const params = { samplingInterval, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
    await session.post('HeapProfiler.startSampling', params as { samplingInterval: number });
    await work();
    return (await session.post('HeapProfiler.stopSampling')).profile;
  } finally {
    await session.post('HeapProfiler.disable').catch(() => undefined);
    session.disconnect();
  }
}
