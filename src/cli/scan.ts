import type { Readable } from 'node:stream';
import type { ConventionAdapter } from '../conventions/types.js';
import type { PriceTable } from '../cost/prices.js';
import type { LoopEngine } from '../detector/engine.js';
import { InputError, readDocuments, type InputFile } from './input.js';
import { decodeTracesData, OtlpFormatError } from './otlp-json.js';
import { TraceReplayer, type ReplayedTrace } from '../traces/trace-replay.js';

export interface ScanStats {
  files: number;
  bytes: number;
  documents: number;
  spans: number;
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
  /** A file that could not be read or is not OTLP/JSON; the scan goes on with the next file. */
  readonly onError: (error: InputError) => void;
  /** Called about every megabyte read. */
  readonly onProgress?: (stats: Readonly<ScanStats>) => void;
  readonly onProblem?: (message: string) => void;
  readonly stdin?: Readable;
  /** Prices model calls (the configuration's `prices`). */
  readonly prices?: PriceTable | undefined;
}

/** Streams every input through the decoder and the trace replayer; memory stays flat for JSON Lines. */
export async function scanInputs(files: readonly InputFile[], options: ScanOptions): Promise<ScanStats> {
  const stats: ScanStats = { files: 0, bytes: 0, documents: 0, spans: 0, traces: 0, toolCalls: 0, tracesWithLoops: 0, warnings: 0, criticals: 0 };
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
      options.onTrace(trace);
    },
  });
  let sinceProgress = 0;
  const onBytes = (n: number): void => {
    stats.bytes += n;
    sinceProgress += n;
    if (sinceProgress >= 1 << 20 && options.onProgress) {
      sinceProgress = 0;
      stats.spans = replayer.spans;
      stats.toolCalls = replayer.toolCalls;
      options.onProgress(stats);
    }
  };
  for (const file of files) {
    stats.files++;
    try {
      for await (const doc of readDocuments(file, onBytes, options.stdin)) {
        stats.documents++;
        let spans;
        try {
          spans = decodeTracesData(doc.value);
        } catch (e) {
          if (e instanceof OtlpFormatError) throw new InputError(e.message, doc.source, doc.line);
          throw e;
        }
        for (const span of spans) replayer.add(span);
      }
    } catch (e) {
      if (e instanceof InputError) options.onError(e);
      else options.onError(new InputError(e instanceof Error ? e.message : String(e), file.name));
    }
  }
  replayer.finish();
  stats.spans = replayer.spans;
  stats.toolCalls = replayer.toolCalls;
  return stats;
}
