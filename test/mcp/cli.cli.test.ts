/** `loopwatch mcp`'s usage errors: a message naming what is wrong, exit code 2, stdout untouched (it is the protocol's). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../cli/support/cli.js';
import { tempDir } from './support/proxy.js';

describe('loopwatch mcp usage', () => {
  it.each([
    [['mcp'], 'give either a server command after -- (stdio) or --upstream URL'],
    [['mcp', '--upstream', 'http://127.0.0.1:1/mcp', '--', 'node'], 'give either a server command after --'],
    [['mcp', '--port', '8000', '--', 'node'], '--port goes with --upstream'],
    [['mcp', '--upstream', 'ftp://example.com/mcp'], '--upstream must be an http(s) URL'],
    [['mcp', '--', 'no-such-server-command-31'], 'cannot start the server: no-such-server-command-31: command not found'],
  ])('%j: exit 2 with a message', async (args, message) => {
    const run = await cli(args, { env: { OTEL_SDK_DISABLED: 'true' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stdout).toBe('');
  });

  it('a bad configuration file is named with its line and key', async () => {
    const file = join(tempDir('cli'), 'loopwatch.yaml');
    writeFileSync(file, 'mode: enforce\nthresholds:\n  repeat: nonsense\n');
    const run = await cli(['mcp', '--config', file, '--', 'node'], { env: {} });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`${file}:3: thresholds\\.repeat`));
  });

  it('an unknown --mode or --action is a usage error', async () => {
    expect((await cli(['mcp', '--mode', 'loud', '--', 'node'])).code).toBe(2);
    expect((await cli(['mcp', '--action', 'warn', '--', 'node'])).code).toBe(2);
  });
});
