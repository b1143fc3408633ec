/**
 * Tool-name globs of the `tools` configuration: `*` matches any run of characters, everything
 * else matches itself. Matched without a regular expression: `^a.*a.*a.*b$` backtracks in
 * O(n^k) for k stars (ten stars against a 100-character name took over two minutes), while a
 * star-only glob has a greedy answer: the first segment is a prefix, the last a suffix, and each
 * middle segment is taken at its leftmost place after the previous one. Taking the leftmost
 * place never loses a match (it leaves the most room for what follows), so one left-to-right
 * pass of `indexOf` decides, in time linear in the name for each segment.
 */
export interface ToolGlob {
  test(name: string): boolean;
}

/** A matcher for a pattern with at least one `*`; undefined for a plain name (compared exactly). */
export function compileToolGlob(pattern: string): ToolGlob | undefined {
  if (!pattern.includes('*')) return undefined;
  const segments = pattern.split('*');
  const first = segments[0] ?? '';
  const last = segments[segments.length - 1] ?? '';
  const middle = segments.slice(1, -1).filter((s) => s !== '');
  const minLength = first.length + last.length + middle.reduce((n, s) => n + s.length, 0);
  return {
    test(name: string): boolean {
      if (name.length < minLength || !name.startsWith(first) || !name.endsWith(last)) return false;
      let at = first.length;
      const end = name.length - last.length;
      for (const segment of middle) {
        const found = name.indexOf(segment, at);
        if (found < 0 || found + segment.length > end) return false;
        at = found + segment.length;
      }
      return true;
    },
  };
}
