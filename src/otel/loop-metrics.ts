import type { Attributes, Counter, MeterProvider } from '@opentelemetry/api';
import { ATTR_GEN_AI_PROMPT_NAME, ATTR_GEN_AI_TOOL_NAME } from '../conventions/attributes.js';
import type { LoopDetection } from '../detector/types.js';

/** OTel names of the contract's two counters (Prometheus: `..._total`, dots as underscores). */
export const METRIC_LOOP_DETECTIONS = 'gen_ai.tool.loop.detections';
export const METRIC_TOOL_CALLS = 'gen_ai.tool.calls';

/**
 * The value of a label whose attribute is unknown: the collector's count connector writes the
 * same default (`default_value: unknown` in collector-config/gateway.yaml), so both paths give
 * the same series.
 */
export const UNKNOWN_LABEL = 'unknown';

/** The instrumentation scope of loopwatch's own metrics and log records. */
export const SCOPE_NAME = 'loopwatch';

/**
 * The contract's counters recorded through the OpenTelemetry Metrics API: exact and cumulative
 * whatever the collector in between does (no delta re-stamping, no batch processor), with the
 * labels the collector path gives them. Names only, never arguments or results. Recording never
 * throws: a failing meter is reported once through `onProblem` and then ignored.
 */
export class LoopMetrics {
  private readonly detections: Counter;
  private readonly toolCalls: Counter;
  private failed = false;

  constructor(
    meterProvider: MeterProvider,
    version: string,
    private readonly onProblem: (message: string) => void = () => undefined,
  ) {
    const meter = meterProvider.getMeter(SCOPE_NAME, version);
    this.detections = meter.createCounter(METRIC_LOOP_DETECTIONS, {
      description: 'Tool-call loops detected by loopwatch, by loop kind, level, tool and prompt template.',
    });
    this.toolCalls = meter.createCounter(METRIC_TOOL_CALLS, {
      description: 'Tool calls (gen_ai execute_tool spans) seen by loopwatch, by tool and prompt template.',
    });
  }

  recordToolCall(toolName: string, promptName: string | undefined): void {
    this.add(this.toolCalls, { [ATTR_GEN_AI_TOOL_NAME]: toolName, [ATTR_GEN_AI_PROMPT_NAME]: promptName ?? UNKNOWN_LABEL });
  }

  recordDetection(d: LoopDetection): void {
    this.add(this.detections, {
      'loop.kind': d.kind,
      'loop.level': d.level,
      [ATTR_GEN_AI_TOOL_NAME]: d.toolName,
      [ATTR_GEN_AI_PROMPT_NAME]: d.promptName ?? UNKNOWN_LABEL,
    });
  }

  private add(counter: Counter, attributes: Attributes): void {
    if (this.failed) return;
    try {
      counter.add(1, attributes);
    } catch (e) {
      this.failed = true;
      this.onProblem(`recording a loopwatch metric failed; metrics are off from now on: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
