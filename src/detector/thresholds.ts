/** A pair of levels as configured. `null` (or omitted at the top level) disables that level. */
export interface ThresholdInput {
  readonly warning?: number | null;
  readonly critical?: number | null;
}

/** A resolved pair; `Infinity` means the level never fires. */
export interface Thresholds {
  readonly warning: number;
  readonly critical: number;
}

const NEVER = Number.POSITIVE_INFINITY;

/** `input` over `base`: a level given as `null` never fires, an omitted one keeps its base. */
export function resolveThresholds(base: Thresholds, input: ThresholdInput | undefined): Thresholds {
  if (!input) return base;
  const pick = (v: number | null | undefined, fallback: number): number => (v === undefined ? fallback : v === null ? NEVER : v);
  return { warning: pick(input.warning, base.warning), critical: pick(input.critical, base.critical) };
}
