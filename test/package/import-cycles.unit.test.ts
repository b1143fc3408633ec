/**
 * No module of src/ depends on itself through others: data flows one way (span → conventions →
 * engine → processor outputs), and a circle means two modules that can only be read together.
 * Type-only imports count as well (as `madge --circular` counts them).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** Relative module specifiers of a file: static imports and re-exports (type-only included), dynamic imports. */
function specifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const found: string[] = [];
  for (const re of [/\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"](\.[^'"]+)['"]/g, /\bimport\s*['"](\.[^'"]+)['"]/g, /\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g]) {
    for (const m of code.matchAll(re)) if (m[1] !== undefined) found.push(m[1]);
  }
  return found;
}

function resolveModule(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** Strongly connected components with more than one module, or a module importing itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.map((f) => relative(SRC, f)).sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('src/ imports', () => {
  const files = sources(SRC);
  const graph = new Map(files.map((f) => [f, specifiers(readFileSync(f, 'utf8')).flatMap((s) => resolveModule(f, s) ?? [])]));

  it('are read (the scan finds the modules and their imports)', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(graph.get(join(SRC, 'index.ts'))?.length).toBeGreaterThan(5);
  });

  it('form no circle', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('would show a circle if there were one', () => {
    const a = join(SRC, 'a.ts');
    const b = join(SRC, 'b.ts');
    expect(circles(new Map([[a, [b]], [b, [a]]]))).toEqual([['a.ts', 'b.ts']]);
  });
});
