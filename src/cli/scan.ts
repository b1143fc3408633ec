import type { Readable } from 'node:stream';
import type { ConventionAdapter } from '../conventions/types.js';
import type { PriceTable } from '../cost/prices.js';
import type { LoopEngine } from '../detector/engine.js';
import { TraceReplayer } from '../replay/trace-replay.js';
import type { ReplayedTrace } from '../replay/types.js';
import { readDocuments, type InputDocument } from '../formats/documents.js';
import { InputError, type InputFile } from '../formats/input.js';
import { OtlpFormatError } from '../formats/otlp-json.js';
import type { ReplaySpan } from '../replay/types.js';
import { decodeJsonDocument, decodeProtobufDocument } from '../formats/trace-formats.js';

export interface ScanStats {
  /** Files read to their end; a file with an error is counted in `failedFiles` instead. */
  files: number;
  failedFiles: number;
  bytes: number;
  documents: number;
  spans: number;
  /** Spans seen before in their trace (same span id): an export retried, a file read twice. */
  duplicateSpans: number;
  /** Spans of a trace evaluated before they came (see `scanInputs`). */
  lateSpans: number;
  traces: number;
  toolCalls: number;
  tracesWithLoops: number;
  warnings: number;
  criticals: number;
}

export interface ScanOptions {
  readonly engine: LoopEngine;
  readonly adapters: readonly ConventionAdapter[];
  /** Each trace once it is complete, in completion order. */
  readonly onTrace: (trace: ReplayedTrace) => void;
  /** A file that could not be read or is not a trace file; the scan goes on with the next file. */
  readonly onError: (error: InputError, file: InputFile) => void;
  /** Called about every megabyte read. */
  readonly onProgress?: (stats: Readonly<ScanStats>) => void;
  readonly onProblem?: (message: string) => void;
  /** Where `-` reads from (asked only when `-` is read). */
  readonly stdin?: () => Readable;
  /** stdin's file descriptor when it is the process's own (a folder redirected to it is an error). */
  readonly stdinFd?: number;
  /** Between documents: a promise when the output is full (backpressure), resolved once it drains. */
  readonly ready?: () => Promise<void> | undefined;
  /** Between documents: true once the output is gone (`| head` exited); the scan stops reading. */
  readonly stopped?: () => boolean;
  readonly maxDocumentBytes?: number;
  /** Prices model calls (the configuration's `prices`). */
  readonly prices?: PriceTable | undefined;
}

/** Trace ids remembered after evaluation, to notice spans that arrive for them later. */
const REMEMBERED_TRACES = 50_000;

/**
 * Streams every input through the decoder and the trace replayer; memory stays flat for JSON
 * Lines and framed protobuf. A trace is evaluated once it has been quiet for a while; spans that
 * arrive for it afterwards (a file scanned twice, or one trace split far apart) are evaluated as
 * a piece of their own and counted in `lateSpans`, so the summary can say so.
 */
export async function scanInputs(files: readonly InputFile[], options: ScanOptions): Promise<ScanStats> {
  const stats: ScanStats = {
    files: 0,
    failedFiles: 0,
    bytes: 0,
    documents: 0,
    spans: 0,
    duplicateSpans: 0,
    lateSpans: 0,
    traces: 0,
    toolCalls: 0,
    tracesWithLoops: 0,
    warnings: 0,
    criticals: 0,
  };
  const evaluated = new Set<string>();
  const replayer = new TraceReplayer({
    engine: options.engine,
    adapters: options.adapters,
    prices: options.prices,
    ...(options.onProblem ? { onProblem: options.onProblem } : {}),
    onTrace: (trace) => {
      stats.traces++;
      if (trace.detections.length > 0) stats.tracesWithLoops++;
      for (const d of trace.detections) {
        if (d.level === 'critical') stats.criticals++;
        else stats.warnings++;
      }
      evaluated.delete(trace.traceId);
      evaluated.add(trace.traceId);
      if (evaluated.size > REMEMBERED_TRACES) evaluated.delete(evaluated.values().next().value as string);
      options.onTrace(trace);
    },
  });
  const sync = (): void => {
    stats.spans = replayer.spans;
    stats.duplicateSpans = replayer.duplicateSpans;
    stats.toolCalls = replayer.toolCalls;
  };
  let sinceProgress = 0;
  const onBytes = (n: number): void => {
    stats.bytes += n;
    sinceProgress += n;
    if (sinceProgress >= 1 << 20 && options.onProgress) {
      sinceProgress = 0;
      sync();
      options.onProgress(stats);
    }
  };
  const read = { onBytes, ...(options.stdin ? { stdin: options.stdin } : {}), ...(options.stdinFd !== undefined ? { stdinFd: options.stdinFd } : {}), ...(options.maxDocumentBytes ? { maxDocumentBytes: options.maxDocumentBytes } : {}) };
  for (const file of files) {
    if (options.stopped?.()) break;
    try {
      for await (const doc of readDocuments(file, read)) {
        stats.documents++;
        for (const span of decode(doc)) {
          if (evaluated.has(span.traceId)) stats.lateSpans++;
          replayer.add(span);
        }
        const full = options.ready?.();
        if (full) await full;
        if (options.stopped?.()) break;
      }
      stats.files++;
    } catch (e) {
      stats.failedFiles++;
      // anything else is a bug of ours: still a clear message, never a stack trace
      options.onError(e instanceof InputError ? e : new InputError(`cannot be scanned (internal error: ${e instanceof Error ? e.name : 'unknown'})`, file.name), file);
    }
  }
  replayer.finish();
  sync();
  return stats;
}

function decode(doc: InputDocument): ReplaySpan[] {
  try {
    return doc.kind === 'json' ? decodeJsonDocument(doc.value) : decodeProtobufDocument(doc.bytes);
  } catch (e) {
    if (!(e instanceof OtlpFormatError)) throw e;
    if (doc.kind === 'json') throw new InputError(e.message, doc.source, doc.line);
    throw new InputError(`${e.message} (the message at byte ${doc.offset})`, doc.source);
  }
}
