/**
 * Runnable snippets of the README and docs: fenced code blocks whose info string is `ts run`
 * (optionally `prelude=NAME`), with the `<!-- expect: TEXT -->` and `<!-- expect-exported: EVENT -->`
 * lines that follow them. Other blocks (`ts`, `sh`, `yaml`, ...) are fragments and not run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Snippet {
  /** `README.md:42`: file and line of the opening fence. */
  readonly where: string;
  readonly code: string;
  readonly prelude?: string;
  /** Text the run must print (stdout or stderr). */
  readonly expect: readonly string[];
  /** Span event names the exported spans must carry. */
  readonly expectExported: readonly string[];
}

const FENCE = /^```(\w+)([^\n]*)\n([\s\S]*?)^```[ \t]*\n((?:<!-- expect(?:-exported)?: .* -->\n)*)/gm;

export function snippetsOf(repo: string, file: string): Snippet[] {
  const text = readFileSync(join(repo, file), 'utf8');
  const out: Snippet[] = [];
  for (const m of text.matchAll(FENCE)) {
    const [, lang = '', info = '', code = '', notes = ''] = m;
    const words = info.trim().split(/\s+/);
    if (!['ts', 'js'].includes(lang) || !words.includes('run')) continue;
    const prelude = words.find((w) => w.startsWith('prelude='))?.slice('prelude='.length);
    const lines = [...notes.matchAll(/<!-- (expect|expect-exported): (.*) -->/g)];
    out.push({
      where: `${file}:${text.slice(0, m.index).split('\n').length}`,
      code,
      ...(prelude ? { prelude } : {}),
      expect: lines.filter((l) => l[1] === 'expect').map((l) => l[2] ?? ''),
      expectExported: lines.filter((l) => l[1] === 'expect-exported').map((l) => l[2] ?? ''),
    });
  }
  return out;
}
