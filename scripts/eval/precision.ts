import type { ReplaySpan } from '../../src/replay/types.js';
import { ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, ATTR_GEN_AI_TOOL_CALL_RESULT, ATTR_GEN_AI_TOOL_NAME } from '../../src/conventions/attributes.js';
import type { LoopwatchConfig } from '../../src/detector/config/index.js';
import { LoopEngine } from '../../src/detector/engine.js';
import { buildToolCall } from '../../src/detector/tool-call.js';
import { describeDetections, loopwatchDetections } from './loopwatch.js';
import { corpusSize, type Corpus, type EvalCall } from './runs.js';

/**
 * What the fingerprint's precision does on a corpus. The fingerprint treats texts as equal when
 * they differ only in key order, whitespace, number form, JSON held in strings or volatile values
 * (timestamps, durations, ids); a detector that hashed the exact text would not. Within each run
 * and tool, this counts the fingerprint classes that hold more than one distinct text (merges),
 * then runs loopwatch again with every merge undone (each extra text wrapped so that it
 * fingerprints apart) and lists the runs whose detections change: what the precision decided.
 */

/** Why a class's texts are one: JSON that differs in key order or layout, text in its runs of whitespace, or else (volatile values: times, durations, ids). */
export type MergeCause = 'JSON key order or layout' | 'whitespace in text' | 'volatile values or other';

export interface PrecisionCensus {
  readonly corpus: string;
  readonly kind: Corpus['kind'];
  readonly runs: number;
  readonly calls: number;
  /** Classes of arguments (results) holding more than one text, and the calls in them. */
  readonly argumentClasses: number;
  readonly argumentCalls: number;
  readonly resultClasses: number;
  readonly resultCalls: number;
  readonly byCause: Readonly<Record<MergeCause, number>>;
  /** Runs with at least one merge. */
  readonly runsWithMerges: number;
  /** Result classes left merged: their results are not informative, and any wrapping would make them so. */
  readonly keptMerged: number;
  /** Runs whose detections differ once the merges are undone, with both sides. */
  readonly changed: ReadonlyArray<{ readonly runId: string; readonly merged: string; readonly undone: string }>;
}

type Side = 'arguments' | 'result';

const TOOL_SPAN_PREFIX = 'execute_tool ';

/** The texts of one class in first-seen order, the calls in it, and whether the class's results inform. */
interface FingerprintClass {
  readonly texts: string[];
  calls: number;
  informative: boolean;
}

/** Object members in sorted order, JSON inside strings expanded: equal for texts that differ only in key order or layout. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
      .join(',')}}`;
  }
  if (typeof value === 'string') {
    const inner = parsed(value);
    if (inner !== null && typeof inner === 'object') return `J${sortedJson(inner)}`;
  }
  return JSON.stringify(value);
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function causeOf(texts: readonly string[]): MergeCause {
  const alike = (form: (t: string) => string): boolean => new Set(texts.map(form)).size === 1;
  if (alike((t) => (parsed(t) === undefined ? `T${t}` : sortedJson(parsed(t))))) return 'JSON key order or layout';
  if (alike((t) => t.replace(/\s+/g, ' ').trim())) return 'whitespace in text';
  return 'volatile values or other';
}

/** A text that fingerprints apart from `text` and from the other wraps of its class (k > 0). */
function wrapped(text: string, k: number): string {
  return JSON.stringify({ '~exact': k, '~text': text });
}

/** The classes of one run: `tool side hash` → texts. */
function classesOf(engine: LoopEngine, calls: readonly EvalCall[]): Map<string, FingerprintClass> {
  const classes = new Map<string, FingerprintClass>();
  const add = (key: string, text: string, informative: boolean): void => {
    let c = classes.get(key);
    if (c === undefined) classes.set(key, (c = { texts: [], calls: 0, informative }));
    if (!c.texts.includes(text)) c.texts.push(text);
    c.calls++;
    c.informative ||= informative;
  };
  for (const call of calls) {
    const built = buildToolCall(engine, {
      toolName: call.name,
      arguments: call.args,
      // a failed call's outcome is its error class, not a fingerprint: only its arguments count here
      ...(!call.failed && call.result !== undefined ? { result: call.result } : {}),
      startTime: call.start,
      endTime: call.end,
      batch: call.batch,
      callIndex: call.index,
    });
    if (built.argsHash !== undefined) add(`${call.name}\0arguments\0${built.argsHash}`, call.args, true);
    const o = built.outcome;
    if (o.ok && o.resultHash !== undefined && call.result !== undefined) add(`${call.name}\0result\0${o.resultHash}`, call.result, o.informative);
  }
  return classes;
}

/** The census of one corpus (see the file comment). */
export function precisionCensus(corpus: Corpus, config: LoopwatchConfig = {}): PrecisionCensus {
  const engine = new LoopEngine(config);
  const byCause: Record<MergeCause, number> = { 'JSON key order or layout': 0, 'whitespace in text': 0, 'volatile values or other': 0 };
  let argumentClasses = 0;
  let argumentCalls = 0;
  let resultClasses = 0;
  let resultCalls = 0;
  let runsWithMerges = 0;
  let keptMerged = 0;
  // trace id → `tool side text` → the wrap index of that text (texts after a class's first)
  const undo = new Map<string, Map<string, number>>();
  for (const run of corpus.runs) {
    let merged = false;
    for (const [key, c] of classesOf(engine, run.calls)) {
      if (c.texts.length < 2) continue;
      merged = true;
      const [tool, side] = key.split('\0') as [string, Side];
      if (side === 'arguments') {
        argumentClasses++;
        argumentCalls += c.calls;
      } else {
        resultClasses++;
        resultCalls += c.calls;
      }
      byCause[causeOf(c.texts)]++;
      if (side === 'result' && !c.informative) {
        keptMerged++;
        continue;
      }
      let texts = undo.get(run.traceId);
      if (texts === undefined) undo.set(run.traceId, (texts = new Map()));
      c.texts.forEach((t, k) => k > 0 && texts.set(`${tool}\0${side}\0${t}`, k));
    }
    if (merged) runsWithMerges++;
  }
  const changed: Array<{ runId: string; merged: string; undone: string }> = [];
  if (undo.size > 0) {
    // only the runs with merges are replayed: a trace's detections depend on its own spans alone
    const spans = corpus.spans.filter((s) => undo.has(s.traceId));
    const before = loopwatchDetections({ ...corpus, spans }, config);
    const after = loopwatchDetections({ ...corpus, spans: spans.map((s) => undone(s, undo.get(s.traceId))) }, config);
    for (const run of corpus.runs) {
      if (!undo.has(run.traceId)) continue;
      const a = describeDetections(before.get(run.traceId) ?? []);
      const b = describeDetections(after.get(run.traceId) ?? []);
      if (a !== b) changed.push({ runId: run.runId, merged: a || '-', undone: b || '-' });
    }
  }
  return {
    ...corpusSize(corpus),
    argumentClasses,
    argumentCalls,
    resultClasses,
    resultCalls,
    byCause,
    runsWithMerges,
    keptMerged,
    changed,
  };
}

/** The span with its arguments and result wrapped where `texts` says (a tool span of a run with merges). */
function undone(span: ReplaySpan, texts: ReadonlyMap<string, number> | undefined): ReplaySpan {
  if (texts === undefined) return span;
  const named = span.attributes[ATTR_GEN_AI_TOOL_NAME];
  const tool = typeof named === 'string' ? named : span.name.startsWith(TOOL_SPAN_PREFIX) ? span.name.slice(TOOL_SPAN_PREFIX.length) : undefined;
  if (tool === undefined) return span;
  let attributes: Record<string, unknown> | undefined;
  for (const [side, key] of [
    ['arguments', ATTR_GEN_AI_TOOL_CALL_ARGUMENTS],
    ['result', ATTR_GEN_AI_TOOL_CALL_RESULT],
  ] as const) {
    const value = span.attributes[key];
    if (value === undefined || value === null) continue;
    // as `runsOf` reads it: structured values as their JSON
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const k = texts.get(`${tool}\0${side}\0${text}`);
    if (k === undefined) continue;
    attributes ??= { ...span.attributes };
    attributes[key] = wrapped(text, k);
  }
  return attributes === undefined ? span : { ...span, attributes };
}
