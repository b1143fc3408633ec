import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { joinParts, LineSplitter } from '../../../src/mcp/framing.js';

/**
 * A stdio transport for the official SDK client that records the exact bytes it writes and reads:
 * the SDK's own serialisation (`serializeMessage`, `deserializeMessage`) over a child process, so
 * the `Client` above it is the official one and the test sees the bytes on the wire.
 */
export class RecordingStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly sent: Buffer[] = [];
  readonly received: Buffer[] = [];
  stderr = '';
  process: ChildProcessByStdio<Writable, Readable, Readable> | undefined;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  /**
   * Lines cut without copying: the SDK's own ReadBuffer joins its whole buffer on every chunk (a
   * 50 MB message in 64 KB chunks would take minutes) and stops at 10 MB by default.
   */
  private readonly lines = new LineSplitter();

  constructor(
    private readonly command: string,
    private readonly args: readonly string[],
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  async start(): Promise<void> {
    const child = spawn(this.command, this.args as string[], { stdio: ['pipe', 'pipe', 'pipe'], env: this.env });
    this.process = child;
    this.exit = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      this.received.push(chunk);
      this.lines.push(chunk, (parts, bytes) => {
        const text = joinParts(parts, bytes).toString('utf8').replace(/\r?\n$/, '');
        let message: JSONRPCMessage;
        try {
          message = deserializeMessage(text);
        } catch (e) {
          this.onerror?.(e as Error);
          return;
        }
        this.onmessage?.(message);
      });
    });
    child.on('close', () => this.onclose?.());
    child.stdin.on('error', () => undefined);
  }

  /** Raw bytes to the proxy, bypassing the SDK (malformed input). */
  writeRaw(bytes: string): void {
    const b = Buffer.from(bytes);
    this.sent.push(b);
    this.process?.stdin.write(b);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const b = Buffer.from(serializeMessage(message));
    this.sent.push(b);
    this.process?.stdin.write(b);
  }

  async close(): Promise<void> {
    this.process?.stdin.end();
    await this.exit;
  }

  sentBytes(): Buffer {
    return Buffer.concat(this.sent);
  }

  receivedBytes(): Buffer {
    return Buffer.concat(this.received);
  }
}
