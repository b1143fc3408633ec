import { createReadStream, type Stats } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { lineAndColumn, locateJsonError } from './json-error.js';

/** One parsed JSON document and where it came from. */
export interface InputDocument {
  readonly source: string;
  /** 1-based line where the document starts. */
  readonly line: number;
  readonly value: unknown;
}

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
  readonly size: number | undefined;
}

const EXTENSIONS = /\.(json|jsonl|ndjson|otlp)$/i;
/** V8 cannot hold a longer string; a single JSON document beyond this must be written as JSON Lines. */
const MAX_DOCUMENT_CHARS = 400 * 1024 * 1024;

/** Expands the PATH arguments: files as given, folders recursively (JSON files only, sorted), `-` for stdin. */
export async function expandInputs(paths: readonly string[]): Promise<InputFile[]> {
  const files: InputFile[] = [];
  for (const p of paths) {
    if (p === '-') {
      files.push({ name: '<stdin>', path: undefined, size: undefined });
      continue;
    }
    let st: Stats;
    try {
      st = await stat(p);
    } catch {
      throw new InputError('no such file or folder', p);
    }
    if (st.isDirectory()) files.push(...(await walk(p)));
    else files.push({ name: p, path: p, size: st.size });
  }
  return files;
}

async function walk(dir: string): Promise<InputFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name));
  const out: InputFile[] = [];
  for (const e of entries) {
    const full = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(full)));
    else if (e.isFile() && EXTENSIONS.test(e.name)) out.push({ name: full, path: full, size: (await stat(full)).size });
  }
  return out;
}

/**
 * Reads one input as JSON Lines (one document per line, as the collector's file exporter writes)
 * or, when its first line is not a whole document, as one JSON document (pretty-printed files).
 * Lines are streamed, so memory stays flat for JSON Lines of any size. `onBytes` reports progress.
 */
export async function* readDocuments(file: InputFile, onBytes?: (n: number) => void, stdin: Readable = process.stdin): AsyncGenerator<InputDocument> {
  const stream = file.path === undefined ? stdin : createReadStream(file.path, { highWaterMark: 1 << 20 });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let lineNo = 0;
  let documentMode = false;
  let docStart = 0;
  let buffer: string[] = [];
  let bufferedChars = 0;
  try {
    for await (const line of lines) {
      lineNo++;
      onBytes?.(line.length + 1);
      if (documentMode) {
        bufferedChars += line.length + 1;
        if (bufferedChars > MAX_DOCUMENT_CHARS) {
          throw new InputError('a single JSON document this large cannot be parsed; write it as JSON Lines (one object per line)', file.name, docStart);
        }
        buffer.push(line);
        continue;
      }
      const trimmed = line.trim();
      if (trimmed === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(trimmed);
      } catch (e) {
        if (docStart === 0) {
          // first document does not fit on its line: the whole file is one (pretty-printed) document
          documentMode = true;
          docStart = lineNo;
          buffer = [line];
          bufferedChars = line.length + 1;
          continue;
        }
        const offset = locateJsonError(trimmed);
        const column = offset >= 0 ? line.indexOf(trimmed) + offset + 1 : undefined;
        throw new InputError(`invalid JSON: ${(e as Error).message.split("\n")[0]?.slice(0, 160)}`, file.name, lineNo, column);
      }
      if (docStart === 0) docStart = lineNo;
      yield { source: file.name, line: lineNo, value };
    }
    if (documentMode) {
      const text = buffer.join('\n');
      buffer = [];
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (e) {
        const offset = locateJsonError(text);
        const where = lineAndColumn(text, offset >= 0 ? offset : text.length);
        throw new InputError(`invalid JSON: ${(e as Error).message.split("\n")[0]?.slice(0, 160)}`, file.name, docStart + where.line - 1, where.column);
      }
      yield { source: file.name, line: docStart, value };
    }
  } catch (e) {
    if (e instanceof InputError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(code === 'EISDIR' ? 'is a folder' : `cannot read: ${(e as Error).message}`, file.name, lineNo || undefined);
  } finally {
    lines.close();
    if (file.path !== undefined) (stream as ReturnType<typeof createReadStream>).destroy();
  }
}
