import type { EvalCall, EvalRun } from '../runs.js';

/** What a simple detector reports for one run: the calls (1-based) of its first interventions. */
export interface AnchorVerdict {
  /** First intervention of any level (hint, nudge, warning, or a stop). */
  readonly warning?: number;
  /** First stop (halt, block, raise). */
  readonly critical?: number;
  readonly rule?: string;
}

export interface Anchor {
  readonly name: string;
  /** Where the rule comes from and its default thresholds (research/anchors-detectors.md). */
  readonly summary: string;
  run(run: EvalRun): AnchorVerdict;
}

/** JSON with object keys sorted (stable stringify), or the text itself when it is not JSON. */
export function canonical(text: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)));
  } catch {
    return text;
  }
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}

/** Tool name and sorted arguments: the key most anchors compare. */
export function callKey(c: EvalCall): string {
  return `${c.name}\0${canonical(c.args)}`;
}

/** What the call returned: its result, or its error. */
export function outcomeKey(c: EvalCall): string {
  return c.failed ? `error\0${c.errorText ?? ''}` : `ok\0${c.result ?? ''}`;
}

/** Records the first call of each level; a critical also counts as the first intervention. */
export class FirstHits {
  warning: number | undefined;
  critical: number | undefined;
  rule: string | undefined;

  warn(index: number, rule: string): void {
    if (this.warning === undefined) {
      this.warning = index;
      this.rule ??= rule;
    }
  }

  stop(index: number, rule: string): void {
    this.warn(index, rule);
    if (this.critical === undefined) this.critical = index;
  }

  verdict(): AnchorVerdict {
    return {
      ...(this.warning !== undefined ? { warning: this.warning } : {}),
      ...(this.critical !== undefined ? { critical: this.critical } : {}),
      ...(this.rule !== undefined ? { rule: this.rule } : {}),
    };
  }
}
