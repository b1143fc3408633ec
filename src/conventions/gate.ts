import type { ConventionAdapter, SpanView } from './types.js';
import { LibraryCallScopes } from './scopes.js';
import { MODEL_USAGE_KEYS } from './usage.js';

/** A key some gate looks at: the adapters interested in it whatever its value, and by value. */
interface KeyEntry {
  any: number;
  /** Adapters that may read user messages from a span with the key (see `userMessageMask`). */
  said: number;
  /** A token count may be read from it (`MODEL_USAGE_KEYS`). */
  usage: boolean;
  /** Values that interest some adapter, beside their adapters (parallel arrays, short). */
  readonly values: unknown[];
  readonly valueMasks: number[];
}

/**
 * The union of the gates of a list of adapters, read from their declarations. `test` answers with
 * a bit mask of the adapters whose gate the span passes (bit i for adapter i), so that only those
 * are asked: an adapter whose gate a span fails would answer "not mine, no names" anyway. The
 * same pass finds the adapters that may read user messages from the span (`userMessageMask`), and
 * whether it carries a key a token count is read from (`usageSeen`).
 */
export class SpanGate {
  private readonly keys = new Map<string, KeyEntry>();
  private readonly names = new Map<string, number>();
  private readonly prefixes: Array<{ readonly prefix: string; readonly mask: number }> = [];
  /** Adapter lists by mask, in the order of the full list. */
  private readonly subsets = new Map<number, readonly ConventionAdapter[]>();
  /** Adapters that read user messages and declare no keys for them: asked about every span. */
  private readonly alwaysSaid: number;
  /** Adapters that may read user messages from a span's events. */
  private readonly eventsSaid: number;
  /**
   * Spans of library-call instrumentations, whose keys are not looked at: undefined when an
   * adapter may read keys those write (see `AdapterGate.agentKeysOnly`).
   */
  private readonly libraryCalls: LibraryCallScopes | undefined;
  /**
   * The adapters that may read user messages from the span `test` looked at last, as a mask:
   * found in the same pass over its keys, so that a model call's input is read only by the
   * adapters whose keys it carries.
   */
  userMessageMask = 0;
  /**
   * The span `test` looked at last carries a key a model call's token count is read from: without
   * one it reports no usage, and is not read for it (found in the same pass).
   */
  usageSeen = false;

  constructor(private readonly adapters: readonly ConventionAdapter[]) {
    const entry = (k: string): KeyEntry => {
      let e = this.keys.get(k);
      if (!e) {
        e = { any: 0, said: 0, usage: false, values: [], valueMasks: [] };
        this.keys.set(k, e);
      }
      return e;
    };
    let alwaysSaid = 0;
    let eventsSaid = 0;
    adapters.forEach((a, i) => {
      const bit = 1 << i;
      const g = a.gate ?? {};
      for (const k of g.keys ?? []) entry(k).any |= bit;
      for (const [k, values] of Object.entries(g.values ?? {})) {
        const e = entry(k);
        for (const v of values) {
          const at = e.values.indexOf(v);
          if (at >= 0) e.valueMasks[at] = (e.valueMasks[at] ?? 0) | bit;
          else {
            e.values.push(v);
            e.valueMasks.push(bit);
          }
        }
      }
      for (const n of g.names ?? []) this.names.set(n, (this.names.get(n) ?? 0) | bit);
      for (const prefix of g.namePrefixes ?? []) this.prefixes.push({ prefix, mask: bit });
      if (a.userMessages === undefined) return;
      if (g.userMessageKeys === undefined && g.userMessageEvents !== true) alwaysSaid |= bit;
      for (const k of g.userMessageKeys ?? []) entry(k).said |= bit;
      if (g.userMessageEvents === true) eventsSaid |= bit;
    });
    this.alwaysSaid = alwaysSaid;
    this.eventsSaid = eventsSaid;
    this.libraryCalls = adapters.every((a) => a.gate?.agentKeysOnly === true) ? new LibraryCallScopes() : undefined;
    for (const k of MODEL_USAGE_KEYS) entry(k).usage = true;
  }

  /**
   * The adapters that could claim or name this span, as a bit mask (0: none, the common case):
   * one pass over the span's own attribute keys (a span has a handful; the gate knows a few
   * dozen), then its name. A library call's span (an HTTP client call, a database query: see
   * `scopes.ts`) carries none of the keys, so its keys are not looked at.
   */
  test(span: SpanView): number {
    const attrs = span.attributes;
    let mask = 0;
    let said = this.alwaysSaid;
    let usage = false;
    const libraryCalls = this.libraryCalls;
    if (libraryCalls === undefined || !libraryCalls.isLibraryCall(span.instrumentationScope, span.kind)) {
      for (const k in attrs) {
        const e = this.keys.get(k);
        if (e === undefined) continue;
        mask |= e.any;
        said |= e.said;
        usage ||= e.usage;
        if (e.values.length > 0) mask |= valueMaskOf(e, attrs[k]);
      }
    }
    this.usageSeen = usage;
    if (this.eventsSaid !== 0 && span.events !== undefined && span.events.length > 0) said |= this.eventsSaid;
    this.userMessageMask = said;
    const name = span.name;
    mask |= this.names.get(name) ?? 0;
    for (const p of this.prefixes) if (name.startsWith(p.prefix)) mask |= p.mask;
    return mask;
  }

  /** The adapters of `mask`, in list order. */
  adaptersOf(mask: number): readonly ConventionAdapter[] {
    let subset = this.subsets.get(mask);
    if (subset === undefined) {
      subset = this.adapters.filter((_, i) => (mask & (1 << i)) !== 0);
      if (this.subsets.size < 1024) this.subsets.set(mask, subset);
    }
    return subset;
  }
}

function valueMaskOf(e: KeyEntry, value: unknown): number {
  let mask = 0;
  for (let i = 0; i < e.values.length; i++) if (e.values[i] === value) mask |= e.valueMasks[i] as number;
  return mask;
}

/**
 * The gate of `adapters`, or undefined when one of them declares none (it must see every span)
 * or there are more than 31 of them (one bit each).
 */
export function gateOf(adapters: readonly ConventionAdapter[]): SpanGate | undefined {
  if (adapters.length > 31 || adapters.some((a) => a.gate === undefined)) return undefined;
  return new SpanGate(adapters);
}
