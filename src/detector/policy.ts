import { volatileKeySet } from '../fingerprint/canonical.js';
import { DEFAULT_VOLATILE_ARGUMENT_KEYS, DEFAULT_VOLATILE_RESULT_KEYS } from '../fingerprint/volatile.js';
import { applyRuleThresholds } from './config/resolve.js';
import type { ResolvedConfig, RuleThresholds, RuleThresholdsInput, ToolRole } from './config/types.js';
import { CALL_RULES, type CallRule } from './rules.js';
import type { Thresholds } from './thresholds.js';

/** A per-call rule that applies to a tool, with the tool's thresholds for it. */
export interface AppliedRule {
  readonly rule: CallRule;
  readonly thresholds: Thresholds;
}
import { MAX_RETAINED_NAME } from './retained-name.js';

/** Everything the engine needs to know about one tool name, resolved once and cached. */
export interface ToolPolicy {
  readonly toolName: string;
  readonly role: ToolRole;
  /** The role is the one the tool's name suggests (no `tools` entry of the configuration sets it). */
  readonly roleByName: boolean;
  readonly thresholds: RuleThresholds;
  /** The per-call rules its role runs (none when exempt; only those with wait thresholds for a wait), in rule order. */
  readonly callRules: readonly AppliedRule[];
  readonly volatileArgumentKeys: ReadonlySet<string>;
  readonly volatileResultKeys: ReadonlySet<string>;
  /**
   * The lowest level of any per-call rule of this tool. Every call rule counts earlier calls of
   * the same tool, so the first call of a tool in a trace reaches 1 and no more: when this is
   * above 1, the engine need not run the rules on it.
   */
  readonly minCallThreshold: number;
}

/** The lowest level of every per-call rule (whatever the role runs: see `ToolPolicy.minCallThreshold`). */
function lowestLevel(t: RuleThresholds): number {
  let min = Number.POSITIVE_INFINITY;
  for (const rule of CALL_RULES) min = Math.min(min, t[rule.thresholdKey].warning, t[rule.thresholdKey].critical);
  return min;
}

function rulesFor(role: ToolRole, thresholds: RuleThresholds): readonly AppliedRule[] {
  if (role === 'exempt') return [];
  const rules = role === 'wait' ? CALL_RULES.filter((r) => r.wait !== undefined) : CALL_RULES;
  return rules.map((rule) => ({ rule, thresholds: thresholds[rule.thresholdKey] }));
}

/** `getJobStatus`, `get-job-status` and `tools.get_job_status` all become `..._get_job_status`. */
export function snakeName(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toLowerCase();
}

const MAX_CACHED = 2048;

export class ToolPolicies {
  private readonly cache = new Map<string, ToolPolicy>();
  /** Tools whose provider's declaration (`declaredReadOnly`) gives them another role than their name. */
  private readonly declaredCache = new Map<string, ToolPolicy>();
  /** Thresholds for steps made only of pollers (cycles over several polled jobs). */
  readonly pollerThresholds: RuleThresholds;

  constructor(private readonly config: ResolvedConfig) {
    this.pollerThresholds = applyRuleThresholds(config.thresholds, config.roles.poller.thresholds);
  }

  /**
   * `declaredReadOnly`: what the tool's provider declares (MCP `readOnlyHint`). Where the role
   * would be guessed from the name as `writer` or none, a declaration decides instead: a read-only
   * tool named like a write (`get_return_policy`) is not stopped at a write's level, and a declared
   * write is, whatever its name. A role set in the configuration, and the exempt, wait and poller
   * roles, stay.
   */
  get(toolName: string, declaredReadOnly?: boolean): ToolPolicy {
    const policy = this.cached(this.cache, toolName, undefined);
    if (declaredReadOnly === undefined || !policy.roleByName || (policy.role !== 'normal' && policy.role !== 'writer')) return policy;
    const declared: ToolRole = declaredReadOnly ? 'normal' : 'writer';
    if (policy.role === declared) return policy;
    return this.cached(this.declaredCache, toolName, declared);
  }

  private cached(cache: Map<string, ToolPolicy>, toolName: string, role: ToolRole | undefined): ToolPolicy {
    let policy = cache.get(toolName);
    if (!policy) {
      policy = this.resolve(toolName, role);
      // Tool names come from spans: an unbounded set in theory, a few dozen in practice. The cache
      // holds at most 2 048 names of at most `MAX_RETAINED_NAME` characters; a longer name is
      // resolved on each call.
      if (toolName.length <= MAX_RETAINED_NAME) {
        if (cache.size >= MAX_CACHED) cache.clear();
        cache.set(toolName, policy);
      }
    }
    return policy;
  }

  /** `declaredRole`: the role a provider's declaration gives where the name would otherwise decide. */
  private resolve(toolName: string, declaredRole?: ToolRole): ToolPolicy {
    const overrides = this.config.tools.filter((t) => (t.matcher ? t.matcher.test(toolName) : t.pattern === toolName));
    // Exact names win over globs; among globs, the longer (more specific) pattern wins.
    overrides.sort((a, b) => Number(!a.matcher) - Number(!b.matcher) || a.pattern.length - b.pattern.length);
    let role: ToolRole | undefined;
    let overrideThresholds: RuleThresholdsInput = {};
    const argumentKeys: string[] = [];
    const resultKeys: string[] = [];
    for (const { override } of overrides) {
      role = override.role ?? role;
      overrideThresholds = { ...overrideThresholds, ...override.thresholds };
      argumentKeys.push(...(override.volatileKeys?.arguments ?? []));
      resultKeys.push(...(override.volatileKeys?.result ?? []));
    }
    const effectiveRole = role ?? declaredRole ?? this.roleByName(toolName);
    let thresholds = this.config.thresholds;
    if (effectiveRole !== 'normal') {
      thresholds = applyRuleThresholds(thresholds, this.config.roles[effectiveRole].thresholds);
    }
    thresholds = applyRuleThresholds(thresholds, overrideThresholds);
    return {
      toolName,
      role: effectiveRole,
      roleByName: role === undefined,
      thresholds,
      callRules: rulesFor(effectiveRole, thresholds),
      // evidence degradation only ever raises a rule's levels
      minCallThreshold: lowestLevel(thresholds),
      volatileArgumentKeys: volatileKeySet(
        DEFAULT_VOLATILE_ARGUMENT_KEYS,
        this.config.volatileKeys.arguments,
        argumentKeys,
      ),
      volatileResultKeys: volatileKeySet(
        DEFAULT_VOLATILE_RESULT_KEYS,
        this.config.volatileKeys.result,
        resultKeys,
      ),
    };
  }

  private roleByName(toolName: string): ToolRole {
    const name = snakeName(toolName);
    const { exempt, wait, poller, writer } = this.config.roles;
    if (exempt.match.some((r) => r.test(name))) return 'exempt';
    if (wait.match.some((r) => r.test(name))) return 'wait';
    if (poller.match.some((r) => r.test(name))) return 'poller';
    if (writer.match.some((r) => r.test(name))) return 'writer';
    return 'normal';
  }
}
