// Runs an MCP server over stdio and records the exact bytes it receives and sends, so a test can
// compare them with what the client sent and received through `loopwatch mcp`. Usage:
//   node tee.mjs <dir> -- <command> [args...]   (writes <dir>/to-server.bin and <dir>/from-server.bin)
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
const [command, ...args] = process.argv.slice(process.argv.indexOf('--') + 1);
const toServer = createWriteStream(join(dir, 'to-server.bin'));
const fromServer = createWriteStream(join(dir, 'from-server.bin'));
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.on('data', (c) => {
  toServer.write(c);
  child.stdin.write(c);
});
process.stdin.on('end', () => child.stdin.end());
child.stdout.on('data', (c) => {
  fromServer.write(c);
  process.stdout.write(c);
});
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => child.kill(s));
child.on('close', (code) => {
  toServer.end();
  fromServer.end(() => process.exit(code ?? 1));
});
