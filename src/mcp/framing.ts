/**
 * Newline-delimited JSON-RPC framing (the MCP stdio transport) on raw bytes: messages are cut
 * at `\n` and handed on as the bytes they arrived as, their `\n` included, never re-serialised:
 * a relay writes a message with one write (one system call, one wake-up of the reader). A
 * message's bytes are handed on as the chunks they came in (`parts`, views onto the chunks, no
 * copy); `joinParts` makes the one copy a reader needs, only when it reads the message.
 */

export const NEWLINE = 0x0a;
export const NEWLINE_BYTES = Buffer.from([NEWLINE]);

/** `parts` belongs to the callee: the splitter keeps no reference to the array or its buffers. */
export type OnLine = (parts: readonly Buffer[], bytes: number) => void;

export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  /** Bytes of the message under way (0 at a message boundary). */
  get partialBytes(): number {
    return this.pendingBytes;
  }

  /** Calls `onLine` with each complete message in `chunk`, its `\n` included (JSON whitespace, as is a `\r` before it). */
  push(chunk: Buffer, onLine: OnLine): void {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE, start); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, nl + 1);
      start = nl + 1;
      if (this.pendingBytes === 0) {
        onLine([piece], piece.length);
        continue;
      }
      const parts = this.pending;
      const bytes = this.pendingBytes + piece.length;
      parts.push(piece);
      this.pending = [];
      this.pendingBytes = 0;
      onLine(parts, bytes);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pending.push(rest);
      this.pendingBytes += rest.length;
    }
  }

  /** The unterminated bytes left when the stream ended (a last message without `\n`), handed to `onLine`. */
  end(onLine: OnLine): void {
    if (this.pendingBytes === 0) return;
    const parts = this.pending;
    const bytes = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    onLine(parts, bytes);
  }
}

/** The message as one buffer (the parts themselves when there is one). */
export function joinParts(parts: readonly Buffer[], bytes: number): Buffer {
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts as Buffer[], bytes);
}

/** The first byte of the message that is not JSON whitespace, or -1. */
function firstNonSpace(parts: readonly Buffer[]): number {
  for (const part of parts) {
    for (let i = 0; i < part.length; i++) {
      const c = part[i] as number;
      if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return c;
    }
  }
  return -1;
}

/** An empty line (or only whitespace): relayed as it came, not a message. */
export function isBlank(parts: readonly Buffer[]): boolean {
  return firstNonSpace(parts) === -1;
}

/** Could this be a JSON-RPC message (an object) or batch (an array)? A cheap first look, not validation. */
export function looksLikeJson(parts: readonly Buffer[]): boolean {
  const c = firstNonSpace(parts);
  return c === 0x7b || c === 0x5b;
}
