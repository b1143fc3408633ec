import type { ModelUsage } from '../conventions/usage.js';
import type { ModelPriceInput } from '../detector/config/index.js';
import { compileToolGlob, type ToolGlob } from '../detector/tool-glob.js';

interface PatternEntry {
  readonly pattern: string;
  readonly matcher: ToolGlob;
  readonly price: ModelPriceInput;
}

/** Models priced once: a handful in practice, bounded anyway (model names come from spans). */
const MAX_CACHED_MODELS = 1024;
const NO_PRICE = null;

/**
 * The configuration's `prices` (validated there): model name or `*` pattern → USD per million
 * input / output / cached-input tokens. Names compare case-insensitively. For a model call, the
 * model that answered (the response model, often a dated snapshot) is tried before the one asked
 * for, an exact name before any pattern, and a longer pattern before a shorter one.
 */
export class PriceTable {
  private readonly exact = new Map<string, ModelPriceInput>();
  private readonly patterns: PatternEntry[] = [];
  private readonly cache = new Map<string, ModelPriceInput | typeof NO_PRICE>();

  /**
   * `onUnpriced`: told once per model (pair) no entry covers, so that a table missing a model
   * says why its loops have no cost.
   */
  constructor(
    prices: Readonly<Record<string, ModelPriceInput>>,
    private readonly onUnpriced?: (model: string) => void,
  ) {
    for (const [name, price] of Object.entries(prices)) {
      const key = name.trim().toLowerCase();
      const matcher = compileToolGlob(key);
      if (matcher) this.patterns.push({ pattern: key, matcher, price });
      else this.exact.set(key, price);
    }
    this.patterns.sort((a, b) => b.pattern.length - a.pattern.length);
  }

  /** The table of a configuration, or undefined when it prices nothing. */
  static of(prices: Readonly<Record<string, ModelPriceInput>> | undefined, onUnpriced?: (model: string) => void): PriceTable | undefined {
    return prices !== undefined && Object.keys(prices).length > 0 ? new PriceTable(prices, onUnpriced) : undefined;
  }

  /** The entry that prices a call to `requestModel` answered by `responseModel`. */
  priceOf(requestModel: string | undefined, responseModel: string | undefined): ModelPriceInput | undefined {
    const key = `${requestModel ?? ''}\u0000${responseModel ?? ''}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached ?? undefined;
    const response = responseModel?.toLowerCase();
    // a call that names no model at all: only a pattern that matches anything (`*`) prices it
    const request = requestModel?.toLowerCase() ?? (response === undefined ? '' : undefined);
    const price =
      (response !== undefined ? this.exact.get(response) : undefined) ??
      (request !== undefined ? this.exact.get(request) : undefined) ??
      (response !== undefined ? this.patterns.find((p) => p.matcher.test(response))?.price : undefined) ??
      (request !== undefined ? this.patterns.find((p) => p.matcher.test(request))?.price : undefined);
    if (this.cache.size >= MAX_CACHED_MODELS) this.cache.clear();
    this.cache.set(key, price ?? NO_PRICE);
    if (price === undefined) this.onUnpriced?.(responseModel ?? requestModel ?? '(no model name)');
    return price;
  }

  /** USD of one model call; NaN when no entry covers its model. */
  usd(u: ModelUsage): number {
    const price = this.priceOf(u.requestModel, u.responseModel);
    if (price === undefined) return Number.NaN;
    const cached = u.cacheRead;
    return ((u.input - cached) * price.input + cached * (price.cachedInput ?? price.input) + u.output * price.output) / 1e6;
  }
}
