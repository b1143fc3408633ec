import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { decodeTracesData } from '../../src/formats/otlp-json.js';
import type { ReplaySpan } from '../../src/replay/types.js';
import { corpusFile, exists, readLines, REPO_ROOT } from '../corpus/files.js';
import { SOURCES } from '../corpus/sources.js';
import { splitOf, type Split } from './split.js';

/**
 * The runs the eval scores: every trace of a corpus, as decoded OTLP spans (what `loopwatch
 * scan` reads) and as an ordered list of tool calls with their raw content (what the anchors'
 * simple detectors read).
 */

export interface EvalCall {
  /** 1-based, by start time (as `LoopDetection.callIndex`). */
  readonly index: number;
  readonly name: string;
  /** Arguments as recorded (JSON text, usually). */
  readonly args: string;
  readonly result: string | undefined;
  readonly failed: boolean;
  readonly errorText: string | undefined;
  readonly start: number;
  readonly end: number;
  /** Calls of one parallel batch (overlapping, same parent) share this key. */
  readonly batch: string;
}

export interface EvalRun {
  readonly corpus: string;
  /** `corpus.run.id` of the root span, else the trace id. */
  readonly runId: string;
  readonly traceId: string;
  readonly outcome: string | undefined;
  readonly calls: readonly EvalCall[];
  /** Times (epoch ms) of user messages (`gen_ai.user.message` events). */
  readonly userTimes: readonly number[];
}

export interface Corpus {
  readonly id: string;
  readonly kind: 'real' | 'synthetic';
  /** Set when this is one split of a source with a held-out test split; absent: the whole source. */
  readonly split?: Split;
  /** Every span in file order: fed to the scan path as it would read the files. */
  readonly spans: readonly ReplaySpan[];
  readonly runs: readonly EvalRun[];
}

/** What every per-corpus figure starts with: which corpus (and split), and how many runs and tool calls it holds. */
export function corpusSize(corpus: Corpus): { corpus: string; kind: Corpus['kind']; split?: Split; runs: number; calls: number } {
  return {
    corpus: corpus.id,
    kind: corpus.kind,
    ...(corpus.split ? { split: corpus.split } : {}),
    runs: corpus.runs.length,
    calls: corpus.runs.reduce((n, r) => n + r.calls.length, 0),
  };
}

/** How a corpus is named in tables: its id, and its split when it has one (`tau2-x [test]`). */
export function corpusName(c: { corpus: string; split?: Split }): string {
  return c.split ? `${c.corpus} [${c.split}]` : c.corpus;
}

/** The runs of one split, and only their spans (the scan path must not see the other split's traces). */
export function splitCorpus(corpus: Corpus, split: Split): Corpus {
  const runs = corpus.runs.filter((r) => splitOf(corpus.id, r.runId) === split);
  const traces = new Set(runs.map((r) => r.traceId));
  return { ...corpus, split, runs, spans: corpus.spans.filter((s) => traces.has(s.traceId)) };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : v === undefined || v === null ? undefined : JSON.stringify(v);
}

const QUANTUM_MS = 1;

/** Groups spans into runs; tool calls by start time, batches as the trace replayer forms them. */
export function runsOf(corpus: string, spans: readonly ReplaySpan[]): EvalRun[] {
  const byTrace = new Map<string, ReplaySpan[]>();
  for (const s of spans) {
    const list = byTrace.get(s.traceId);
    if (list) list.push(s);
    else byTrace.set(s.traceId, [s]);
  }
  const runs: EvalRun[] = [];
  for (const [traceId, list] of byTrace) {
    const root = list.find((s) => s.parentSpanId === undefined);
    const tools = list
      .map((s, seq) => ({ s, seq }))
      .filter(({ s }) => s.attributes['gen_ai.operation.name'] === 'execute_tool' || s.name.startsWith('execute_tool '))
      .sort((a, b) => a.s.startTime - b.s.startTime || a.seq - b.seq);
    const open = new Map<string, { key: string; end: number }>();
    let batchNo = 0;
    const calls: EvalCall[] = tools.map(({ s }, i) => {
      const parent = s.parentSpanId ?? '-';
      const o = open.get(parent);
      let key: string;
      if (o && s.startTime < o.end - QUANTUM_MS) {
        key = o.key;
        o.end = Math.max(o.end, s.endTime);
      } else {
        key = `${parent}:${batchNo++}`;
        open.set(parent, { key, end: s.endTime });
      }
      const failed = s.status?.code === 2 || s.attributes['error.type'] !== undefined;
      return {
        index: i + 1,
        name: str(s.attributes['gen_ai.tool.name']) ?? s.name.slice('execute_tool '.length),
        args: str(s.attributes['gen_ai.tool.call.arguments']) ?? '',
        result: str(s.attributes['gen_ai.tool.call.result']),
        failed,
        errorText: failed ? (s.status?.message ?? str(s.attributes['error.type'])) : undefined,
        start: s.startTime,
        end: s.endTime,
        batch: key,
      };
    });
    runs.push({
      corpus,
      runId: str(root?.attributes['corpus.run.id']) ?? traceId,
      traceId,
      outcome: str(root?.attributes['corpus.run.outcome']),
      calls,
      // filled from the raw documents (see collectUserEvents): decoded events carry no time
      userTimes: [],
    });
  }
  return runs;
}

function decodeLines(lines: readonly string[]): { spans: ReplaySpan[]; userEvents: Map<string, number[]> } {
  const spans: ReplaySpan[] = [];
  const userEvents = new Map<string, number[]>();
  for (const line of lines) {
    const doc = JSON.parse(line) as unknown;
    spans.push(...decodeTracesData(doc));
    collectUserEvents(doc, userEvents);
  }
  return { spans, userEvents };
}

/** `gen_ai.user.message` event times by trace id, read from the raw documents (the decoder drops event times). */
function collectUserEvents(doc: unknown, out: Map<string, number[]>): void {
  const rs = (doc as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<{ traceId?: string; events?: Array<{ name?: string; timeUnixNano?: string }> }> }> }> }).resourceSpans ?? [];
  for (const r of rs)
    for (const ss of r.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        for (const e of s.events ?? []) {
          if (e.name !== 'gen_ai.user.message' || typeof s.traceId !== 'string') continue;
          const t = Number(e.timeUnixNano ?? 0) / 1e6;
          const list = out.get(s.traceId.toLowerCase()) ?? [];
          list.push(t);
          out.set(s.traceId.toLowerCase(), list);
        }
}

function corpusOf(id: string, kind: 'real' | 'synthetic', lines: readonly string[]): Corpus {
  const { spans, userEvents } = decodeLines(lines);
  const runs = runsOf(id, spans).map((r) => ({ ...r, userTimes: (userEvents.get(r.traceId) ?? []).sort((a, b) => a - b) }));
  return { id, kind, spans, runs };
}

/** A real corpus from a compressed OTLP/JSON Lines file (the committed one, or an original). */
export function loadCorpusFile(id: string, path: string): Corpus {
  return corpusOf(id, 'real', readLines(path));
}

/**
 * Every committed real corpus present. A source with a held-out test split comes as two corpora,
 * its dev and its test split; `splits` keeps only those (a source without a test split is all dev).
 */
export function loadRealCorpora(only?: readonly string[], splits: readonly Split[] = ['dev', 'test']): Corpus[] {
  const out: Corpus[] = [];
  for (const s of SOURCES) {
    if ((only !== undefined && only.length > 0 && !only.includes(s.id)) || !exists(corpusFile(s.id))) continue;
    if (!s.heldOut && !splits.includes('dev')) continue;
    const whole = loadCorpusFile(s.id, corpusFile(s.id));
    if (!s.heldOut) out.push(whole);
    else for (const split of splits) out.push(splitCorpus(whole, split));
  }
  return out;
}

export const SYNTHETIC_ID = 'synthetic-otlp';
const SYNTHETIC_DIR = join(REPO_ROOT, 'test', 'fixtures', 'otlp');

/** The hand-written OTLP fixtures of `test/fixtures/otlp` (the broken ones under `bad/` excluded). */
export function loadSyntheticCorpus(): Corpus {
  const lines: string[] = [];
  for (const name of readdirSync(SYNTHETIC_DIR).sort()) {
    if (!/\.(json|jsonl)$/.test(name)) continue;
    const text = readLines(join(SYNTHETIC_DIR, name));
    // a pretty-printed document spans many lines: rejoin it
    if (name.endsWith('.json')) lines.push(JSON.stringify(JSON.parse(text.join('\n'))));
    else lines.push(...text);
  }
  return corpusOf(SYNTHETIC_ID, 'synthetic', lines);
}
