import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, trace, type Attributes, type Span, type SpanStatus, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LoopDetectionSpanProcessor, type ConventionAdapter, type LoopDetection } from '../../src/index.js';

/** One file of test/fixtures/spans (see its README). */
export interface SpanFixture {
  readonly instrumentation: string;
  readonly source: string;
  readonly parent: { readonly name: string; readonly attributes: Attributes };
  readonly tool: {
    readonly name: string;
    readonly renameAtStart?: string;
    readonly renameAtEnd?: string;
    readonly start: Attributes;
    readonly end: Attributes;
  };
  readonly failure?: { readonly status?: SpanStatus; readonly end?: Attributes; readonly exception?: Attributes };
  readonly expect: {
    readonly adapter: string;
    readonly toolName: string;
    readonly arguments: boolean;
    readonly result: boolean;
    readonly promptName?: string;
    readonly agentName?: string;
    readonly errorType?: string;
    readonly errorMessage?: string;
    readonly endOnly?: boolean;
  };
}

export const FIXTURE_DIR = join(import.meta.dirname, '..', 'fixtures', 'spans');

export function loadFixtures(): Array<[string, SpanFixture]> {
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f.replace(/\.json$/, ''), JSON.parse(readFileSync(join(FIXTURE_DIR, f), 'utf8')) as SpanFixture]);
}

export interface Replay {
  readonly detections: LoopDetection[];
  readonly exported: ReadableSpan[];
  readonly toolSpans: ReadableSpan[];
  readonly aborted: boolean;
}

/**
 * Plays a fixture's tool span `times` times under its parent, through a real SDK 2.x provider
 * with the processor registered after an exporting processor, the way instrumentations emit it:
 * start attributes at start, the rest (and a rename, for the Mastra bridge) just before `end()`.
 */
export function replay(fixture: SpanFixture, times: number, opts: { failing?: boolean; conventions?: readonly ConventionAdapter[] } = {}): Replay {
  const exporter = new InMemorySpanExporter();
  const detections: LoopDetection[] = [];
  const loops = new LoopDetectionSpanProcessor({
    onLoop: (d) => void detections.push(d),
    ...(opts.conventions ? { conventions: opts.conventions } : {}),
  });
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), loops as unknown as SpanProcessor] });
  const tracer: Tracer = provider.getTracer('fixture-replay');
  let aborted = false;
  const parent = tracer.startSpan(fixture.parent.name, { attributes: fixture.parent.attributes });
  const ctx = trace.setSpan(context.active(), parent);
  const signal = loops.abortSignal(parent);
  for (let i = 0; i < times && !signal.aborted; i++) {
    const span: Span = tracer.startSpan(fixture.tool.renameAtStart ?? fixture.tool.name, { attributes: fixture.tool.start }, ctx);
    if (opts.failing && fixture.failure) {
      if (fixture.failure.exception) span.addEvent('exception', fixture.failure.exception);
      span.setAttributes({ ...fixture.tool.end, ...(fixture.failure.end ?? {}) });
      // a failed call records no result
      for (const key of Object.keys(fixture.tool.end)) if (/result|output|completion/.test(key)) span.setAttribute(key, '');
      if (fixture.failure.status) span.setStatus(fixture.failure.status);
    } else {
      span.setAttributes(fixture.tool.end);
    }
    if (fixture.tool.renameAtEnd) span.updateName(fixture.tool.renameAtEnd);
    span.end();
  }
  aborted = signal.aborted;
  parent.end();
  const exported = exporter.getFinishedSpans();
  const toolSpans = exported.filter((s) => s !== exported.find((p) => p.spanContext().spanId === parent.spanContext().spanId));
  void provider.shutdown();
  return { detections, exported, toolSpans, aborted };
}
