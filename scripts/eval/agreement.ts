import { genAiAdapter } from '../../src/conventions/gen-ai.js';
import { LoopEngine } from '../../src/detector/engine.js';
import { buildToolCall } from '../../src/detector/tool-call.js';
import type { ToolCall } from '../../src/detector/types.js';
import type { ReplaySpan } from '../../src/replay/types.js';
import { corpusFile, exists, originalOtlpFile } from '../corpus/files.js';
import { ATTR_GEN_AI_INPUT_MESSAGES, type InputMessage } from '../corpus/otlp.js';
import { SOURCES } from '../corpus/sources.js';
import { ANCHORS } from './anchors/index.js';
import { describeDetections, loopwatchDetections } from './loopwatch.js';
import { loadCorpusFile, type Corpus } from './runs.js';

/**
 * Does detection see on the pseudonymized runs what it sees on the originals? For each run,
 * loopwatch's detections (kind, rule, level, call, count), every anchor's first intervention
 * and first stop, and the equality classes of calls and of user messages are compared. Needs the originals (`npm run corpus:extract && npm run
 * corpus:build`); sources without them are skipped.
 */

export interface AgreementMismatch {
  readonly runId: string;
  readonly detector: string;
  readonly original: string;
  readonly pseudonymized: string;
}

export interface Agreement {
  readonly corpus: string;
  readonly runs: number;
  /** Runs where loopwatch and every anchor agree. */
  readonly agreeing: number;
  /** loopwatch detections on the originals. */
  readonly detections: number;
  /**
   * Runs whose tool calls fall into the same fingerprint classes on both sides: two calls share
   * an argument hash (a result hash, an error class, the informative flag) on the pseudonymized
   * run exactly when they share it on the original. Every rule reads only these, so this holds
   * for rules not written yet, not only for today's detections.
   */
  readonly sameFingerprintClasses: number;
  /**
   * Runs whose user messages (`gen_ai.input.messages`) fall into the same classes on both sides:
   * two messages are equal, and two words (lowercased) are equal, on the pseudonymized run
   * exactly when they are on the original. What a rule can learn from user text is read there.
   */
  readonly sameUserMessageClasses: number;
  readonly mismatches: readonly AgreementMismatch[];
}

/** First-seen numbering of values: equal strings from two sides mean equal equality classes. */
function classNamer<T>(): (v: T) => string {
  const names = new Map<T, number>();
  return (v) => {
    let n = names.get(v);
    if (n === undefined) names.set(v, (n = names.size));
    return String(n);
  };
}

const WORD = /[\p{L}\p{N}]+/gu;

/** Each user message's class and its words' classes, chat span by chat span. */
function userMessageClasses(spans: readonly ReplaySpan[]): string {
  const message = classNamer<string>();
  const word = classNamer<string>();
  return spans
    .filter((s) => typeof s.attributes[ATTR_GEN_AI_INPUT_MESSAGES] === 'string')
    .sort((a, b) => a.startTime - b.startTime)
    .map((s) => {
      const messages = JSON.parse(String(s.attributes[ATTR_GEN_AI_INPUT_MESSAGES])) as InputMessage[];
      return messages
        .map((m) => {
          const text = m.parts.map((p) => p.content).join('\n');
          return `${message(text)}:${(text.toLowerCase().match(WORD) ?? []).map(word).join(',')}`;
        })
        .join(' ');
    })
    .join(' | ');
}

/** Each call's fingerprints, renamed to first-seen order: equal strings mean equal equality classes. */
function fingerprintClasses(spans: readonly ReplaySpan[], engine: LoopEngine): string {
  const tools = spans.filter((s) => genAiAdapter.isToolSpan(s)).sort((a, b) => a.startTime - b.startTime);
  const name = classNamer<number>();
  const rename = (h: number | undefined): string => (h === undefined ? '-' : name(h));
  return tools
    .map((s) => {
      const f = genAiAdapter.readToolCall(s);
      if (!f) return '?';
      const call: ToolCall = buildToolCall(engine, {
        toolName: f.toolName,
        ...(f.arguments !== undefined ? { arguments: f.arguments } : {}),
        ...(f.result !== undefined ? { result: f.result } : {}),
        ...(f.error ? { error: f.error } : {}),
        startTime: s.startTime,
        endTime: s.endTime,
        batch: '',
        callIndex: 0,
      });
      const o = call.outcome;
      return `${f.toolName}:${rename(call.argsHash)}:${o.ok ? `ok:${rename(o.resultHash)}:${o.informative}` : `err:${rename(o.errorClass)}:${o.unknownTool}`}`;
    })
    .join(' ');
}

function compare(original: Corpus, pseudonymized: Corpus): Agreement {
  const engine = new LoopEngine();
  const spansOf = (c: Corpus): Map<string, ReplaySpan[]> => {
    const m = new Map<string, ReplaySpan[]>();
    for (const s of c.spans) m.set(s.traceId, [...(m.get(s.traceId) ?? []), s]);
    return m;
  };
  const originalSpans = spansOf(original);
  const pseudonymSpans = spansOf(pseudonymized);
  let sameFingerprintClasses = 0;
  let sameUserMessageClasses = 0;
  const a = loopwatchDetections(original);
  const b = loopwatchDetections(pseudonymized);
  const other = new Map(pseudonymized.runs.map((r) => [r.runId, r]));
  const mismatches: AgreementMismatch[] = [];
  let agreeing = 0;
  let detections = 0;
  for (const run of original.runs) {
    const twin = other.get(run.runId);
    const before = mismatches.length;
    if (!twin) {
      mismatches.push({ runId: run.runId, detector: '-', original: 'present', pseudonymized: 'missing' });
      continue;
    }
    const da = a.get(run.traceId) ?? [];
    detections += da.length;
    const sa = describeDetections(da);
    const sb = describeDetections(b.get(twin.traceId) ?? []);
    if (sa !== sb) mismatches.push({ runId: run.runId, detector: 'loopwatch', original: sa, pseudonymized: sb });
    const ca = fingerprintClasses(originalSpans.get(run.traceId) ?? [], engine);
    const cb = fingerprintClasses(pseudonymSpans.get(twin.traceId) ?? [], engine);
    if (ca === cb) sameFingerprintClasses++;
    else mismatches.push({ runId: run.runId, detector: 'fingerprint classes', original: ca.slice(0, 200), pseudonymized: cb.slice(0, 200) });
    const ua = userMessageClasses(originalSpans.get(run.traceId) ?? []);
    const ub = userMessageClasses(pseudonymSpans.get(twin.traceId) ?? []);
    if (ua === ub) sameUserMessageClasses++;
    else mismatches.push({ runId: run.runId, detector: 'user message classes', original: ua.slice(0, 200), pseudonymized: ub.slice(0, 200) });
    for (const anchor of ANCHORS) {
      const va = anchor.run(run);
      const vb = anchor.run(twin);
      if (va.warning !== vb.warning || va.critical !== vb.critical) {
        mismatches.push({ runId: run.runId, detector: anchor.name, original: `${va.warning}/${va.critical}`, pseudonymized: `${vb.warning}/${vb.critical}` });
      }
    }
    if (mismatches.length === before) agreeing++;
  }
  return { corpus: original.id, runs: original.runs.length, agreeing, detections, sameFingerprintClasses, sameUserMessageClasses, mismatches };
}

/** Agreement for every source whose originals and corpus file are present. */
export function agreementAll(only?: readonly string[]): Agreement[] {
  const out: Agreement[] = [];
  for (const s of SOURCES) {
    if (only && only.length > 0 && !only.includes(s.id)) continue;
    if (!exists(originalOtlpFile(s.id)) || !exists(corpusFile(s.id))) continue;
    out.push(compare(loadCorpusFile(s.id, originalOtlpFile(s.id)), loadCorpusFile(s.id, corpusFile(s.id))));
  }
  return out;
}
