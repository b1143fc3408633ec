import { median, quantile } from './report.js';

/** A unit of work measured in rounds: `round` does one (sync or async), after an untimed `prepare`. */
export interface Contender {
  readonly name: string;
  round(): void | Promise<void>;
  prepare?(): void;
}

export interface InterleaveOptions {
  /** Rounds of each contender before measuring (JIT, caches). */
  readonly warmupRounds: number;
  /** Sets measured: each runs every contender once. */
  readonly sets: number;
}

/**
 * Several contenders measured side by side in one process: each set runs every contender once,
 * the order rotating from set to set (ABC, BCA, CAB, and reversed on odd rotations) so that no
 * contender always follows the same one and drift hits all alike. Returns the CPU time of each
 * contender in each set, `times[contender][set]`: figures are ratios within a set.
 */
export async function interleaved(contenders: readonly Contender[], options: InterleaveOptions): Promise<number[][]> {
  const n = contenders.length;
  for (let i = 0; i < options.warmupRounds; i++) {
    for (const c of contenders) await timed(c);
  }
  const times = contenders.map(() => [] as number[]);
  for (let set = 0; set < options.sets; set++) {
    const rotation = set % n;
    const reversed = Math.floor(set / n) % 2 === 1;
    for (let k = 0; k < n; k++) {
      const index = reversed ? (rotation - k + n) % n : (rotation + k) % n;
      const c = contenders[index] as Contender;
      (times[index] as number[])[set] = await timed(c);
    }
  }
  return times;
}

/** Median and quartiles of a per-set statistic. */
export interface Spread {
  readonly median: number;
  readonly p25: number;
  readonly p75: number;
  readonly n: number;
}

export function spreadOf(xs: readonly number[]): Spread {
  return { median: median(xs), p25: quantile(xs, 0.25), p75: quantile(xs, 0.75), n: xs.length };
}

/**
 * CPU time of one round (this process, all threads: the garbage collector's helpers count). On a
 * shared machine wall time also counts the time other processes hold the core, which is noise
 * here; CPU time does not.
 */
async function timed(c: Contender): Promise<number> {
  c.prepare?.();
  const start = process.cpuUsage();
  await c.round();
  const used = process.cpuUsage(start);
  return used.user + used.system;
}
