import type { Dirent, Stats } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';

/** Bad input: the message names the file and, when known, the line and column. */
export class InputError extends Error {
  override readonly name = 'InputError';
  constructor(
    readonly detail: string,
    readonly source: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(`${source}${line !== undefined ? `:${line}` : ''}${column !== undefined ? `:${column}` : ''}: ${detail}`);
  }
}

export interface InputFile {
  /** Display name: the path, or `<stdin>`. */
  readonly name: string;
  /** `undefined` for stdin. */
  readonly path: string | undefined;
  /** Bytes, for regular files (progress); undefined for stdin, pipes and devices. */
  readonly size: number | undefined;
  /** Known before reading: the file cannot be scanned (a broken symbolic link in a folder). */
  readonly problem?: string;
}

/** File names a folder scan picks up (a file named on the command line is read whatever its name). */
export const INPUT_EXTENSIONS = /\.(json|jsonl|ndjson|otlp|pb|binpb)$/i;

export const STDIN_NAME = '<stdin>';

/**
 * Expands the PATH arguments: files as given, folders recursively (trace files only, sorted),
 * `-` for stdin. Symbolic links are followed, in folders too; a folder reached twice (a link
 * cycle) is walked once, and a file reached twice (by two paths) is read once.
 */
export async function expandInputs(paths: readonly string[]): Promise<InputFile[]> {
  const stdinCount = paths.filter((p) => p === '-').length;
  if (stdinCount > 1) throw new InputError(`given ${stdinCount} times; stdin can be read only once`, '-');
  const files: InputFile[] = [];
  const seenFiles = new Set<string>();
  const seenDirs = new Set<string>();
  const addFile = (file: InputFile, st: Stats | undefined): void => {
    const key = st ? `${st.dev}:${st.ino}` : undefined;
    if (key !== undefined && st?.isFile()) {
      if (seenFiles.has(key)) return;
      seenFiles.add(key);
    }
    files.push(file);
  };
  for (const p of paths) {
    if (p === '-') {
      files.push({ name: STDIN_NAME, path: undefined, size: undefined });
      continue;
    }
    let st: Stats;
    try {
      st = await stat(p);
    } catch {
      throw new InputError((await isLink(p)) ? 'broken symbolic link' : 'no such file or folder', p);
    }
    if (st.isDirectory()) await walk(p, addFile, seenDirs);
    else addFile({ name: p, path: p, size: st.isFile() ? st.size : undefined }, st);
  }
  return files;
}

async function isLink(p: string): Promise<boolean> {
  try {
    return (await lstat(p)).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Depth-first, in name order, without recursion (a deep tree must not overflow the stack). */
async function walk(root: string, addFile: (f: InputFile, st: Stats | undefined) => void, seenDirs: Set<string>): Promise<void> {
  const pending: string[] = [root];
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    const real = await realpath(dir).catch(() => dir);
    if (seenDirs.has(real)) continue;
    seenDirs.add(real);
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      addFile({ name: dir, path: dir, size: undefined, problem: `cannot read the folder (${(e as NodeJS.ErrnoException).code ?? 'error'})` }, undefined);
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const e of entries) {
      const full = join(dir, e.name);
      if (e.isDirectory()) {
        subdirs.push(full);
        continue;
      }
      if (e.isSymbolicLink()) {
        let target: Stats;
        try {
          target = await stat(full);
        } catch {
          // a link that points nowhere: say so rather than skip what may be the looping run
          if (INPUT_EXTENSIONS.test(e.name)) addFile({ name: full, path: full, size: undefined, problem: 'broken symbolic link' }, undefined);
          continue;
        }
        if (target.isDirectory()) subdirs.push(full);
        else if (target.isFile() && INPUT_EXTENSIONS.test(e.name)) addFile({ name: full, path: full, size: target.size }, target);
        continue;
      }
      if (e.isFile() && INPUT_EXTENSIONS.test(e.name)) {
        let st: Stats;
        try {
          st = await stat(full);
        } catch (err) {
          // gone since the folder was listed (a log rotated away): no longer part of the folder
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
          addFile({ name: full, path: full, size: undefined, problem: `cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})` }, undefined);
          continue;
        }
        addFile({ name: full, path: full, size: st.size }, st);
      }
    }
    // popped from the end: push in reverse to walk them in name order
    for (let k = subdirs.length - 1; k >= 0; k--) pending.push(subdirs[k] as string);
  }
}

/**
 * A path as reports and summaries show it: relative to the working folder when inside it, else
 * only its last part; a report must not carry the absolute paths of the user's files.
 */
export function displayName(path: string): string {
  if (path === '-' || path === STDIN_NAME) return 'stdin';
  const rel = relative(process.cwd(), resolve(path));
  if (rel === '') return '.';
  return rel.startsWith('..') || isAbsolute(rel) ? basename(path) : rel;
}
