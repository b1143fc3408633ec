/**
 * Names a long-lived cache keeps (tool names for messages, per-tool policies) are bounded in size:
 * a name is kept whole up to this many characters, and a longer one only as a copy of its start.
 * Tool names come from span attributes, and nothing stops an app from using a 256 KB one.
 */
export const MAX_RETAINED_NAME = 256;

/**
 * `name` as a cache may keep it: itself when short, else a copy of its first characters and an
 * ellipsis. A copy, never a slice: V8 builds a slice of a long string as a view that keeps the
 * whole original alive. Slicing a concatenation makes V8 flatten it into a new string first, and
 * the slice is then a view of that small string only.
 */
export function retainedName(name: string): string {
  if (name.length <= MAX_RETAINED_NAME) return name;
  return ` ${name.slice(0, MAX_RETAINED_NAME - 1)}…`.slice(1);
}
