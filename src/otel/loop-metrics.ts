import type { Attributes, Counter, MeterProvider } from '@opentelemetry/api';
import { ATTR_GEN_AI_PROMPT_NAME, ATTR_GEN_AI_TOOL_NAME } from '../conventions/attributes.js';
import type { SpendDelta } from '../cost/trace-cost.js';
import type { LoopDetection } from '../detector/types.js';
import { ATTR_LOOP_KIND, ATTR_LOOP_LEVEL } from './event-attributes.js';

/** OTel names of the contract's two counters (Prometheus: `..._total`, dots as underscores). */
export const METRIC_LOOP_DETECTIONS = 'gen_ai.tool.loop.detections';
export const METRIC_TOOL_CALLS = 'gen_ai.tool.calls';
/**
 * Tokens of the model calls made inside detected loops (see `TraceLoopSummary.loop`), by prompt
 * template and `gen_ai.token.type` (`input` / `output`); and their USD where the price table
 * covers the model. Prometheus: `gen_ai_tool_loop_tokens_total`, `gen_ai_tool_loop_cost_usd_total`.
 */
export const METRIC_LOOP_TOKENS = 'gen_ai.tool.loop.tokens';
export const METRIC_LOOP_COST = 'gen_ai.tool.loop.cost.usd';
export const ATTR_GEN_AI_TOKEN_TYPE = 'gen_ai.token.type';

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
  private readonly loopTokens: Counter;
  private readonly loopCost: Counter;
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
    // Units in braces are annotations: the Prometheus names carry no unit suffix, as the
    // collector's sum connector (which sets no unit) gives them.
    this.loopTokens = meter.createCounter(METRIC_LOOP_TOKENS, {
      description: 'Tokens of the model calls made inside detected tool-call loops, from the end of the loop\'s first call, by prompt template and token type.',
      unit: '{token}',
    });
    this.loopCost = meter.createCounter(METRIC_LOOP_COST, {
      description: 'USD of the model calls made inside detected tool-call loops, where the price table covers the model, by prompt template.',
      unit: '{USD}',
    });
  }

  recordToolCall(toolName: string, promptName: string | undefined): void {
    this.add(this.toolCalls, { [ATTR_GEN_AI_TOOL_NAME]: toolName, [ATTR_GEN_AI_PROMPT_NAME]: promptName ?? UNKNOWN_LABEL });
  }

  recordDetection(d: LoopDetection): void {
    this.add(this.detections, {
      [ATTR_LOOP_KIND]: d.kind,
      [ATTR_LOOP_LEVEL]: d.level,
      [ATTR_GEN_AI_TOOL_NAME]: d.toolName,
      [ATTR_GEN_AI_PROMPT_NAME]: d.promptName ?? UNKNOWN_LABEL,
    });
  }

  /** Spend inside a loop of the prompt template `promptName` (a model call, or a loop's first window). */
  recordLoopSpend(spend: SpendDelta, promptName: string | undefined): void {
    const prompt = promptName ?? UNKNOWN_LABEL;
    if (spend.input > 0) this.add(this.loopTokens, { [ATTR_GEN_AI_PROMPT_NAME]: prompt, [ATTR_GEN_AI_TOKEN_TYPE]: 'input' }, spend.input);
    if (spend.output > 0) this.add(this.loopTokens, { [ATTR_GEN_AI_PROMPT_NAME]: prompt, [ATTR_GEN_AI_TOKEN_TYPE]: 'output' }, spend.output);
    if (Number.isFinite(spend.usd) && spend.usd > 0) this.add(this.loopCost, { [ATTR_GEN_AI_PROMPT_NAME]: prompt }, spend.usd);
  }

  private add(counter: Counter, attributes: Attributes, value = 1): void {
    if (this.failed) return;
    try {
      counter.add(value, attributes);
    } catch (e) {
      this.failed = true;
      this.onProblem(`recording a loopwatch metric failed; metrics are off from now on: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
