// The least any stdio MCP proxy adds (issue 31's floor on this machine): one more process and two
// more pipe hops. Starts the server as a child and copies bytes both ways as they come, with no
// framing, no parse, no reading. Plain Node, as the proxy is, so the difference to the proxy is
// the proxy's own work.
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.on('data', (chunk) => child.stdin.write(chunk));
process.stdin.on('end', () => child.stdin.end());
child.stdout.on('data', (chunk) => process.stdout.write(chunk));
child.on('close', (code) => process.exit(code ?? 1));
