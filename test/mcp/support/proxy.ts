import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { expect } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RecordingStdioTransport } from './recording-transport.js';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/** The built CLI (`npm test` builds first), as users run it. */
export const CLI = join(REPO, 'packages', 'cli', 'dist', 'cli.js');
export const TEE = join(REPO, 'test', 'mcp', 'support', 'tee.mjs');
/** The official filesystem server from npm, run from node_modules (no network at test time). */
export const FILESYSTEM_SERVER = join(REPO, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
/** A minimal server that takes JSON-RPC batches (the SDKs' stdio transports no longer do). */
export const BATCH_SERVER = join(REPO, 'test', 'mcp', 'support', 'batch-server.mjs');
export const ORDER_SERVER = ['--import', 'tsx', join(REPO, 'test', 'mcp', 'support', 'order-server.ts')];

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `loopwatch-mcp-${label}-`));
}

/** An official SDK client connected through `loopwatch mcp [flags] -- node [server...]`, recording the bytes. */
export async function connectThroughProxy(
  flags: readonly string[],
  server: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ client: Client; transport: RecordingStdioTransport }> {
  const transport = new RecordingStdioTransport(process.execPath, [CLI, 'mcp', ...flags, '--', process.execPath, ...server], env);
  const client = new Client({ name: 'loopwatch-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** What the tee recorded on the server's side of the proxy. */
export function teeBytes(dir: string): { toServer: Buffer; fromServer: Buffer } {
  return { toServer: readFileSync(join(dir, 'to-server.bin')), fromServer: readFileSync(join(dir, 'from-server.bin')) };
}

/** The text a tool result gives the model. */
export function resultText(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? `[${c.type}]`).join('\n');
}

/** Occurrences of `needle` in `bytes`. */
export function count(bytes: Buffer, needle: string): number {
  let n = 0;
  for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + 1)) n++;
  return n;
}

/**
 * What the model reads in a looping session with the filesystem server (five reads of the same
 * missing file, then the allowed directories): the real error twice, the hint, the refusal twice, the other tool's answer.
 */
export function expectFilesystemLoop(texts: readonly (string | undefined)[], dir: string): void {
  expect(texts[0]).toContain('ENOENT');
  expect(texts[1]).toContain('ENOENT');
  expect(texts[2]).toMatch(/^\[loopwatch\] This call was not run: 'read_text_file' already failed twice with these exact arguments and the same error\./);
  expect(texts[3]).toMatch(/^\[loopwatch\] This call was refused and not run:/);
  expect(texts[4]).toBe(texts[3]);
  expect(texts[5]).toContain(dir);
}
