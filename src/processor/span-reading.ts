import { claimingAdapter, readAgentName, readClaimedCall, readPromptName } from '../conventions/index.js';
import type { ConventionAdapter, ToolCallFields } from '../conventions/types.js';
import type { ReadableToolSpan } from '../otel/span-types.js';

/**
 * What the adapters say about a span as its attributes are now: which one claims it as a tool
 * call, and its own prompt and agent names. Each is asked at most once; everything that looks at
 * the span at one moment (its start, or its end) asks this one reading.
 */
export class SpanReading {
  private claimAsked = false;
  private claimant: ConventionAdapter | undefined;
  private promptAsked = false;
  private prompt: string | undefined;
  private agentAsked = false;
  private agent: string | undefined;

  /** `adapters`: those whose gate the span passes, in list order. */
  constructor(
    readonly span: ReadableToolSpan,
    readonly adapters: readonly ConventionAdapter[],
  ) {}

  /** The first adapter that claims the span as a tool call. */
  claim(): ConventionAdapter | undefined {
    if (!this.claimAsked) {
      this.claimAsked = true;
      this.claimant = claimingAdapter(this.adapters, this.span);
    }
    return this.claimant;
  }

  promptName(): string | undefined {
    if (!this.promptAsked) {
      this.promptAsked = true;
      this.prompt = readPromptName(this.adapters, this.span);
    }
    return this.prompt;
  }

  agentName(): string | undefined {
    if (!this.agentAsked) {
      this.agentAsked = true;
      this.agent = readAgentName(this.adapters, this.span);
    }
    return this.agent;
  }

  /**
   * The call of a tool span that `chosen` claimed when it started, read by the adapter that claims
   * it now (instrumentations rewrite spans between start and end), falling back on `chosen`.
   */
  readCall(chosen: ConventionAdapter): ToolCallFields | undefined {
    return readClaimedCall(this.claim(), chosen, this.span);
  }
}
