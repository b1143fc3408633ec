import { createReadStream, fstatSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { getHeapStatistics } from 'node:v8';
import { Char } from '../fingerprint/chars.js';
import { InputError, type InputFile } from './input.js';
import { describeJsonError, lineAndColumn } from './json-error.js';

/** One document of an input file and where it starts: a parsed JSON value, or protobuf bytes. */
export type InputDocument =
  | { readonly kind: 'json'; readonly source: string; /** 1-based line */ readonly line: number; readonly value: unknown }
  | { readonly kind: 'protobuf'; readonly source: string; /** byte offset */ readonly offset: number; readonly bytes: Uint8Array };

export interface ReadOptions {
  /** Where `-` reads from (asked only when `-` is read). */
  readonly stdin?: () => Readable;
  /** stdin's file descriptor, when it is the process's: a folder redirected to stdin is an error, not empty input. */
  readonly stdinFd?: number;
  /** Bytes read, for progress. */
  readonly onBytes?: (n: number) => void;
  /** Largest single document (a JSON line, a whole-file JSON document, a protobuf message). */
  readonly maxDocumentBytes?: number;
}

/**
 * A document must be held whole to be parsed: V8 cannot hold a string over about 512 MB (a
 * longer line threw an uncaught RangeError), and a parsed document takes several times its
 * size. The limit is 256 MB or an eighth of the heap limit if that is smaller (a small
 * `--max-old-space-size` must not turn a big line into an out-of-memory crash).
 */
export function defaultMaxDocumentBytes(): number {
  return Math.min(256 * 1024 * 1024, Math.floor(getHeapStatistics().heap_size_limit / 8));
}

const megabytes = (n: number): string => `${Math.round(n / (1024 * 1024))} MB`;

/**
 * Reads one input. Its first bytes say what it is: JSON (JSON Lines, one document per line as
 * the collector's file exporter writes, or one document over many lines, pretty-printed, with
 * or without a UTF-8 BOM), OTLP protobuf (length-prefixed messages as the file exporter's
 * `format: proto` writes, or one bare message), or something to name in an error (compressed,
 * UTF-16). JSON Lines and length-prefixed protobuf are streamed: memory stays flat however
 * large the file; a single document is bounded by `maxDocumentBytes`.
 */
export async function* readDocuments(file: InputFile, options: ReadOptions = {}): AsyncGenerator<InputDocument> {
  if (file.problem !== undefined) throw new InputError(file.problem, file.name);
  const stdin = file.path === undefined;
  if (stdin && options.stdinFd !== undefined && isFolder(options.stdinFd)) throw new InputError('is a folder (stdin is redirected from a folder)', file.name);
  const stream = stdin ? (options.stdin?.() ?? process.stdin) : createReadStream(file.path as string, { highWaterMark: 1 << 20 });
  const source = new ByteSource(stream, options.onBytes);
  const max = options.maxDocumentBytes ?? defaultMaxDocumentBytes();
  try {
    const head = await source.peek(4);
    const kind = sniff(head);
    if (kind === 'empty') throw new InputError(stdin ? 'empty input: nothing arrived on stdin' : 'empty file: no trace data', file.name);
    if (kind === 'text') yield* readJson(file, source, max);
    else if (kind === 'frames') yield* readFrames(file, source, max);
    else if (kind === 'message') yield* readMessage(file, source, max);
    else throw new InputError(kind.error, file.name);
  } catch (e) {
    if (e instanceof InputError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    // a read error: its code, never its message's data
    throw new InputError(code === 'EISDIR' ? 'is a folder' : `cannot read (${code ?? (e instanceof Error ? e.name : 'error')})`, file.name);
  } finally {
    await source.close();
  }
}

function isFolder(fd: number): boolean {
  try {
    return fstatSync(fd).isDirectory();
  } catch {
    return false;
  }
}

type Kind = 'empty' | 'text' | 'frames' | 'message' | { readonly error: string };

const isSpace = (b: number): boolean => b === Char.Space || b === Char.Tab || b === Char.LineFeed || b === Char.CarriageReturn;

/** What the first bytes of an input say it is. */
function sniff(head: Buffer): Kind {
  if (head.length === 0) return 'empty';
  const [b0, b1, b2, b3] = head;
  if (b0 === 0x1f && b1 === 0x8b) return { error: 'gzip-compressed: decompress it first (gunzip)' };
  if (b0 === 0x28 && b1 === 0xb5 && b2 === 0x2f && b3 === 0xfd) return { error: 'zstd-compressed (the file exporter\'s compression): decompress it first (zstd -d)' };
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0xfe && b1 === 0xff)) return { error: 'UTF-16 text: save it as UTF-8' };
  let i = b0 === 0xef && b1 === 0xbb && b2 === 0xbf ? 3 : 0;
  while (i < head.length && isSpace(head[i] as number)) i++;
  // all whitespace so far: text (an empty file is caught when it ends)
  if (i >= head.length) return 'text';
  const first = head[i] as number;
  if (first === Char.OpenBrace || first === Char.OpenBracket) return 'text';
  // the file exporter's `format: proto`: a 4-byte big-endian length before each message
  if (b0 === 0x00) return 'frames';
  for (let k = 0; k < head.length; k++) {
    const b = head[k] as number;
    if (b < Char.Space && !isSpace(b)) return 'message';
  }
  return 'text'; // not JSON either: the JSON reader names the error
}

async function* readJson(file: InputFile, source: ByteSource, max: number): AsyncGenerator<InputDocument> {
  const lines = new LineSplitter(max, file.name);
  let lineNo = 0;
  let first = true;
  /** A line's document; 'blank'; or 'continues' when the first document does not end on its line. */
  const parse = (line: Buffer): InputDocument | 'blank' | 'continues' => {
    const text = line.toString('utf8');
    // trim() also drops a BOM (U+FEFF counts as white space) and a CR line end
    const trimmed = text.trim();
    if (trimmed === '') return 'blank';
    const wasFirst = first;
    first = false;
    try {
      return { kind: 'json', source: file.name, line: lineNo, value: JSON.parse(trimmed) as unknown };
    } catch {
      const error = describeJsonError(trimmed);
      if (wasFirst && (error === undefined || error.offset >= trimmed.length)) return 'continues';
      const lead = text.length - text.trimStart().length;
      throw new InputError(`invalid JSON: ${error?.problem ?? 'cannot be parsed'}`, file.name, lineNo, error ? lead + error.offset + 1 : undefined);
    }
  };
  for (;;) {
    const chunk = await source.next();
    if (chunk === undefined) break;
    for (const line of lines.push(chunk, lineNo)) {
      lineNo++;
      const doc = parse(line);
      if (doc === 'blank') continue;
      if (doc === 'continues') {
        // a pretty-printed document: the rest of the input is the same document
        yield await readWholeDocument(file, source, [line, NEWLINE, lines.restOf(chunk)], lineNo, max);
        return;
      }
      yield doc;
    }
  }
  const last = lines.end();
  if (last !== undefined) {
    lineNo++;
    const doc = parse(last);
    if (doc === 'continues') yield await readWholeDocument(file, source, [last], lineNo, max);
    else if (doc !== 'blank') yield doc;
  }
  if (first) throw new InputError(file.path === undefined ? 'empty input: nothing arrived on stdin' : 'empty file: no trace data', file.name);
}

const NEWLINE = Buffer.from('\n');

/** The rest of the input is one document that began at line `startLine` with the bytes in `first`. */
async function readWholeDocument(file: InputFile, source: ByteSource, first: Buffer[], startLine: number, max: number): Promise<InputDocument> {
  const parts = first;
  let bytes = parts.reduce((n, b) => n + b.length, 0);
  for (;;) {
    const chunk = await source.next();
    if (chunk === undefined) break;
    bytes += chunk.length;
    if (bytes > max) throw new InputError(`one JSON document larger than ${megabytes(max)} cannot be held to parse; write it as JSON Lines (one object per line)`, file.name, startLine);
    parts.push(chunk);
  }
  let text = Buffer.concat(parts).toString('utf8');
  parts.length = 0;
  if (text.charCodeAt(0) === Char.ByteOrderMark) text = text.slice(1);
  try {
    return { kind: 'json', source: file.name, line: startLine, value: JSON.parse(text) as unknown };
  } catch {
    const error = describeJsonError(text);
    const lead = text.length - text.trimStart().length;
    const where = lineAndColumn(text.slice(lead), error?.offset !== undefined ? error.offset - lead : text.length);
    throw new InputError(`invalid JSON: ${error?.problem ?? 'cannot be parsed'}`, file.name, startLine + where.line - 1, where.column);
  }
}

/** Length-prefixed OTLP protobuf messages, one at a time. */
async function* readFrames(file: InputFile, source: ByteSource, max: number): AsyncGenerator<InputDocument> {
  let offset = 0;
  for (;;) {
    const prefix = await source.take(4);
    if (prefix.length === 0) return;
    if (prefix.length < 4) throw new InputError(`truncated protobuf length prefix at byte ${offset}`, file.name);
    const length = prefix.readUInt32BE(0);
    // the exporter never writes an empty message: zeros are not OTLP (scan /dev/zero)
    if (length === 0) throw new InputError(`not OTLP: a zero-length protobuf message at byte ${offset} (a file of zero bytes?)`, file.name);
    if (length > max) throw new InputError(`a protobuf message of ${megabytes(length)} at byte ${offset} is larger than the ${megabytes(max)} limit (or this is not OTLP protobuf)`, file.name);
    const bytes = await source.take(length);
    if (bytes.length < length) throw new InputError(`truncated protobuf message at byte ${offset} (${bytes.length} of ${length} bytes)`, file.name);
    yield { kind: 'protobuf', source: file.name, offset: offset + 4, bytes };
    offset += 4 + length;
  }
}

/** One bare OTLP protobuf message: the whole input. */
async function* readMessage(file: InputFile, source: ByteSource, max: number): AsyncGenerator<InputDocument> {
  const bytes = await source.take(max + 1);
  if (bytes.length > max) throw new InputError(`a binary file larger than ${megabytes(max)} cannot be held to decode as one protobuf message`, file.name);
  yield { kind: 'protobuf', source: file.name, offset: 0, bytes };
}

/** Splits byte chunks into lines without building strings longer than a line; lines longer than `max` are an error. */
class LineSplitter {
  private pieces: Buffer[] = [];
  private bytes = 0;
  /** Where the line just returned by `push` ended in its chunk. */
  private after = 0;
  constructor(
    private readonly max: number,
    private readonly source: string,
  ) {}

  /** Complete lines in `chunk` (without their `\n`); `before` is the number of lines already returned. */
  *push(chunk: Buffer, before: number): Generator<Buffer> {
    let from = 0;
    let lineNo = before + 1;
    for (;;) {
      const nl = chunk.indexOf(0x0a, from);
      this.append(chunk.subarray(from, nl < 0 ? chunk.length : nl), lineNo);
      if (nl < 0) return;
      from = nl + 1;
      this.after = from;
      lineNo++;
      yield this.take();
    }
  }

  /** What follows the line just returned by `push` in its chunk. */
  restOf(chunk: Buffer): Buffer {
    return chunk.subarray(this.after);
  }

  /** The last line when the input does not end with a newline. */
  end(): Buffer | undefined {
    return this.bytes > 0 ? this.take() : undefined;
  }

  private append(part: Buffer, lineNo: number): void {
    if (part.length === 0) return;
    this.bytes += part.length;
    if (this.bytes > this.max) {
      throw new InputError(`line longer than ${megabytes(this.max)}: a document this large cannot be held to parse (or this is not JSON Lines)`, this.source, lineNo);
    }
    this.pieces.push(part);
  }

  private take(): Buffer {
    const line = this.pieces.length === 1 ? (this.pieces[0] as Buffer) : Buffer.concat(this.pieces, this.bytes);
    this.pieces = [];
    this.bytes = 0;
    return line;
  }
}

/** Byte chunks of a stream with look-ahead; reading stops (and the stream is destroyed) on `close`. */
class ByteSource {
  private readonly iterator: AsyncIterator<unknown>;
  private held: Buffer[] = [];
  private heldBytes = 0;

  constructor(
    stream: Readable,
    private readonly onBytes: ((n: number) => void) | undefined,
  ) {
    this.iterator = stream[Symbol.asyncIterator]();
  }

  /** The next chunk (held bytes first); undefined at the end. */
  async next(): Promise<Buffer | undefined> {
    if (this.held.length > 0) {
      const chunk = this.held.length === 1 ? (this.held[0] as Buffer) : Buffer.concat(this.held, this.heldBytes);
      this.held = [];
      this.heldBytes = 0;
      return chunk;
    }
    return this.pull();
  }

  /** At least `n` bytes from the front (fewer at the end), left in place. */
  async peek(n: number): Promise<Buffer> {
    while (this.heldBytes < n) {
      const chunk = await this.pull();
      if (chunk === undefined) break;
      this.held.push(chunk);
      this.heldBytes += chunk.length;
    }
    // one held chunk is returned as it is: taking small frames from a big chunk must not copy it each time
    return this.held.length === 1 ? (this.held[0] as Buffer) : Buffer.concat(this.held, this.heldBytes);
  }

  /** Exactly `n` bytes from the front, fewer only at the end of the input. */
  async take(n: number): Promise<Buffer> {
    const all = await this.peek(n);
    const out = all.subarray(0, Math.min(n, all.length));
    const rest = all.subarray(out.length);
    this.held = rest.length > 0 ? [rest] : [];
    this.heldBytes = rest.length;
    return out;
  }

  private async pull(): Promise<Buffer | undefined> {
    const r = await this.iterator.next();
    if (r.done) return undefined;
    const chunk = typeof r.value === 'string' ? Buffer.from(r.value) : Buffer.isBuffer(r.value) ? r.value : Buffer.from(r.value as Uint8Array);
    this.onBytes?.(chunk.length);
    return chunk;
  }

  async close(): Promise<void> {
    this.held = [];
    await this.iterator.return?.();
  }
}
