import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { OtlpEncoding } from '../formats/protobuf/codec.js';

/**
 * The on-disk spool (`--spool DIR`): every accepted request body is written before it is
 * answered, and what happened to its spans is written after: forwarded or given up
 * (`settled`), and which tool calls were counted in serve's metrics (`counted`). After a crash or
 * a `kill -9`, the next start replays every span not settled, and does not count again what was
 * counted: delivery is at least once, counting at most once.
 *
 * Files (`segments`) are written in order and deleted in order, once every span they hold was
 * settled: the records of a newer segment (settled, counted) then never outlive the segment they
 * speak of. A segment is sealed after `SEGMENT_BYTES` or `SEGMENT_MS`. Writes are not synced:
 * the spool survives the process (a kill, an out-of-memory kill), not a crash of the machine.
 *
 * Record: length (u32 BE, of the payload) · check (first 4 bytes of the payload's SHA-1) · type
 * (u8) · payload. A file that does not start with `MAGIC` is renamed `*.corrupt` and skipped; a
 * record that fails its check (or is cut short, as a kill in the middle of a write leaves it)
 * ends the reading of its file. Both are counted.
 */

const MAGIC = Buffer.from('loopwatch-spool 1\n', 'latin1');
const HEADER = 9;
const SEGMENT_BYTES = 8 * 1024 * 1024;
const SEGMENT_MS = 5_000;
const SUFFIX = '.lwspool';

const enum RecordType {
  ReceivedProtobuf = 1,
  ReceivedJson = 2,
  /** Keys (trace id + span id, 24 bytes each) of spans forwarded or given up. */
  Settled = 3,
  /** Keys of tool-call spans whose calls (and detections) were counted. */
  Counted = 4,
}

export const SPAN_KEY_BYTES = 24;

/** A spool file, and how many spans written in it are not settled yet. */
export class SpoolSegment {
  live = 0;
  sealed = false;
  /** Its records are still being replayed (after a restart): not deletable yet. */
  pinned = false;
  fd: number | undefined;
  constructor(
    readonly name: string,
    readonly path: string,
    public bytes: number,
    readonly createdAt: number,
  ) {}
}

export interface SpoolStats {
  /** Bytes of every spool file. */
  spoolBytes: number;
  spoolFiles: number;
  /** Spool files that could not be read (skipped, renamed *.corrupt). */
  spoolCorruptFiles: number;
  /** Records that failed their check or were cut short (the rest of their file is skipped). */
  spoolCorruptRecords: number;
  /** Spans replayed from the spool after a restart. */
  spoolReplayedSpans: number;
}

/** A request body found in the spool at start, to replay. */
export interface SpooledRequest {
  readonly segment: SpoolSegment;
  readonly encoding: OtlpEncoding;
  readonly body: Uint8Array;
}

/** What the spool held at start: the requests to replay and what was already done with their spans. */
export interface SpoolReplay {
  /** Keys of spans already settled (skip them). */
  readonly settled: ReadonlySet<string>;
  /** Keys of tool-call spans already counted. */
  readonly counted: ReadonlySet<string>;
  /** The requests, oldest first, read file by file (each segment is unpinned once its requests were handed out). */
  readonly requests: AsyncIterable<SpooledRequest>;
}

const check = (payload: Uint8Array): number => createHash('sha1').update(payload).digest().readUInt32BE(0);

/** The 24-byte key of a span (trace id, span id) as the spool writes it and as sets hold it. */
export function spanKey(traceId: Uint8Array, spanId: Uint8Array): string {
  return Buffer.concat([traceId, spanId]).toString('latin1');
}

export class Spool {
  private readonly segments: SpoolSegment[] = [];
  private current: SpoolSegment | undefined;
  private seq = 0;
  readonly stats: SpoolStats = { spoolBytes: 0, spoolFiles: 0, spoolCorruptFiles: 0, spoolCorruptRecords: 0, spoolReplayedSpans: 0 };

  constructor(
    readonly dir: string,
    readonly maxBytes: number,
    private readonly log: (level: 'info' | 'warn' | 'error', message: string) => void,
  ) {}

  /** True while new data must wait: the spool's files reached `maxBytes`. */
  get full(): boolean {
    return this.stats.spoolBytes >= this.maxBytes;
  }

  /**
   * Opens the folder (creating it) and reads what an earlier process left: the keys settled and
   * counted first (every file), then the requests to replay, read again file by file.
   */
  open(): SpoolReplay {
    mkdirSync(this.dir, { recursive: true });
    const names = readdirSync(this.dir)
      .filter((n) => n.endsWith(SUFFIX))
      .sort();
    const settled = new Set<string>();
    const counted = new Set<string>();
    const readable: SpoolSegment[] = [];
    for (const name of names) {
      const path = join(this.dir, name);
      const seq = Number.parseInt(name, 10);
      if (Number.isSafeInteger(seq)) this.seq = Math.max(this.seq, seq);
      const segment = new SpoolSegment(name, path, statSync(path).size, Date.now());
      segment.sealed = true;
      segment.pinned = true;
      const records = this.read(segment, true);
      if (records === undefined) continue;
      for (const r of records) {
        if (r.type === RecordType.Settled) addKeys(settled, r.payload);
        else if (r.type === RecordType.Counted) addKeys(counted, r.payload);
      }
      readable.push(segment);
      this.add(segment);
    }
    if (readable.length > 0) this.log('info', `spool ${this.dir}: ${readable.length} file(s), ${this.stats.spoolBytes} bytes left by an earlier run; replaying what was not forwarded`);
    const requests = async function* (this: Spool): AsyncGenerator<SpooledRequest> {
      for (const segment of readable) {
        for (const r of this.read(segment, false) ?? []) {
          if (r.type === RecordType.ReceivedProtobuf || r.type === RecordType.ReceivedJson) {
            yield { segment, encoding: r.type === RecordType.ReceivedJson ? 'json' : 'protobuf', body: r.payload };
          }
        }
        segment.pinned = false;
        this.collect();
      }
    }.call(this);
    return { settled, counted, requests };
  }

  /** Writes an accepted request body; the spans taken from it are then `hold`-ed on the returned segment. */
  received(body: Uint8Array, encoding: OtlpEncoding): SpoolSegment {
    return this.write(encoding === 'json' ? RecordType.ReceivedJson : RecordType.ReceivedProtobuf, body);
  }

  hold(segment: SpoolSegment, spans = 1): void {
    segment.live += spans;
  }

  /** Spans forwarded or given up: written down, and released from their segments. */
  settled(spans: readonly { readonly traceId: Uint8Array; readonly spanId: Uint8Array; readonly segment: SpoolSegment }[]): void {
    if (spans.length === 0) return;
    this.writeKeys(RecordType.Settled, spans);
    for (const s of spans) s.segment.live--;
    this.collect();
  }

  /** Tool-call spans whose calls were counted in the metrics (not to be counted again after a replay). */
  counted(spans: readonly { readonly traceId: Uint8Array; readonly spanId: Uint8Array }[]): void {
    if (spans.length > 0) this.writeKeys(RecordType.Counted, spans);
  }

  /** Seals the current file once it is old enough, so that it can be deleted when its spans are settled. */
  tick(now = Date.now()): void {
    if (this.current && now - this.current.createdAt >= SEGMENT_MS) this.seal();
    this.collect();
  }

  close(): void {
    this.seal();
    this.collect();
  }

  private writeKeys(type: RecordType, spans: readonly { readonly traceId: Uint8Array; readonly spanId: Uint8Array }[]): void {
    const payload = Buffer.allocUnsafe(spans.length * SPAN_KEY_BYTES);
    spans.forEach((s, i) => {
      payload.set(s.traceId.subarray(0, 16), i * SPAN_KEY_BYTES);
      payload.set(s.spanId.subarray(0, 8), i * SPAN_KEY_BYTES + 16);
    });
    try {
      this.write(type, payload);
    } catch (e) {
      // the spans stay unsettled on disk: a restart would send them again (a duplicate, not a loss)
      this.log('error', `spool ${this.dir}: could not write: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private write(type: RecordType, payload: Uint8Array): SpoolSegment {
    if (this.current && (this.current.bytes >= SEGMENT_BYTES || Date.now() - this.current.createdAt >= SEGMENT_MS)) this.seal();
    if (!this.current) {
      const name = `${String(++this.seq).padStart(12, '0')}${SUFFIX}`;
      const segment = new SpoolSegment(name, join(this.dir, name), 0, Date.now());
      segment.fd = openSync(segment.path, 'wx');
      this.writeAll(segment, MAGIC);
      this.add(segment);
      this.current = segment;
    }
    const header = Buffer.allocUnsafe(HEADER);
    header.writeUInt32BE(payload.byteLength, 0);
    header.writeUInt32BE(check(payload), 4);
    header.writeUInt8(type, 8);
    this.writeAll(this.current, header);
    this.writeAll(this.current, payload);
    return this.current;
  }

  private writeAll(segment: SpoolSegment, data: Uint8Array): void {
    let off = 0;
    while (off < data.byteLength) off += writeSync(segment.fd as number, data, off);
    segment.bytes += data.byteLength;
    this.stats.spoolBytes += data.byteLength;
  }

  private add(segment: SpoolSegment): void {
    this.segments.push(segment);
    this.stats.spoolFiles = this.segments.length;
    if (segment.fd === undefined) this.stats.spoolBytes += segment.bytes;
  }

  private seal(): void {
    const segment = this.current;
    if (!segment) return;
    this.current = undefined;
    segment.sealed = true;
    if (segment.fd !== undefined) closeSync(segment.fd);
    segment.fd = undefined;
  }

  /** Deletes settled files, oldest first, stopping at the first that still matters. */
  private collect(): void {
    while (this.segments.length > 0) {
      const oldest = this.segments[0] as SpoolSegment;
      if (!oldest.sealed || oldest.pinned || oldest.live > 0) break;
      this.segments.shift();
      this.stats.spoolBytes -= oldest.bytes;
      this.stats.spoolFiles = this.segments.length;
      try {
        unlinkSync(oldest.path);
      } catch (e) {
        this.log('warn', `spool ${this.dir}: could not delete ${oldest.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }

  /** The records of a segment; undefined (and the file set aside) when it is not a spool file. Problems are counted when `report`. */
  private read(segment: SpoolSegment, report: boolean): { type: RecordType; payload: Uint8Array }[] | undefined {
    let data: Buffer;
    try {
      data = readFileSync(segment.path);
    } catch (e) {
      this.log('error', `spool ${this.dir}: cannot read ${segment.name} (skipped): ${e instanceof Error ? e.message : String(e)}`);
      this.stats.spoolCorruptFiles++;
      return undefined;
    }
    if (data.length < MAGIC.length || !data.subarray(0, MAGIC.length).equals(MAGIC)) {
      this.stats.spoolCorruptFiles++;
      const aside = `${segment.path}.corrupt`;
      this.log('error', `spool ${this.dir}: ${segment.name} is not a spool file; skipped and renamed ${segment.name}.corrupt`);
      try {
        renameSync(segment.path, aside);
      } catch {
        // read-only folder: it is skipped again next time
      }
      return undefined;
    }
    const records: { type: RecordType; payload: Uint8Array }[] = [];
    let off = MAGIC.length;
    while (off < data.length) {
      const problem = recordProblem(data, off);
      if (problem !== undefined) {
        if (report) {
          this.stats.spoolCorruptRecords++;
          this.log('warn', `spool ${this.dir}: ${segment.name}: a record ${problem} at byte ${off} (a kill in the middle of a write?); the rest of the file is skipped`);
        }
        break;
      }
      const length = data.readUInt32BE(off);
      records.push({ type: data.readUInt8(off + 8) as RecordType, payload: data.subarray(off + HEADER, off + HEADER + length) });
      off += HEADER + length;
    }
    return records;
  }
}

/** Why the record at `off` cannot be read, if it cannot. */
function recordProblem(data: Buffer, off: number): 'cut short' | 'damaged' | undefined {
  if (data.length - off < HEADER) return 'cut short';
  const length = data.readUInt32BE(off);
  if (data.length - off - HEADER < length) return 'cut short';
  return check(data.subarray(off + HEADER, off + HEADER + length)) === data.readUInt32BE(off + 4) ? undefined : 'damaged';
}

function addKeys(into: Set<string>, payload: Uint8Array): void {
  const b = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  for (let i = 0; i + SPAN_KEY_BYTES <= b.length; i += SPAN_KEY_BYTES) into.add(b.toString('latin1', i, i + SPAN_KEY_BYTES));
}
