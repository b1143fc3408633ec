/**
 * The paste-ready client configurations of docs/mcp.md work as written: each `json mcp-config`
 * block's command starts a working proxy (the repository's CLI and filesystem server in place of
 * `npx -y @loopwatch/cli` and `npx -y @modelcontextprotocol/server-filesystem`, a temporary
 * folder for /path/to/dir), through which the official TypeScript SDK client (its own stdio
 * transport) holds a session; the `python mcp-config` block runs with the Python `mcp` SDK; the
 * OpenAI Agents SDK block's `MCPServerStdio` (its name and params) is driven by the real SDK from
 * PyPI, without a model: tools listed and called as its agent loop calls them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pythonForE2e } from '../e2e/support/serve-tier.js';
import { CLI, expectFilesystemLoop, FILESYSTEM_SERVER, REPO, resultText, tempDir } from './support/proxy.js';

const DOC = readFileSync(join(REPO, 'docs', 'mcp.md'), 'utf8');
const AGENTS_CLIENT = join(REPO, 'test', 'mcp', 'python', 'agents_client.py');
const PROXY_ARGS = ['-y', '@loopwatch/cli', 'mcp', '--', 'npx', '-y', '@modelcontextprotocol/server-filesystem', '/path/to/dir'];

/** Fenced blocks whose info string is `lang mcp-config`, with the heading they are under. */
function blocks(lang: string): { heading: string; text: string }[] {
  const out: { heading: string; text: string }[] = [];
  let heading = '';
  const re = /^## (.*)$|^```(\w+)( mcp-config)?\n([\s\S]*?)^```$/gm;
  for (let m = re.exec(DOC); m; m = re.exec(DOC)) {
    if (m[1] !== undefined) heading = m[1];
    else if (m[2] === lang && m[3]) out.push({ heading, text: m[4] ?? '' });
  }
  return out;
}

/** The command as the repository runs it: node and the built CLI for `npx -y @loopwatch/cli`, the installed filesystem server for its npx form. */
function local(command: string, args: readonly string[], dir: string): { command: string; args: string[] } {
  expect(command).toBe('npx');
  expect(args.slice(0, 4)).toEqual(['-y', '@loopwatch/cli', 'mcp', '--']);
  const rest = args.slice(4).map((a) => (a === '/path/to/dir' ? dir : a));
  const server = rest[0] === 'npx' && rest[1] === '-y' && rest[2] === '@modelcontextprotocol/server-filesystem' ? [process.execPath, FILESYSTEM_SERVER, ...rest.slice(3)] : rest;
  return { command: process.execPath, args: [CLI, 'mcp', '--', ...server] };
}

describe('docs/mcp.md configurations', { timeout: 120_000 }, () => {
  const json = blocks('json');

  it('has one checked block per client: Claude Desktop, Claude Code, Cursor, VS Code', () => {
    expect(json.map((b) => b.heading)).toEqual(['Claude Desktop', 'Claude Code', 'Cursor', 'VS Code']);
  });

  for (const block of json) {
    it(`${block.heading}: the configured command proxies a working MCP session`, async () => {
      const config = JSON.parse(block.text) as { mcpServers?: Record<string, { command: string; args: string[] }>; servers?: Record<string, { command: string; args: string[] }> };
      const entries = Object.values(config.mcpServers ?? config.servers ?? {});
      expect(entries).toHaveLength(1);
      const entry = entries[0] as { command: string; args: string[] };
      expect(entry.args).toEqual(PROXY_ARGS);
      const dir = tempDir('config');
      const run = local(entry.command, entry.args, dir);
      const transport = new StdioClientTransport({ ...run, stderr: 'pipe', env: { ...(process.env as Record<string, string>), OTEL_SDK_DISABLED: 'true' } });
      const client = new Client({ name: block.heading, version: '1.0.0' });
      await client.connect(transport);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('list_allowed_directories');
      expect(resultText(await client.callTool({ name: 'list_allowed_directories', arguments: {} }))).toContain(dir);
      await client.close();
    });
  }

  it('Python mcp SDK: the block runs as written and prints the tools and the allowed directory', () => {
    const [block] = blocks('python');
    expect(block?.heading).toBe('Python: the `mcp` SDK (Python ≥ 3.10)');
    const dir = tempDir('config-py');
    const listed = `args=${JSON.stringify(PROXY_ARGS).replace(/","/g, '", "')}`;
    expect(block?.text).toContain('command="npx"');
    expect(block?.text).toContain(listed);
    const run = local('npx', PROXY_ARGS, dir);
    const code = (block?.text ?? '').replace('command="npx"', `command=${JSON.stringify(run.command)}`).replace(listed, `args=${JSON.stringify(run.args)}`);
    const file = join(dir, 'client.py');
    writeFileSync(file, code);
    const out = execFileSync(pythonForE2e(), [file], { encoding: 'utf8', env: { ...process.env, OTEL_SDK_DISABLED: 'true' }, timeout: 90_000 });
    expect(out).toContain("'read_text_file'");
    expect(out).toContain(dir);
  });

  it("OpenAI Agents SDK: the block's MCPServerStdio, configured as written, lists and calls the tools through the proxy; a loop reads the hint, then the refusal", () => {
    const section = DOC.slice(DOC.indexOf('## Python: the OpenAI Agents SDK'));
    const name = /MCPServerStdio\(\s*name="([^"]+)"/.exec(section)?.[1];
    const command = /"command": "([^"]+)"/.exec(section)?.[1];
    const args = JSON.parse(/"args": (\[[^\]]*\])/.exec(section)?.[1] ?? 'null') as string[] | null;
    expect(name).toBe('filesystem');
    expect(command).toBe('npx');
    expect(args).toEqual(PROXY_ARGS);
    const dir = tempDir('config-agents');
    const params = local(command ?? '', args ?? [], dir);
    const missing = JSON.stringify({ path: join(dir, 'todo.md') });
    const out = execFileSync(pythonForE2e(), [AGENTS_CLIENT, name ?? '', JSON.stringify(params), 'read_text_file', missing, 'list_allowed_directories', '{}'], {
      encoding: 'utf8',
      env: { ...process.env, OTEL_SDK_DISABLED: 'true' },
      timeout: 90_000,
    });
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { tools?: string[]; call?: number; isError?: boolean; text?: string });
    const calls = lines.filter((l) => l.call !== undefined);
    console.log(`OpenAI Agents SDK (MCPServerStdio, MCPUtil.invoke_mcp_tool), what the model reads:\n${calls.map((c) => `  call ${c.call}: ${JSON.stringify(c.text)}`).join('\n')}`);
    expect(lines[0]?.tools).toContain('read_text_file');
    expectFilesystemLoop(calls.map((c) => c.text), dir);
    expect(calls[6]).toMatchObject({ isError: true, text: calls[3]?.text });
  });
});
