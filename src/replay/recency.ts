/** An entry of a `RecencyList`: the list links it in place (no node objects, no allocation per touch). */
export interface Linked<T> {
  newer: T | undefined;
  older: T | undefined;
}

/**
 * Entries in order of last use, oldest first, with O(1) touch, removal and oldest. A `Map` kept in
 * insertion order does the same job until many entries are deleted from its front: V8 leaves
 * deleted slots in place until the table is rebuilt, and `values().next()` walks over all of them,
 * so evicting the oldest entry again and again costs as much as the table is large.
 */
export class RecencyList<T extends Linked<T>> {
  private head: T | undefined;
  private tail: T | undefined;
  size = 0;

  /** Least recently used. */
  get oldest(): T | undefined {
    return this.head;
  }

  /** Appends, or moves to the newest end. */
  touch(entry: T): void {
    if (this.tail === entry) return;
    if (entry.newer !== undefined || entry.older !== undefined || this.head === entry) this.remove(entry);
    entry.older = this.tail;
    entry.newer = undefined;
    if (this.tail) this.tail.newer = entry;
    else this.head = entry;
    this.tail = entry;
    this.size++;
  }

  remove(entry: T): void {
    if (entry.older) entry.older.newer = entry.newer;
    else if (this.head === entry) this.head = entry.newer;
    else return; // not in the list
    if (entry.newer) entry.newer.older = entry.older;
    else this.tail = entry.older;
    entry.newer = undefined;
    entry.older = undefined;
    this.size--;
  }

  /** Oldest first; an entry may remove itself while visited. */
  *values(): IterableIterator<T> {
    let e = this.head;
    while (e) {
      const next: T | undefined = e.newer;
      yield e;
      e = next;
    }
  }
}
