/**
 * Reads the events of a `text/event-stream` as it passes (the bytes themselves are relayed by the
 * caller): each event's `data` lines joined, handed on when the event ends. Only the event under
 * way is held; other fields (`id`, `event`, `retry`) and comments are skipped.
 */
export class SseReader {
  private carry = '';
  private data: string[] = [];
  private readonly decoder = new TextDecoder();

  constructor(private readonly onData: (data: string) => void) {}

  push(chunk: Buffer): void {
    const text = this.carry + this.decoder.decode(chunk, { stream: true });
    let start = 0;
    for (;;) {
      const nl = nextLineEnd(text, start);
      if (nl === -1) break;
      this.line(text.slice(start, nl));
      start = text[nl] === '\r' && text[nl + 1] === '\n' ? nl + 2 : nl + 1;
    }
    this.carry = text.slice(start);
  }

  end(): void {
    if (this.carry !== '') this.line(this.carry);
    this.carry = '';
    this.line('');
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) this.onData(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith('data:')) this.data.push(line.slice(line[5] === ' ' ? 6 : 5));
  }
}

/** Index of the next `\n` or `\r` at or after `from` (a `\r` at the very end waits: a `\n` may follow). */
function nextLineEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) return i;
    if (c === 0x0d) return i + 1 < text.length ? i : -1;
  }
  return -1;
}
