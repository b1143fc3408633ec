import type { Spend, TokenCount } from './trace-cost.js';

const n = (x: number): string => Math.round(x).toLocaleString('en-US');

/** `$12.34`, `$0.512`, `$0.0041`: enough digits to tell small loops apart, not more. */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  if (usd >= 0.01) return `$${usd.toFixed(3)}`;
  return `$${usd.toPrecision(2)}`;
}

/** `8,400 tokens (8,160 in, 240 out)`. */
export function formatTokens(t: TokenCount): string {
  return `${n(t.input + t.output)} tokens (${n(t.input)} in, ${n(t.output)} out)`;
}

/** `4 model calls, 8,400 tokens (8,160 in, 240 out), $0.0131`: the cost only when priced. */
export function formatSpend(s: Spend): string {
  const calls = `${n(s.modelCalls)} model call${s.modelCalls === 1 ? '' : 's'}`;
  return `${calls}, ${formatTokens(s.tokens)}${s.costUsd !== undefined ? `, ${formatUsd(s.costUsd)}` : ''}`;
}
