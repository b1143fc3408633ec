import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pipeline, type ExportKind, type Pipeline, type PipelineKind } from './support/pipeline.js';
import { median, ratio, type Figure } from './support/report.js';
import { interleaved, spreadOf, type Contender, type Spread } from './support/side-by-side.js';
import { agentMix, agentSteps, nonToolTraces, oneCallTraces, parentlessToolCalls, singleToolMix, writeFileTraces, type Workload } from './support/traces.js';

/**
 * The span lifecycle (start with attributes, set more, end, export through a batch processor to a
 * no-op exporter) of whole traces, with loopwatch and without, side by side: bare (no second
 * processor), an idle processor (empty hooks: the floor of any processor), the naive detector
 * and, in the agent mix, two yardsticks (the plain hash of arguments and results, and V8's
 * `JSON.parse` of them; all three in `support/naive.ts`), and loopwatch, each round of each
 * contender running the same traces. See `support/traces.ts` for the shapes.
 *
 * Why two mixes: the single-tool mix (the bench before issue 17) has one short trace per tool call
 * and never a repeated tool: until issue 19 the first call of each tool was not even fingerprinted
 * (it waited as text for the tool to come back), so this shape measured almost nothing of
 * loopwatch's work on tool calls. The agent mix is what agents do: tens of model calls, a tool
 * repeated with structured JSON arguments and results, so its tool calls are fingerprinted and
 * recorded, and it carries the target.
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

/** Issue 17's targets. */
export const AGENT_MIX_TARGET = 1.2;
/** Traces without tool spans: loopwatch ÷ bare at most this much above the idle processor ÷ bare. */
export const NON_TOOL_ABOVE_IDLE_TARGET = 0.02;
/** Per tool call, loopwatch ÷ the naive detector (marginal cost over the idle processor). */
export const PER_CALL_TARGET = 1.0;

/** Times of one set, by contender kind. */
type SetTimes = Readonly<Partial<Record<PipelineKind, number>>>;

interface Row {
  readonly name: string;
  /** The figure of one set; undefined when the set lacks a contender. */
  readonly of: (t: SetTimes, w: Workload, tracesPerRound: number) => number;
  readonly target?: { readonly text: string; readonly met: (median: number) => boolean };
  /** Formats the median (default: a ratio). */
  readonly format?: (median: number) => string;
  /** More about the figure, from the per-set times (absolute CPU times, for the report only). */
  readonly detail?: (sets: readonly SetTimes[], w: Workload, tracesPerRound: number) => string;
}

interface Scenario {
  readonly key: string;
  readonly workload: () => Workload;
  readonly contenders: readonly PipelineKind[];
  readonly traces: number;
  readonly sets: number;
  /** Fresh processes the comparison runs in (see `lifecycle`). */
  readonly processes: number;
  /** What every pipeline exports to (default: nothing done with the spans). */
  readonly exportKind?: ExportKind;
  readonly rows: readonly Row[];
}

const over = (a: PipelineKind, b: PipelineKind) => (t: SetTimes): number => (t[a] ?? NaN) / (t[b] ?? NaN);

/** What a contender adds over the idle processor, as a multiple of what the naive detector adds (per set). */
const overNaive = (kind: PipelineKind) => (t: SetTimes): number => ((t[kind] ?? NaN) - (t.idle ?? NaN)) / ((t.naive ?? NaN) - (t.idle ?? NaN));

/** CPU µs per tool call a contender adds over the idle processor, median over the sets. */
function perCall(kind: PipelineKind) {
  return (sets: readonly SetTimes[], w: Workload, traces: number): number =>
    median(sets.map((t) => ((t[kind] ?? NaN) - (t.idle ?? NaN)) / (traces * w.toolCalls)));
}

/** A scenario of one row: loopwatch ÷ bare, nothing else measured. */
function againstBare(key: string, workload: () => Workload, name: string, size: Pick<Scenario, 'traces' | 'sets' | 'processes'>): Scenario {
  return { key, workload, contenders: ['bare', 'loopwatch'], ...size, rows: [{ name: `${name} ÷ bare`, of: over('loopwatch', 'bare') }] };
}

const SCENARIOS: readonly Scenario[] = [
  {
    key: 'agent',
    workload: agentMix,
    contenders: ['bare', 'idle', 'naive', 'plain', 'parse', 'loopwatch'],
    traces: 120,
    sets: 40,
    processes: 5,
    rows: [
      {
        name: 'agent mix (50-span traces: 44 model calls, 5 tool calls, a tool repeated, 1 KB JSON arguments and results) ÷ bare',
        of: over('loopwatch', 'bare'),
        target: { text: `≤ ${ratio(AGENT_MIX_TARGET)}`, met: (m) => m <= AGENT_MIX_TARGET },
      },
      { name: 'agent mix ÷ an idle span processor', of: over('loopwatch', 'idle') },
      { name: 'agent mix, the idle span processor ÷ bare (the floor)', of: over('idle', 'bare') },
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
        target: { text: `≤ ${ratio(PER_CALL_TARGET)}`, met: (m) => m <= PER_CALL_TARGET },
        detail: (sets, w, traces) =>
          `CPU per tool call over the idle processor: loopwatch ${(perCall('loopwatch')(sets, w, traces)).toFixed(2)} µs, naive ${(perCall('naive')(sets, w, traces)).toFixed(2)} µs`,
      },
      {
        name: 'agent mix, per tool call: the plain hash ÷ the naive detector (each over the idle processor)',
        of: overNaive('plain'),
        detail: (sets, w, traces) => `CPU per tool call over the idle processor: plain hash ${(perCall('plain')(sets, w, traces)).toFixed(2)} µs`,
      },
      {
        name: "agent mix, per tool call: V8's JSON.parse ÷ the naive detector (each over the idle processor)",
        of: overNaive('parse'),
        detail: (sets, w, traces) => `CPU per tool call over the idle processor: JSON.parse ${(perCall('parse')(sets, w, traces)).toFixed(2)} µs`,
      },
    ],
  },
  {
    // Context, not a target: every real pipeline encodes its spans for export, which the bare
    // pipeline above skips; here both pipelines make the OTLP/protobuf request of every batch.
    key: 'agent-otlp',
    workload: agentMix,
    contenders: ['bare', 'loopwatch'],
    exportKind: 'otlp-protobuf',
    traces: 120,
    sets: 30,
    processes: 3,
    rows: [{ name: 'agent mix ÷ bare, both pipelines encoding every batch as an OTLP/protobuf request (as an OTLP exporter does before sending)', of: over('loopwatch', 'bare') }],
  },
  {
    key: 'single',
    workload: singleToolMix,
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
    key: 'non-tool',
    workload: nonToolTraces,
    contenders: ['bare', 'idle', 'loopwatch'],
    traces: 1500,
    sets: 30,
    processes: 3,
    rows: [
      { name: 'traces without tool spans (10 spans: HTTP and model calls) ÷ bare', of: over('loopwatch', 'bare') },
      {
        name: 'traces without tool spans: loopwatch ÷ bare, above the idle processor ÷ bare',
        of: (t) => ((t.loopwatch ?? NaN) - (t.idle ?? NaN)) / (t.bare ?? NaN),
        format: (m) => `+${m.toFixed(3)}`,
        target: { text: `≤ +${NON_TOOL_ABOVE_IDLE_TARGET.toFixed(3)}`, met: (m) => m <= NON_TOOL_ABOVE_IDLE_TARGET },
      },
    ],
  },
  {
    key: 'parentless',
    workload: parentlessToolCalls,
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

function tracesPerRound(s: Scenario, quick: boolean): number {
  return Math.max(1, Math.round(s.traces * (quick ? 0.05 : 1)));
}

/** The CPU times of one scenario's sets in this process, `times[contender][set]` in `contenders` order. */
export async function measureScenario(key: string, quick: boolean): Promise<number[][]> {
  const s = SCENARIOS.find((x) => x.key === key);
  if (s === undefined) throw new Error(`no lifecycle scenario ${key}`);
  const w = s.workload();
  const traces = tracesPerRound(s, quick);
  const pipelines = s.contenders.map((kind) => pipeline(kind, {}, 1 << 16, undefined, s.exportKind));
  const contenders = pipelines.map((p, k) => contender(s.contenders[k] as string, p, w, traces));
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
    const w = s.workload();
    const traces = tracesPerRound(s, options.quick);
    const processes: SetTimes[][] = [];
    for (let k = 0; k < (options.quick ? 1 : s.processes); k++) {
      const times = inFreshProcess(s.key, options.quick);
      const sets: SetTimes[] = (times[0] ?? []).map((_, set) => Object.fromEntries(s.contenders.map((kind, c) => [kind, times[c]?.[set] ?? NaN])));
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
        ...(row.target ? { target: row.target.text, met: row.target.met(spread.median) } : {}),
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
