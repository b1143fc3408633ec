/**
 * Every limit of `loopwatch serve`, in one table: its flag, its environment variable, its
 * default and its unit. The command builds its options from this table, the server reads the
 * resolved values, and the README's table is checked against it.
 */

export type LimitUnit = 'bytes' | 'ms' | 'count';

export interface LimitSpec {
  readonly flag: string;
  readonly env: string;
  readonly unit: LimitUnit;
  readonly default: number;
  readonly min: number;
  readonly max: number;
  readonly help: string;
}

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

export const LIMITS = {
  maxMemory: {
    flag: '--max-memory',
    env: 'LOOPWATCH_SERVE_MAX_MEMORY',
    unit: 'bytes',
    default: 256 * MiB,
    min: 16 * MiB,
    max: 64 * GiB,
    help: 'memory for data: request bodies being read, traces held, spans waiting for the downstream and remembered traces; past it new data gets 429 (sized for a 1 GiB container)',
  },
  maxBody: {
    flag: '--max-body',
    env: 'LOOPWATCH_SERVE_MAX_BODY',
    unit: 'bytes',
    default: 20 * MiB,
    min: 1 * KiB,
    max: 1 * GiB,
    help: 'largest request body or gRPC message, compressed or not',
  },
  traceWait: {
    flag: '--trace-wait',
    env: 'LOOPWATCH_SERVE_TRACE_WAIT_MS',
    unit: 'ms',
    default: 30_000,
    min: 1,
    max: 86_400_000,
    help: 'a trace whose local root never arrives is complete after this long without a new span',
  },
  quietAfterRoot: {
    flag: '--quiet-after-root',
    env: 'LOOPWATCH_SERVE_QUIET_AFTER_ROOT_MS',
    unit: 'ms',
    default: 1_000,
    min: 1,
    max: 86_400_000,
    help: 'a trace whose local root arrived is complete after this long without a new span (at most --trace-wait)',
  },
  retainTraces: {
    flag: '--retain-traces',
    env: 'LOOPWATCH_SERVE_RETAIN_TRACES',
    unit: 'count',
    default: 10_000,
    min: 0,
    max: 10_000_000,
    help: 'completed traces remembered so that late spans continue them (within a sixteenth of --max-memory)',
  },
  forwardTimeout: {
    flag: '--forward-timeout',
    env: 'LOOPWATCH_SERVE_FORWARD_TIMEOUT_MS',
    unit: 'ms',
    default: 30_000,
    min: 1,
    max: 3_600_000,
    help: 'a forward request without an answer this long is retried (the downstream may have taken it: a duplicate)',
  },
  forwardRetryFor: {
    flag: '--forward-retry-for',
    env: 'LOOPWATCH_SERVE_FORWARD_MAX_ELAPSED_MS',
    unit: 'ms',
    default: 300_000,
    min: 1,
    max: 604_800_000,
    help: 'a batch the downstream keeps refusing is retried this long after its first try, then dropped and counted',
  },
  shutdownGrace: {
    flag: '--shutdown-grace',
    env: 'LOOPWATCH_SERVE_SHUTDOWN_GRACE_MS',
    unit: 'ms',
    default: 30_000,
    min: 0,
    max: 3_600_000,
    help: 'on SIGTERM, how long to keep forwarding what is held and queued before exiting',
  },
  headersTimeout: {
    flag: '--headers-timeout',
    env: 'LOOPWATCH_SERVE_HEADERS_TIMEOUT_MS',
    unit: 'ms',
    default: 10_000,
    min: 1,
    max: 3_600_000,
    help: "a connection's first bytes, and each request's headers, must arrive within this",
  },
  requestTimeout: {
    flag: '--request-timeout',
    env: 'LOOPWATCH_SERVE_REQUEST_TIMEOUT_MS',
    unit: 'ms',
    default: 60_000,
    min: 1,
    max: 3_600_000,
    help: 'a whole request, body included, must arrive within this (at least --headers-timeout)',
  },
  idleTimeout: {
    flag: '--idle-timeout',
    env: 'LOOPWATCH_SERVE_IDLE_TIMEOUT_MS',
    unit: 'ms',
    default: 60_000,
    min: 1,
    max: 3_600_000,
    help: 'a connection with no request in progress is closed after this long',
  },
  maxConnections: {
    flag: '--max-connections',
    env: 'LOOPWATCH_SERVE_MAX_CONNECTIONS',
    unit: 'count',
    default: 8_192,
    min: 1,
    max: 1_000_000,
    help: 'connections open at once; past it new ones are closed (keep it under the open-file limit)',
  },
  spoolMax: {
    flag: '--spool-max',
    env: 'LOOPWATCH_SERVE_SPOOL_MAX',
    unit: 'bytes',
    default: 1 * GiB,
    min: 1 * MiB,
    max: 16 * 1024 * GiB,
    help: 'disk for the --spool folder; past it new data gets 429',
  },
} as const satisfies Record<string, LimitSpec>;

export type LimitName = keyof typeof LIMITS;
export type ServeLimits = { -readonly [K in LimitName]: number };

export const DEFAULT_LIMITS: Readonly<ServeLimits> = Object.fromEntries(Object.entries(LIMITS).map(([k, spec]) => [k, spec.default])) as ServeLimits;

const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, b: 1, k: KiB, kb: 1000, kib: KiB, m: MiB, mb: 1000 ** 2, mib: MiB, g: GiB, gb: 1000 ** 3, gib: GiB, t: 1024 * GiB, tib: 1024 * GiB };
const DURATION_UNITS: Readonly<Record<string, number>> = { '': 1, ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 };

/** A limit's value from its text: sizes take KiB/MiB/GiB (or k, M, G), durations ms, s, m, h; a plain number is bytes or ms. */
export function parseLimit(spec: LimitSpec, text: string, where: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const units = spec.unit === 'bytes' ? SIZE_UNITS : spec.unit === 'ms' ? DURATION_UNITS : { '': 1 };
  const factor = m ? units[(m[2] ?? '').toLowerCase()] : undefined;
  const value = m && factor !== undefined ? Math.round(Number(m[1]) * factor) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < spec.min || value > spec.max) {
    throw new Error(`${where} must be ${describeRange(spec)}, got ${JSON.stringify(text)}`);
  }
  return value;
}

function describeRange(spec: LimitSpec): string {
  const show = (n: number): string => formatLimit(spec.unit, n);
  const how = spec.unit === 'bytes' ? 'a size such as 256MiB' : spec.unit === 'ms' ? 'a duration in ms (or with s, m, h)' : 'a whole number';
  return `${how} from ${show(spec.min)} to ${show(spec.max)}`;
}

export function formatLimit(unit: LimitUnit, n: number): string {
  if (unit === 'bytes') {
    for (const [suffix, size] of [['GiB', GiB], ['MiB', MiB], ['KiB', KiB]] as const) if (n >= size && n % size === 0) return `${n / size}${suffix}`;
    return `${n}`;
  }
  if (unit === 'ms') return n >= 1000 && n % 1000 === 0 ? `${n / 1000}s` : `${n}ms`;
  return `${n}`;
}

/**
 * The limits from flags (already parsed by the command, undefined when not given), else from
 * the environment, else the defaults. Throws with the variable's name when one is malformed.
 */
export function resolveLimits(flags: Partial<Record<LimitName, number>>, env: Readonly<Record<string, string | undefined>>): ServeLimits {
  const limits = { ...DEFAULT_LIMITS };
  for (const [name, spec] of Object.entries(LIMITS) as [LimitName, LimitSpec][]) {
    const flag = flags[name];
    const fromEnv = env[spec.env];
    if (flag !== undefined) limits[name] = flag;
    else if (fromEnv !== undefined && fromEnv !== '') limits[name] = parseLimit(spec, fromEnv, spec.env);
  }
  limits.quietAfterRoot = Math.min(limits.quietAfterRoot, limits.traceWait);
  limits.requestTimeout = Math.max(limits.requestTimeout, limits.headersTimeout);
  return limits;
}

/** How `--max-memory` is shared (see MemoryBudget). */
export const MEMORY_SHARES = {
  /** Open traces, payloads and state: past it the least recently active trace is completed early. */
  held: 1 / 2,
  /** One trace: past it the trace is cut (completed as it is; its later spans continue it). */
  trace: 1 / 8,
  /** Remembered traces. */
  retained: 1 / 16,
} as const;
