/**
 * A map from span ids that holds its first entry in two fields and makes a `Map` only for a
 * second one. Per-trace tables (open tool calls, named spans, parallel batches) hold one entry
 * most of the time (bench/NOTES.md, memory per active trace).
 */
export class SmallMap<V> {
  private key: string | undefined;
  private value: V | undefined;
  private more: Map<string, V> | undefined;

  get(key: string): V | undefined {
    if (key === this.key) return this.value;
    return this.more?.get(key);
  }

  has(key: string): boolean {
    return key === this.key || (this.more !== undefined && this.more.has(key));
  }

  set(key: string, value: V): void {
    if (this.more !== undefined && this.more.has(key)) {
      this.more.set(key, value);
      return;
    }
    if (this.key === undefined || key === this.key) {
      this.key = key;
      this.value = value;
      return;
    }
    (this.more ??= new Map()).set(key, value);
  }

  /** No entry left. */
  get empty(): boolean {
    return this.key === undefined && (this.more === undefined || this.more.size === 0);
  }

  delete(key: string): void {
    if (key === this.key) {
      this.key = undefined;
      this.value = undefined;
      return;
    }
    this.more?.delete(key);
  }
}
