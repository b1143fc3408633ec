import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import type { OtlpEncoding } from '../formats/protobuf/codec.js';
import type { MemoryBudget } from './budget.js';
import type { IngestResult } from './pipeline.js';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/** Why new data must wait, and for how long: 429 (memory or spool full) or 503 (shutting down). */
export interface Refusal {
  readonly status: 429 | 503;
  readonly retryAfterSeconds: number;
  readonly why: string;
}

/** What the HTTP and gRPC front ends ask of the server. */
export interface Intake {
  /** Largest request body, compressed and after decompression (bytes). */
  readonly maxBodyBytes: number;
  readonly budget: MemoryBudget;
  /** Whether a request's headers carry the credentials the server asks for (always, when it asks for none). */
  authorized(header: (name: string) => string | undefined): boolean;
  refusal(): Refusal | undefined;
  /** Decodes a whole (decompressed) body, spools it and takes its spans. Throws `OtlpDecodeError` for bad data, `SpoolWriteError` when it cannot be spooled. */
  accept(body: Uint8Array, encoding: OtlpEncoding): Promise<IngestResult>;
  /** The /healthz answer: ok while data is taken. */
  health(): { readonly ok: boolean; readonly body: unknown };
}

export class BodyTooLarge extends Error {}
/** Memory reached its limit while the body was read: the request is refused (429), not lost. */
export class OverBudget extends Error {}
/** The spool could not write the request: it is refused (503) so that the client retries. */
export class SpoolWriteError extends Error {}

export type ContentCoding = 'identity' | 'gzip' | 'deflate';

/**
 * Bytes of a request counted in the memory budget while it is read, decompressed and decoded:
 * released once its spans are held (then they count as held).
 */
export class BodyReservation {
  private bytes = 0;
  constructor(private readonly budget: MemoryBudget) {}

  add(n: number): void {
    this.bytes += n;
    this.budget.reading += n;
  }

  release(): void {
    this.budget.reading -= this.bytes;
    this.bytes = 0;
  }
}

/**
 * Reads a body, counting it as it arrives: past `limit` bytes it stops with `BodyTooLarge`, and
 * when memory reaches its limit with `OverBudget` (the rest of the body is drained, not kept).
 */
export function readBody(source: Readable, limit: number, reservation: BodyReservation, budget: MemoryBudget): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (e: Error): void => {
      source.removeListener('data', onData);
      source.resume();
      reject(e);
    };
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size > limit) return stop(new BodyTooLarge());
      reservation.add(c.length);
      if (budget.over) return stop(new OverBudget());
      chunks.push(c);
    };
    source.on('data', onData);
    source.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
    source.on('error', reject);
  });
}

/** Gunzips or inflates a body, at most `limit` bytes out (`BodyTooLarge` beyond), counted in the reservation. */
export async function decompress(body: Buffer, coding: ContentCoding, limit: number, reservation: BodyReservation): Promise<Buffer> {
  if (coding === 'identity') return body;
  let out: Buffer;
  try {
    out = coding === 'gzip' ? await gunzipAsync(body, { maxOutputLength: limit }) : await inflateAsync(body, { maxOutputLength: limit });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new BodyTooLarge();
    throw new CorruptBody(`the body is not valid ${coding} data (${(e as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  reservation.add(out.length);
  return out;
}

/** A body whose Content-Encoding (or gRPC compression) does not match what it holds: 400 / INTERNAL. */
export class CorruptBody extends Error {}

/**
 * An error message that can go back to the client: decoders quote the input they choke on (V8's
 * JSON parser shows a piece of it, protobuf-es the value it rejects), and a request body is not
 * ours to echo into responses and logs. The message is cut before the first quote and before
 * "got <value>"; a position, when the decoder gave one, is kept.
 */
export function publicMessage(message: string): string {
  const position = /\bat position \d+(?: \(line \d+ column \d+\))?/.exec(message)?.[0];
  let text = (message.split(/["'`]/, 1)[0] ?? '').replace(/\bgot\b.*$/s, 'got an unexpected value').trim().replace(/[,:]$/, '');
  if (position !== undefined && !text.includes(position)) text += ` (${position})`;
  return text.slice(0, 300);
}
