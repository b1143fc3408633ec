import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import type { ClientVerdict, McpCallGuard, McpSession } from './call-guard.js';
import { asBatch, judgeBatch } from './batch.js';
import { isBlank, joinParts, LineSplitter, looksLikeJson, NEWLINE, NEWLINE_BYTES } from './framing.js';
import type { Relayed } from './deferred-readings.js';
import { MalformedReport } from './malformed.js';
import { idAtEnds } from './message-id.js';
import { clientMessageMatters, parseJson, serverMessageMayRespond } from './messages.js';

export interface StdioProxyOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly guard: McpCallGuard;
  /** The client's side: what it writes (our stdin) and what it reads (our stdout). */
  readonly input: Readable;
  readonly output: Writable;
  readonly say: (line: string) => void;
}

/** How the server process ended. */
export type ServerEnd = { readonly code: number | null; readonly signal: NodeJS.Signals | null } | { readonly startError: string };

export interface StdioProxy {
  /** Sends a signal to the server (the proxy's own signals are passed on). */
  kill(signal: NodeJS.Signals): void;
  /** Resolves when the server has exited and its output is relayed. */
  readonly ended: Promise<ServerEnd>;
  readonly malformed: MalformedReport;
}

/**
 * The stdio proxy: starts the server as a child process and relays newline-delimited JSON-RPC
 * both ways as the bytes that came, except the `tools/call` requests the guard answers itself
 * (those reach the client as a response and never reach the server; in a batch, see batch.ts). The server's output is
 * written through as it arrives, chunk by chunk, and read beside it only while a request the
 * guard awaits is open; an answer of the guard waits for the end of the server message under
 * way, so messages never interleave. A server message is read after its last bytes are written
 * to the client (see `McpCallGuard.readLater`). Either side's backpressure holds the other.
 * The server's stderr is the proxy's; when the client closes our stdin, the server's is closed.
 */
export function startStdioProxy(o: StdioProxyOptions): StdioProxy {
  const session: McpSession = { key: 'stdio', sessionId: randomUUID() };
  const malformed = new MalformedReport(o.say);
  let child: ChildProcessByStdio<Writable, Readable, null>;
  try {
    child = spawn(o.command, o.args as string[], { stdio: ['pipe', 'pipe', 'inherit'], env: o.env });
  } catch (e) {
    return { kill: () => undefined, malformed, ended: Promise.resolve({ startError: e instanceof Error ? e.message : String(e) }) };
  }
  const fromClient = new LineSplitter();
  const fromServer = new LineSplitter();
  /** Answers of the guard waiting for the end of the server's message under way. */
  const answers: string[] = [];
  let clientGone = false;

  const toClient = (text: string): void => {
    if (clientGone) return;
    if (fromServer.partialBytes > 0 || answers.length > 0) answers.push(text);
    else o.output.write(`${text}\n`);
  };
  const flushAnswers = (): void => {
    while (answers.length > 0 && fromServer.partialBytes === 0 && !clientGone) o.output.write(`${answers.shift() as string}\n`);
  };

  /** The guard's verdict; a defect of ours relays the message unguarded rather than lose it. */
  const judged = (msg: unknown): ClientVerdict => {
    try {
      return o.guard.fromClient(session, msg);
    } catch (e) {
      o.say(`internal error while guarding a message (relayed unguarded): ${e instanceof Error ? e.message : String(e)}`);
      return { relay: true };
    }
  };

  const onClientLine = (parts: readonly Buffer[], bytes: number): void => {
    const line = joinParts(parts, bytes);
    // A proxy in observe mode answers no call itself: the message goes to the server first and the
    // guard reads it while the server works (the same messages, in the same order, before the next).
    if (!o.guard.mayAnswer) {
      toServer(line);
      judgeLine(parts, line);
      return;
    }
    const relay = judgeLine(parts, line);
    if (relay !== undefined) toServer(relay);
  };

  /** The guard's reading of a client's message, its answers sent: what of it goes to the server (undefined: none). */
  const judgeLine = (parts: readonly Buffer[], line: Buffer): Buffer | undefined => {
    if (isBlank(parts)) return line;
    if (!looksLikeJson(parts)) {
      malformed.note('client', 'not a JSON object');
      return line;
    }
    if (!clientMessageMatters(line)) return line;
    const msg = parseJson(line);
    if (msg === undefined) {
      malformed.note('client', 'not valid JSON');
      return line;
    }
    if (Array.isArray(msg)) {
      const verdict = judgeBatch(line, msg, judged);
      if (verdict.answers.length > 0) toClient(asBatch(verdict.answers));
      if (verdict.relay === undefined || verdict.relay === line) return verdict.relay;
      return line[line.length - 1] === NEWLINE ? Buffer.concat([verdict.relay, NEWLINE_BYTES]) : verdict.relay;
    }
    const verdict = judged(msg);
    if (verdict.relay) return line;
    if (verdict.answer !== undefined) toClient(verdict.answer);
    return undefined;
  };

  const toServer = (line: Buffer): void => {
    if (!child.stdin.write(line)) {
      o.input.pause();
      child.stdin.once('drain', () => o.input.resume());
    }
  };

  const onServerLine = (parts: readonly Buffer[], bytes: number): void => {
    if (isBlank(parts)) return;
    if (!looksLikeJson(parts)) return malformed.note('server', 'not a JSON object');
    if (!o.guard.waiting) return;
    // a progress or log notification during a call is relayed unread (a needle across two chunks is read)
    if (parts.length === 1 && !serverMessageMayRespond(parts[0] as Buffer)) return;
    // so is a response the guard does not await, when its id can be read off its ends
    const id = idAtEnds(parts);
    if (id !== undefined && !o.guard.awaits(session, id)) return;
    // its chunks are written as they come: read once the last one is written
    completed.push(
      o.guard.readLater(
        session,
        () => {
          const msg = parseParts(parts, bytes);
          if (msg === undefined) malformed.note('server', 'not valid JSON');
          return msg;
        },
        bytes,
      ),
    );
  };
  /** The server messages the chunk being relayed completes: read once it is written. */
  let completed: Relayed[] = [];

  o.input.on('data', (chunk: Buffer) => fromClient.push(chunk, onClientLine));
  o.input.on('end', () => {
    fromClient.end(onClientLine);
    child.stdin.end();
  });
  // the server may exit before reading all we wrote: that is its exit to report, not an error of ours
  child.stdin.on('error', () => undefined);

  child.stdout.on('data', (chunk: Buffer) => {
    const read: Relayed[] = (completed = []);
    // a write's callback comes after this handler returns, with `read` filled by the push below
    if (clientGone) setImmediate(relayed, read);
    else if (!o.output.write(chunk, () => relayed(read))) {
      child.stdout.pause();
      o.output.once('drain', () => child.stdout.resume());
    }
    fromServer.push(chunk, onServerLine);
    flushAnswers();
  });
  o.output.on('error', () => {
    // the client went away (EPIPE): nothing more can reach it; the server is told by its stdin closing
    clientGone = true;
    child.stdout.resume();
    child.stdin.end();
  });

  const ended = new Promise<ServerEnd>((resolve) => {
    child.once('error', (e: NodeJS.ErrnoException) => resolve({ startError: e.code === 'ENOENT' ? `${o.command}: command not found` : e.message }));
    child.once('close', (code, signal) => {
      fromServer.end(onServerLine);
      // what the guard still owes the client goes out after the server's last message
      while (answers.length > 0 && !clientGone) o.output.write(`${answers.shift() as string}\n`);
      o.guard.endSession(session);
      resolve({ code, signal });
    });
  });

  return {
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    ended,
    malformed,
  };
}

function relayed(read: readonly Relayed[]): void {
  for (const r of read) r();
}

/**
 * A message parsed from its parts. Its chunks (ours: see LineSplitter), joined bytes and text are
 * let go as soon as they are read, before the guard reads the message: of a huge result, the
 * proxy then holds the parsed value while the engine reads it, and only garbage besides.
 */
function parseParts(parts: readonly Buffer[], bytes: number): unknown {
  const joined = joinParts(parts, bytes);
  (parts as Buffer[]).length = 0;
  return parseJson(joined);
}
