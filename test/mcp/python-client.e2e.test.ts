/**
 * E2E: the official Python MCP SDK (`mcp` from PyPI, in the venv of the serve e2e) as the client
 * of `loopwatch mcp` over stdio, to the filesystem server from npm and to the SDK-built order
 * server. What the Python client reads at the hint and at the refusal is what its model reads.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { pythonForE2e } from '../e2e/support/serve-tier.js';
import { CLI, expectFilesystemLoop, FILESYSTEM_SERVER, ORDER_SERVER, REPO, tempDir } from './support/proxy.js';

const CLIENT = join(REPO, 'test', 'mcp', 'python', 'loop_client.py');
let python: string;

interface Line {
  readonly call?: number;
  readonly tool?: string;
  readonly isError?: boolean;
  readonly text?: string;
  readonly tools?: string[];
}

async function session(tool: string, args: object, other: string, otherArgs: object, server: readonly string[]): Promise<{ lines: Line[]; stderr: string }> {
  const { stdout, stderr } = await promisify(execFile)(python, [CLIENT, tool, JSON.stringify(args), other, JSON.stringify(otherArgs), '--', process.execPath, CLI, 'mcp', '--', process.execPath, ...server], {
    env: { ...process.env, OTEL_SDK_DISABLED: 'true' },
    timeout: 90_000,
  });
  return { lines: stdout.trim().split('\n').map((l) => JSON.parse(l) as Line), stderr };
}

describe('loopwatch mcp with the official Python MCP SDK client', { timeout: 120_000 }, () => {
  beforeAll(() => {
    python = pythonForE2e();
  });

  it('filesystem server: the same failing read gets the real error twice, the hint, then refusals; other tools still work', async () => {
    const files = tempDir('py-files');
    const { lines, stderr } = await session('read_text_file', { path: join(files, 'todo.md') }, 'list_allowed_directories', {}, [FILESYSTEM_SERVER, files]);
    const calls = lines.filter((l) => l.call !== undefined);
    console.log(`Python client, looping session (filesystem server, read_text_file of a missing file):\n${calls.map((c) => `  call ${c.call} ${c.tool}: isError=${c.isError} ${JSON.stringify(c.text)}`).join('\n')}`);
    expect(lines[0]?.tools).toContain('read_text_file');
    expect(calls.map((c) => c.isError)).toEqual([true, true, true, true, true, false]);
    expectFilesystemLoop(calls.map((c) => c.text), files);
    expect(stderr).toContain("blocked: error_pattern critical on 'read_text_file'");
  });

  it('SDK-built server answering the same failure: the same decisions, whatever the client language', async () => {
    const { lines } = await session('lookup_order', { order_id: 'A-1042' }, 'echo', { text: 'still here' }, ORDER_SERVER);
    const texts = lines.filter((l) => l.call !== undefined).map((l) => l.text ?? '');
    expect(texts[0]).toContain('locked by another process');
    expect(texts[2]).toContain("[loopwatch] This call was not run: 'lookup_order' already failed twice");
    expect(texts[3]).toContain('[loopwatch] This call was refused and not run');
    expect(texts[5]).toBe('still here');
  });
});
