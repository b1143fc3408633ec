import type { ConventionAdapter, SpanView } from './types.js';

/** Slots of `SpanGate.byLength`: a power of two above the length of every usual key. */
const LENGTH_SLOTS = 64;

/** A key some gate looks at: the adapters interested in it whatever its value, and by value. */
interface KeyEntry {
  readonly key: string;
  any: number;
  /** Values that interest some adapter, beside their adapters (parallel arrays, short). */
  readonly values: unknown[];
  readonly valueMasks: number[];
  /** The next gate key in the same `byLength` slot. */
  readonly next: KeyEntry | undefined;
}

/**
 * The union of the gates of a list of adapters. `test` answers with a bit mask of the adapters
 * whose gate the span passes (bit i for adapter i), so that only those are asked: an adapter
 * whose gate a span fails would answer "not mine, no names" anyway.
 */
export class SpanGate {
  /**
   * Gate keys by length (modulo `LENGTH_SLOTS`), each slot the head of a chain of the gate keys of
   * that length (one or two). An attribute key is compared with those only; attribute keys and
   * gate keys are interned strings (see `interned`), so a comparison that fails is a pointer
   * comparison. No character of the key is read: in the bench's pipeline, reading one character
   * of every key cost about as much as the loop over the keys itself.
   */
  private readonly byLength: Array<KeyEntry | undefined> = new Array<KeyEntry | undefined>(LENGTH_SLOTS).fill(undefined);
  /** First characters of the names and prefixes of the gates: most span names start otherwise. */
  private readonly nameStarts = new Uint8Array(128);
  private readonly names = new Map<string, number>();
  /** Lengths (modulo `LENGTH_SLOTS`) of those names: most span names have another, and skip the lookup. */
  private readonly nameLengths = new Uint8Array(LENGTH_SLOTS);
  private readonly prefixes: Array<{ readonly prefix: string; readonly mask: number }> = [];
  /** Adapter lists by mask, in the order of the full list (an array when masks are small). */
  private readonly subsets = new Map<number, readonly ConventionAdapter[]>();
  private readonly smallSubsets: Array<readonly ConventionAdapter[] | undefined>;

  constructor(private readonly adapters: readonly ConventionAdapter[]) {
    this.smallSubsets = adapters.length <= 8 ? new Array<readonly ConventionAdapter[] | undefined>(1 << adapters.length).fill(undefined) : [];
    const keys = new Map<string, KeyEntry>();
    const entry = (k: string): KeyEntry => {
      let e = keys.get(k);
      if (!e) {
        const slot = lengthSlot(k);
        e = { key: interned(k), any: 0, values: [], valueMasks: [], next: this.byLength[slot] };
        keys.set(k, e);
        this.byLength[slot] = e;
      }
      return e;
    };
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
      for (const n of g.names ?? []) {
        this.names.set(n, (this.names.get(n) ?? 0) | bit);
        this.nameStarts[n.charCodeAt(0) & 127] = 1;
        this.nameLengths[lengthSlot(n)] = 1;
      }
      for (const prefix of g.namePrefixes ?? []) {
        this.prefixes.push({ prefix, mask: bit });
        // an empty prefix matches every name: every first character passes
        if (prefix === '') this.nameStarts.fill(1);
        else this.nameStarts[prefix.charCodeAt(0) & 127] = 1;
      }
    });
  }

  /**
   * The adapters that could claim or name this span, as a bit mask (0: none, the common case).
   * One pass over the span's own attribute keys (a span has a handful; the gate knows a few
   * dozen), then its name.
   */
  test(span: SpanView): number {
    let mask = this.keyMask(span.attributes);
    const name = span.name;
    // an empty name has no first character (NaN): only an empty name or prefix could match it
    if (this.nameStarts[name.charCodeAt(0) & 127] === 0 && name !== '') return mask;
    if (this.nameLengths[lengthSlot(name)] === 1) mask |= this.names.get(name) ?? 0;
    for (const p of this.prefixes) if (name.startsWith(p.prefix)) mask |= p.mask;
    return mask;
  }

  /** The adapters whose declared keys (and values) the attributes have. */
  private keyMask(attrs: Readonly<Record<string, unknown>>): number {
    const byLength = this.byLength;
    let mask = 0;
    for (const k in attrs) {
      let e = byLength[lengthSlot(k)];
      while (e !== undefined && e.key !== k) e = e.next;
      if (e === undefined) continue;
      mask |= e.any;
      if (e.values.length > 0) mask |= valueMaskOf(e, attrs[k]);
    }
    return mask;
  }

  /** The adapters of `mask`, in list order. */
  adaptersOf(mask: number): readonly ConventionAdapter[] {
    if (mask < this.smallSubsets.length) {
      return (this.smallSubsets[mask] ??= this.adapters.filter((_, i) => (mask & (1 << i)) !== 0));
    }
    let subset = this.subsets.get(mask);
    if (subset === undefined) {
      subset = this.adapters.filter((_, i) => (mask & (1 << i)) !== 0);
      if (this.subsets.size < 1024) this.subsets.set(mask, subset);
    }
    return subset;
  }
}

/** A key's slot in `SpanGate.byLength`. */
function lengthSlot(k: string): number {
  return k.length & (LENGTH_SLOTS - 1);
}

/**
 * The interned copy of a string (a property key is interned), so that an attribute key, interned
 * by the object that holds it, is the same string as a gate key equal to it: `===` compares
 * pointers. A gate key built at run time (a custom adapter's) may not be interned otherwise.
 */
function interned(k: string): string {
  return Object.keys({ [k]: 0 })[0] ?? k;
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
