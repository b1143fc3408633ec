/** Which peer sent a message. */
export type Side = 'client' | 'server';

/**
 * Malformed JSON-RPC is relayed unchanged (the proxy is not the protocol's judge) and reported
 * once per side, so that a peer that only speaks broken JSON does not flood the log.
 */
export class MalformedReport {
  private readonly seen = new Set<Side>();
  /** Malformed messages seen, per side (for tests and the closing line). */
  readonly counts: Record<Side, number> = { client: 0, server: 0 };

  constructor(private readonly say: (line: string) => void) {}

  note(side: Side, what: string): void {
    this.counts[side]++;
    if (this.seen.has(side)) return;
    this.seen.add(side);
    this.say(`malformed JSON-RPC from the ${side} (${what}), relayed unchanged; further ones from the ${side} are not reported`);
  }
}
