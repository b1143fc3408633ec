import { combine, hashString, type Hash } from '../fingerprint/hash.js';
import { resolveConfig, type LoopwatchConfig, type ResolvedConfig } from './config/index.js';
import { ToolPolicies } from './policy.js';
import { retainedName } from './retained-name.js';
import { TraceDetector, type SharedDetection } from './trace-detector.js';

const TOOL_TAG = 0x7001;
const AGENT_TAG = 0x7002;
/** Tool names kept for messages: at most 4 096 of at most `MAX_RETAINED_NAME` characters (1 Mi characters). */
const MAX_TOOL_NAMES = 4096;

/**
 * The detection engine: one resolved configuration and per-tool policies, shared by every trace.
 * Pure TypeScript with no OpenTelemetry dependency, so the span processor, the CLI and the
 * dispatcher guard all run the same rules.
 */
export class LoopEngine implements SharedDetection {
  readonly config: ResolvedConfig;
  readonly policies: ToolPolicies;
  private readonly names = new Map<Hash, string>();

  constructor(config: LoopwatchConfig | ResolvedConfig = {}) {
    this.config = isResolved(config) ? config : resolveConfig(config);
    this.policies = new ToolPolicies(this.config);
  }

  createTrace(traceId: string): TraceDetector {
    return new TraceDetector(this, traceId);
  }

  /** Tool identity used in histories and fingerprints: stable across processes and runs. */
  toolHash(name: string): Hash {
    const h = hashString(name, TOOL_TAG);
    if (this.names.size < MAX_TOOL_NAMES && !this.names.has(h)) this.names.set(h, retainedName(name));
    return h;
  }

  /**
   * A tool as one agent of a trace uses it: sub-agents are judged apart (three agents each
   * handing over with the same command is no repeat), while a loop that moves between agents
   * is still a cycle of their steps.
   */
  agentToolHash(name: string, agent: string): Hash {
    const h = combine(this.toolHash(name), hashString(agent, AGENT_TAG));
    if (this.names.size < MAX_TOOL_NAMES && !this.names.has(h)) this.names.set(h, retainedName(name));
    return h;
  }

  /**
   * A generic tool with the action it was asked to run (`ToolCall.actionHash`): the rules that
   * compare different calls of one tool take each action for a tool of its own.
   */
  actionToolHash(tool: Hash, action: Hash, name: string): Hash {
    const h = combine(tool, action);
    if (this.names.size < MAX_TOOL_NAMES && !this.names.has(h)) this.names.set(h, retainedName(name));
    return h;
  }

  toolName(hash: Hash): string {
    return this.names.get(hash) ?? '?';
  }
}

function isResolved(c: LoopwatchConfig | ResolvedConfig): c is ResolvedConfig {
  return (c as Partial<ResolvedConfig>).resolved === true;
}
