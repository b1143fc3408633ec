import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PIPELINE_KINDS, pipeline, type ExportKind, type Pipeline, type PipelineKind } from './support/pipeline.js';
import { median, ratio, type Figure } from './support/report.js';
import { interleaved, spreadOf, type Contender, type Spread } from './support/side-by-side.js';
import { agentMix, agentSteps, nonToolTraces, oneCallTraces, parentlessToolCalls, singleToolMix, writeFileTraces, type Workload } from './support/traces.js';

/**
 * The span lifecycle (start with attributes, set more, end, export through a batch processor) of
 * whole traces, with loopwatch and without, side by side, each round of each contender running
 * the same traces (see `support/traces.ts` for the shapes). The contenders: bare (no second
 * processor), an idle processor (empty hooks: the floor of any processor), loopwatch, and in the
 * yardstick scenario the naive detector, the plain hash of arguments and results and V8's
 * `JSON.parse` of them (`support/naive.ts`). A contender exports to nothing (the no-op pipeline,
 * whose cost is the SDK's own) or, with `+otlp`, encodes every batch as an OTLP/protobuf request
 * as every real exporter does: the pipeline users run, which the headline rows are priced against.
 *
 * Why two mixes: the single-tool mix (the bench before issue 17) has one short trace per tool call
 * and never a repeated tool: until issue 19 the first call of each tool was not even fingerprinted
 * (it waited as text for the tool to come back), so this shape measured almost nothing of
 * loopwatch's work on tool calls. The agent mix is what agents do: tens of model calls, a tool
 * repeated with structured JSON arguments and results, so its tool calls are fingerprinted and
 * recorded, and it carries the targets.
 */

/**
 * Spans a batch is exported at: the batch processor's default batch size. An app's event loop
 * turns between its spans, so the batch processor exports each batch as it fills and its queue
 * stays short. A round of the bench is one synchronous loop, where that export could never run:
 * it is started here instead, every `BATCH_SPANS` spans. Holding a whole round of spans (15 000)
 * until the end would make every young-generation collection copy all of them, a cost no app
 * pays, paid by both sides and varying from round to round with where collections fall (it
 * buried the difference in noise: quartiles of ±15 % instead of ±3 %).
 */
const BATCH_SPANS = 512;

function contender(name: string, p: Pipeline, w: Workload, tracesPerRound: number): Contender {
  const tracesPerBatch = Math.max(1, Math.floor(BATCH_SPANS / w.spans));
  let i = 0;
  return {
    name,
    round: async () => {
      for (let n = 1; n <= tracesPerRound; n++) {
        w.shape(p.tracer, i++);
        if (n % tracesPerBatch === 0) await p.flush();
      }
      await p.flush();
    },
  };
}

export interface LifecycleOptions {
  readonly quick: boolean;
}

/** Issue 30's targets: the agent mix against the pipeline users run (one exporting OTLP/protobuf) and against the no-op one. */
export const AGENT_OTLP_TARGET = 1.15;
export const AGENT_NOOP_TARGET = 1.45;
/** What loopwatch adds per agent step (per trace: the same fraction) ÷ what the SDK itself costs there (the no-op pipeline). */
export const STEP_FRACTION_TARGET = 0.45;
/**
 * CPU µs on this 2-core VM when issue 30 set them, a bare agent-mix trace then costing about
 * `REFERENCE_BARE_US`: they orient (under the shared machine's load every µs figure grows), the
 * fractions of the same run's bare trace decide.
 */
export const REFERENCE_BARE_US = 105;
export const PER_TRACE_US_TARGET = 45;
export const PER_CALL_US_TARGET = 9;
export const OUTSIDE_FINGERPRINT_US_TARGET = 15;
/** The work outside the fingerprint as a fraction of the SDK's own cost of the trace: 15 µs of 105. */
export const OUTSIDE_FINGERPRINT_TARGET = OUTSIDE_FINGERPRINT_US_TARGET / REFERENCE_BARE_US;
/** Traces without tool spans: loopwatch ÷ bare at most this much above the idle processor ÷ bare (the no-op pipeline). */
export const NON_TOOL_ABOVE_IDLE_TARGET = 0.05;

/**
 * What one contender runs, by key: `kind[+otlp][@variant]` — what runs ahead of the batch
 * processor (`PipelineKind`), `+otlp` when every batch is encoded as an OTLP/protobuf request (as
 * an OTLP exporter does before it sends: what users run), and the scenario's workload variant
 * (default: its first).
 */
type Entrant = string;

/** Times of one set, by contender key. */
type SetTimes = Readonly<Record<Entrant, number>>;

interface Row {
  readonly name: string;
  /** The figure of one set; NaN when the set lacks a contender. */
  readonly of: (t: SetTimes, w: Workload, tracesPerRound: number) => number;
  /** `met` absent: the target orients only (printed, not counted). */
  readonly target?: { readonly text: string; readonly met?: (median: number) => boolean };
  /** Formats the median (default: a ratio). */
  readonly format?: (median: number) => string;
  /** More about the figure, from the per-set times (absolute CPU times, for the report only). */
  readonly detail?: (sets: readonly SetTimes[], w: Workload, tracesPerRound: number) => string;
}

interface Scenario {
  readonly key: string;
  /** The workloads by variant name; the first is the default (and sizes the rows: spans, tool calls). */
  readonly workloads: Readonly<Record<string, () => Workload>>;
  readonly contenders: readonly Entrant[];
  readonly traces: number;
  readonly sets: number;
  /** Fresh processes the comparison runs in (see `lifecycle`). */
  readonly processes: number;
  readonly rows: readonly Row[];
}

const at = (t: SetTimes, key: Entrant): number => t[key] ?? NaN;
const over = (a: Entrant, b: Entrant) => (t: SetTimes): number => at(t, a) / at(t, b);
/** What `a` adds over `b`, as a fraction of `of`. */
const addedOver = (a: Entrant, b: Entrant, of: Entrant) => (t: SetTimes): number => (at(t, a) - at(t, b)) / at(t, of);
/** CPU µs per trace that `a` adds over `b` (the times are µs per round). */
const usPerTrace = (a: Entrant, b: Entrant) => (t: SetTimes, _w: Workload, traces: number): number => (at(t, a) - at(t, b)) / traces;

/** What a contender adds over the idle processor, as a multiple of what the naive detector adds (per set). */
const overNaive = (key: Entrant) => (t: SetTimes): number => (at(t, key) - at(t, 'idle')) / (at(t, 'naive') - at(t, 'idle'));

/** CPU µs per tool call a contender adds over the idle processor, median over the sets. */
function perCall(key: Entrant) {
  return (sets: readonly SetTimes[], w: Workload, traces: number): number => median(sets.map((t) => (at(t, key) - at(t, 'idle')) / (traces * w.toolCalls)));
}

const us = (m: number): string => `${m.toFixed(1)} µs`;

/** A scenario of one row: loopwatch ÷ bare, nothing else measured. */
function againstBare(key: string, workload: () => Workload, name: string, size: Pick<Scenario, 'traces' | 'sets' | 'processes'>): Scenario {
  return { key, workloads: { default: workload }, contenders: ['bare', 'loopwatch'], ...size, rows: [{ name: `${name} ÷ bare`, of: over('loopwatch', 'bare') }] };
}

const AGENT = 'agent mix (50-span traces: 44 model calls, 5 tool calls, a tool repeated, 1 KB JSON arguments and results)';

const SCENARIOS: readonly Scenario[] = [
  {
    // The headline (issue 30): priced against what users run. Every real exporter encodes its
    // spans (OTLP/protobuf here, encoding included, nothing sent); the no-op pipeline, which
    // does nothing with them, is kept for reference and is what "the SDK's own cost" means.
    key: 'agent',
    workloads: { json: () => agentMix('json'), tiny: () => agentMix('tiny') },
    contenders: ['bare', 'idle', 'loopwatch', 'bare+otlp', 'loopwatch+otlp', 'idle@tiny', 'loopwatch@tiny'],
    traces: 120,
    sets: 30,
    processes: 5,
    rows: [
      {
        name: `${AGENT} ÷ the same pipeline exporting OTLP/protobuf (encoding included)`,
        of: over('loopwatch+otlp', 'bare+otlp'),
        target: { text: `≤ ${ratio(AGENT_OTLP_TARGET)}`, met: (m) => m <= AGENT_OTLP_TARGET },
      },
      {
        name: 'agent mix ÷ the no-op pipeline (exports to nothing: the reference)',
        of: over('loopwatch', 'bare'),
        target: { text: `≤ ${ratio(AGENT_NOOP_TARGET)}`, met: (m) => m <= AGENT_NOOP_TARGET },
      },
      {
        name: "agent mix, per agent step: what loopwatch adds ÷ the SDK's own cost (the no-op pipeline's, same spans)",
        of: addedOver('loopwatch', 'bare', 'bare'),
        format: ratio,
        target: { text: `≤ ${ratio(STEP_FRACTION_TARGET)}`, met: (m) => m <= STEP_FRACTION_TARGET },
      },
      {
        name: 'agent mix, CPU loopwatch adds per trace (the no-op pipeline)',
        of: usPerTrace('loopwatch', 'bare'),
        format: us,
        // absolute: the fraction above decides, this orients (the µs move with the machine's load)
        target: { text: `≤ ${PER_TRACE_US_TARGET} µs at ${REFERENCE_BARE_US} µs a bare trace` },
        detail: (sets, _w, traces) => `the SDK's own (bare) ${us(median(sets.map((t) => at(t, 'bare') / traces)))} a trace, with OTLP encoding ${us(median(sets.map((t) => at(t, 'bare+otlp') / traces)))}`,
      },
      {
        name: 'agent mix, CPU per tool call all-in (what loopwatch adds per trace ÷ its 5 tool calls)',
        of: (t, w, traces) => usPerTrace('loopwatch', 'bare')(t, w, traces) / w.toolCalls,
        format: us,
        target: { text: `≤ ${PER_CALL_US_TARGET} µs at ${REFERENCE_BARE_US} µs a bare trace` },
      },
      {
        name:
          "agent mix, outside the fingerprint: what loopwatch adds over the idle processor on the same traces with few-byte arguments and results (gate, span reading, usage and cost, rules) ÷ the SDK's own cost of the agent mix",
        of: (t) => (at(t, 'loopwatch@tiny') - at(t, 'idle@tiny')) / at(t, 'bare'),
        target: { text: `≤ ${ratio(OUTSIDE_FINGERPRINT_TARGET)} (${OUTSIDE_FINGERPRINT_US_TARGET} µs of ${REFERENCE_BARE_US})`, met: (m) => m <= OUTSIDE_FINGERPRINT_TARGET },
        detail: (sets, w, traces) =>
          `${us(median(sets.map((t) => usPerTrace('loopwatch@tiny', 'idle@tiny')(t, w, traces))))} a trace; so the fingerprints of its 10 KB cost ${us(median(sets.map((t) => (at(t, 'loopwatch') - at(t, 'idle') - (at(t, 'loopwatch@tiny') - at(t, 'idle@tiny'))) / traces)))} a trace in place`,
      },
      { name: 'agent mix ÷ an idle span processor', of: over('loopwatch', 'idle') },
      { name: 'agent mix, the idle span processor ÷ bare (the floor of any processor)', of: over('idle', 'bare') },
      { name: "agent mix, OTLP encoding: the OTLP-encoding pipeline ÷ the no-op one (bare, what the exporter's encoding costs)", of: over('bare+otlp', 'bare') },
    ],
  },
  {
    // Context: the same mix beside detectors that understand less (support/naive.ts).
    key: 'agent-yardsticks',
    workloads: { json: () => agentMix('json') },
    contenders: ['bare', 'idle', 'naive', 'plain', 'parse', 'loopwatch'],
    traces: 120,
    sets: 30,
    processes: 3,
    rows: [
      { name: 'agent mix, the naive detector ÷ bare', of: over('naive', 'bare') },
      {
        name: 'agent mix, the plain hash of arguments and results ÷ bare (a yardstick: both texts read by a plain loop, no precision at all)',
        of: over('plain', 'bare'),
      },
      {
        name: "agent mix, V8's JSON.parse of arguments and results ÷ bare (a yardstick: the structure read by native code, nothing hashed, nothing kept)",
        of: over('parse', 'bare'),
      },
      {
        name: 'agent mix, per tool call: loopwatch ÷ the naive detector (each over the idle processor)',
        of: overNaive('loopwatch'),
        detail: (sets, w, traces) =>
          `CPU per tool call over the idle processor: loopwatch ${perCall('loopwatch')(sets, w, traces).toFixed(2)} µs, naive ${perCall('naive')(sets, w, traces).toFixed(2)} µs`,
      },
      {
        name: 'agent mix, per tool call: the plain hash ÷ the naive detector (each over the idle processor)',
        of: overNaive('plain'),
        detail: (sets, w, traces) => `CPU per tool call over the idle processor: plain hash ${perCall('plain')(sets, w, traces).toFixed(2)} µs`,
      },
      {
        name: "agent mix, per tool call: V8's JSON.parse ÷ the naive detector (each over the idle processor)",
        of: overNaive('parse'),
        detail: (sets, w, traces) => `CPU per tool call over the idle processor: JSON.parse ${perCall('parse')(sets, w, traces).toFixed(2)} µs`,
      },
    ],
  },
  {
    key: 'non-tool',
    workloads: { default: nonToolTraces },
    contenders: ['bare', 'idle', 'loopwatch', 'bare+otlp', 'loopwatch+otlp'],
    traces: 1500,
    sets: 30,
    processes: 3,
    rows: [
      { name: 'tool-free mix (10-span traces: HTTP and model calls) ÷ the same pipeline exporting OTLP/protobuf', of: over('loopwatch+otlp', 'bare+otlp') },
      {
        name: 'tool-free mix: loopwatch ÷ bare, above the idle processor ÷ bare (the no-op pipeline)',
        of: addedOver('loopwatch', 'idle', 'bare'),
        format: (m) => `+${m.toFixed(3)}`,
        target: { text: `≤ +${NON_TOOL_ABOVE_IDLE_TARGET.toFixed(3)}`, met: (m) => m <= NON_TOOL_ABOVE_IDLE_TARGET },
      },
      { name: 'tool-free mix ÷ the no-op pipeline', of: over('loopwatch', 'bare') },
    ],
  },
  {
    key: 'single',
    workloads: { default: singleToolMix },
    contenders: ['bare', 'idle', 'loopwatch'],
    traces: 1500,
    sets: 30,
    processes: 3,
    rows: [
      // No target since issue 19: the first call of a tool used to wait as text, unread unless the
      // tool came back, which made this shape's one call free and kept the text alive; every call
      // is fingerprinted at once now.
      { name: 'single-tool mix (the old shape: 10-span traces, 1 tool call, write_file with 1 KB arguments) ÷ bare', of: over('loopwatch', 'bare') },
      { name: 'single-tool mix ÷ an idle span processor', of: over('loopwatch', 'idle') },
      { name: 'single-tool mix, the idle span processor ÷ bare (the floor)', of: over('idle', 'bare') },
    ],
  },
  {
    key: 'parentless',
    workloads: { default: parentlessToolCalls },
    contenders: ['bare', 'idle', 'loopwatch'],
    traces: 4000,
    sets: 30,
    processes: 3,
    rows: [
      { name: 'parentless tool spans (each its own trace: a tool server called without trace context) ÷ bare', of: over('loopwatch', 'bare') },
      { name: 'parentless tool spans ÷ an idle span processor', of: over('loopwatch', 'idle') },
    ],
  },
  againstBare('ended', () => oneCallTraces(true), 'one tool call per trace, the root ended after it', { traces: 4000, sets: 30, processes: 2 }),
  againstBare('evicting', () => oneCallTraces(false), 'one tool call per trace, the root never ended (beyond maxTraces 10 000 each new trace evicts one)', { traces: 4000, sets: 30, processes: 2 }),
  againstBare('steps', agentSteps, 'agent steps: model call (usage read for loop cost) then tool call, 4 steps (40 % tool spans)', { traces: 1500, sets: 30, processes: 3 }),
  againstBare('write-200', () => writeFileTraces(200), 'tool spans, write_file with 200 B arguments (10 calls a trace)', { traces: 1000, sets: 30, processes: 2 }),
  againstBare('write-10k', () => writeFileTraces(10 * 1024), 'tool spans, write_file with 10 KB arguments (10 calls a trace)', { traces: 200, sets: 20, processes: 2 }),
  againstBare('write-1m', () => writeFileTraces(1 << 20), 'tool spans, write_file with 1 MB arguments (10 calls a trace)', { traces: 2, sets: 15, processes: 2 }),
];

/** The pipeline and workload of one contender key (see `Entrant`). */
function entrant(s: Scenario, key: Entrant): { kind: PipelineKind; exportKind: ExportKind; workload: () => Workload } {
  const [head = '', variant] = key.split('@');
  const [kind = '', exported] = head.split('+');
  const workload = variant === undefined ? Object.values(s.workloads)[0] : s.workloads[variant];
  if (!PIPELINE_KINDS.includes(kind as PipelineKind) || (exported !== undefined && exported !== 'otlp') || workload === undefined) {
    throw new Error(`lifecycle scenario ${s.key}: no contender ${key}`);
  }
  return { kind: kind as PipelineKind, exportKind: exported === 'otlp' ? 'otlp-protobuf' : 'noop', workload };
}

/** The default workload of a scenario (what sizes its rows). */
function defaultWorkload(s: Scenario): Workload {
  const make = Object.values(s.workloads)[0];
  if (make === undefined) throw new Error(`lifecycle scenario ${s.key} has no workload`);
  return make();
}

function tracesPerRound(s: Scenario, quick: boolean): number {
  return Math.max(1, Math.round(s.traces * (quick ? 0.05 : 1)));
}

/** The CPU times of one scenario's sets in this process, `times[contender][set]` in `contenders` order. */
export async function measureScenario(key: string, quick: boolean): Promise<number[][]> {
  const s = SCENARIOS.find((x) => x.key === key);
  if (s === undefined) throw new Error(`no lifecycle scenario ${key}`);
  const traces = tracesPerRound(s, quick);
  const entrants = s.contenders.map((key) => entrant(s, key));
  const pipelines = entrants.map((e) => pipeline(e.kind, {}, 1 << 16, undefined, e.exportKind));
  const contenders = pipelines.map((p, k) => contender(s.contenders[k] as string, p, (entrants[k] as (typeof entrants)[number]).workload(), traces));
  const times = await interleaved(contenders, { warmupRounds: quick ? 2 : 12, sets: quick ? 4 : s.sets });
  await Promise.all(pipelines.map((p) => p.shutdown()));
  return times;
}

/** Keys of the scenarios, in order (`--scenario=` narrows a run). */
export const SCENARIO_KEYS = SCENARIOS.map((s) => s.key);

/**
 * Each scenario runs in several fresh processes, one after the other, and every figure is the
 * median over all their sets (each set a side-by-side measurement of every contender), printed
 * with the quartiles of the sets and the range of the process medians. Each process compiles the
 * SDK and loopwatch its own way (what V8 inlines), so process medians of one build differ by a few
 * hundredths. `--quick` measures in one process per scenario.
 */
export async function lifecycle(options: LifecycleOptions & { only?: readonly string[] }): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const s of SCENARIOS) {
    if (options.only && !options.only.includes(s.key)) continue;
    const w = defaultWorkload(s);
    const traces = tracesPerRound(s, options.quick);
    const processes: SetTimes[][] = [];
    for (let k = 0; k < (options.quick ? 1 : s.processes); k++) {
      const times = inFreshProcess(s.key, options.quick);
      const sets: SetTimes[] = (times[0] ?? []).map((_, set) => Object.fromEntries(s.contenders.map((key, c) => [key, times[c]?.[set] ?? NaN])));
      processes.push(sets);
    }
    const all = processes.flat();
    for (const row of s.rows) {
      const spread: Spread = spreadOf(all.map((t) => row.of(t, w, traces)));
      const perProcess = processes.map((sets) => median(sets.map((t) => row.of(t, w, traces))));
      const format = row.format ?? ratio;
      const how =
        `median of ${spread.n} sets (${processes.length} process${processes.length === 1 ? '' : 'es'} × ${processes[0]?.length ?? 0}, ${traces} traces a round), ` +
        `IQR ${format(spread.p25)}–${format(spread.p75)}` +
        (processes.length > 1 ? `, process medians ${format(Math.min(...perProcess))}–${format(Math.max(...perProcess))}` : '') +
        (row.detail ? `; ${row.detail(all, w, traces)}` : '');
      figures.push({
        section: 'lifecycle',
        name: row.name,
        value: format(spread.median),
        ...(row.target ? { target: row.target.text, ...(row.target.met ? { met: row.target.met(spread.median) } : {}) } : {}),
        note: how,
      });
    }
  }
  return figures;
}

const CHILD = fileURLToPath(new URL('./lifecycle-child.ts', import.meta.url));

function inFreshProcess(key: string, quick: boolean): number[][] {
  const args = ['--expose-gc', '--import', 'tsx', CHILD, key, ...(quick ? ['--quick'] : [])];
  const out = execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 << 20 });
  const last = out.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as number[][];
}
