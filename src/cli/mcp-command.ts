import { diag, DiagLogLevel } from '@opentelemetry/api';
import type { Command } from 'commander';
import { Option } from 'commander';
import { constants } from 'node:os';
import { ConfigError, type LoopwatchConfig } from '../detector/config/index.js';
import { LoopEngine } from '../detector/engine.js';
import type { GuardAction } from '../guard/options.js';
import { McpCallGuard } from '../mcp/call-guard.js';
import { DEFAULT_HTTP_HOST, startHttpProxy } from '../mcp/http.js';
import { DEFAULT_IDLE_GAP_MS } from '../mcp/runs.js';
import { startStdioProxy, type ServerEnd } from '../mcp/stdio.js';
import { McpTelemetry } from '../mcp/telemetry.js';
import { ConfigFileError, loadConfigFile } from '../formats/config-file.js';
import type { CliIo } from './io.js';

interface McpFlags {
  config?: string;
  mode?: 'observe' | 'enforce';
  action: GuardAction;
  idleGap: number;
  upstream?: string;
  port?: number;
  host: string;
  allowOrigin: string[];
}

const EXIT_USAGE = 2;
const SIGNALS_PASSED_ON: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

const MCP_HELP = `
Examples:
  loopwatch mcp -- npx -y @modelcontextprotocol/server-filesystem /path/to/dir
  loopwatch mcp --mode observe -- python my_server.py
  loopwatch mcp --upstream https://example.com/mcp --port 8931

In an MCP client's configuration, run it through npx in place of the server's command:
  "command": "npx", "args": ["-y", "@loopwatch/cli", "mcp", "--", <the server's command and arguments>]

Every tools/call goes through the same guard as in-process agents. A call that continues a loop
is answered by the proxy, without reaching the server: first with a hint (an isError tool result
saying what repeated and what to try), then, if the model makes it again or the loop is
critical, with a refusal that holds for that loop for the rest of the run. A run is the client's
trace when it sends W3C trace context in params._meta, otherwise the session until it has been
idle for --idle-gap. Everything else passes through byte for byte.

Telemetry (standard OpenTelemetry variables): a span per tools/call, with loop.detected events,
when OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) is set; OTEL_EXPORTER_OTLP_PROTOCOL
http/protobuf (default) or http/json; OTEL_METRICS_EXPORTER=otlp adds the loop counters;
OTEL_SERVICE_NAME (default loopwatch-mcp), OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED.

Exit code: the server's (128 + the signal's number when a signal ended it); 2 for bad usage or
configuration, or a server command that cannot be started. stdout carries the protocol only;
loopwatch's lines and the server's stderr go to stderr.`;

function wholeNumber(what: string, min: number, max: number): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) throw new Error(`${what} must be a whole number from ${min} to ${max}, got ${JSON.stringify(v)}`);
    return n;
  };
}

/** `loopwatch mcp`: the flags docs/mcp.md documents, plus the run split and the HTTP listener's address and origins. */
export function addMcpCommand(program: Command, io: CliIo, setExit: (code: number) => void, version: string): void {
  program
    .command('mcp')
    .description('Guard an MCP server: relays MCP unchanged and answers tools/call loops with hints and refusals (stdio: -- COMMAND [ARGS...]; Streamable HTTP: --upstream URL).')
    .argument('[command...]', 'the MCP server to start and guard over stdio, after --')
    .option('--config <file>', 'loopwatch configuration (YAML or JSON), the same as for the processor, scan and serve')
    .addOption(new Option('--mode <mode>', "observe: report loops only; enforce: hint and refuse (default: the configuration's mode, enforce)").choices(['observe', 'enforce']))
    .addOption(new Option('--action <action>', 'the guard on a loop: graduated (a hint, then a refusal), hint (hints, then a refusal), abort (refusals only)').choices(['graduated', 'hint', 'abort']).default('graduated'))
    .option('--idle-gap <ms>', 'a session without tools/call this long starts a new run (when the client sends no trace context)', wholeNumber('--idle-gap', 1, 86_400_000), DEFAULT_IDLE_GAP_MS)
    .option('--upstream <url>', 'proxy this Streamable HTTP MCP endpoint instead of starting a server')
    .option('--port <port>', 'with --upstream: the port to listen on', wholeNumber('--port', 1, 65535))
    .option('--host <host>', 'with --upstream: the address to listen on', DEFAULT_HTTP_HOST)
    .option('--allow-origin <origin...>', 'with --upstream: browser origins allowed besides localhost ones (the MCP specification asks servers to check Origin)', [])
    .addHelpText('after', MCP_HELP)
    .action(async (command: string[], flags: McpFlags) => setExit(await runMcp(command, flags, io, version)));
}

async function runMcp(command: string[], flags: McpFlags, io: CliIo, version: string): Promise<number> {
  const say = (text: string): void => void io.stderr.write(`loopwatch mcp: ${text}\n`);
  if ((command.length > 0) === (flags.upstream !== undefined)) {
    say('give either a server command after -- (stdio) or --upstream URL (Streamable HTTP); see loopwatch mcp --help');
    return EXIT_USAGE;
  }
  if (flags.upstream === undefined && flags.port !== undefined) {
    say('--port goes with --upstream (a stdio server is reached through stdin and stdout)');
    return EXIT_USAGE;
  }
  let config: LoopwatchConfig = {};
  let engine: LoopEngine;
  try {
    if (flags.config) config = await loadConfigFile(flags.config);
    if (flags.mode) config = { ...config, mode: flags.mode };
    engine = new LoopEngine(config);
  } catch (e) {
    if (e instanceof ConfigFileError || e instanceof ConfigError) {
      say(`bad configuration\n${e.message}`);
      return EXIT_USAGE;
    }
    throw e;
  }
  // OpenTelemetry's own warnings (an exporter that cannot reach its endpoint) are ours to show
  diag.setLogger({ error: (m) => say(m), warn: (m) => say(m), info: () => undefined, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.WARN);
  const telemetry = await McpTelemetry.fromEnv(io.env, version, say);
  const guarding = `mode ${engine.config.mode}, action ${flags.action}; a run is the client's trace, else the session until ${flags.idleGap} ms idle; ${telemetry.describe}`;

  if (flags.upstream !== undefined) {
    let upstream: URL;
    try {
      upstream = new URL(flags.upstream);
      if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      say(`--upstream must be an http(s) URL such as https://example.com/mcp, got ${JSON.stringify(flags.upstream)}`);
      return EXIT_USAGE;
    }
    const guard = new McpCallGuard({ engine, action: flags.action, idleGapMs: flags.idleGap, telemetry, transport: 'http', say });
    const proxy = startHttpProxy({ upstream, host: flags.host, port: flags.port ?? 0, allowedOrigins: flags.allowOrigin, guard, say });
    let address;
    try {
      address = await proxy.listening;
    } catch (e) {
      say(`cannot listen on ${flags.host}:${flags.port ?? 0}: ${e instanceof Error ? e.message : String(e)}`);
      await telemetry.shutdown();
      return EXIT_USAGE;
    }
    say(`listening on http://${address.host}:${address.port}${upstream.pathname}, relaying to ${upstream.href} (${guarding})`);
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      for (const s of SIGNALS_PASSED_ON) process.once(s, () => resolve(s));
    });
    say(`${signal}: stopping`);
    await proxy.close();
    await telemetry.shutdown();
    return 0;
  }

  const [program, ...args] = command as [string, ...string[]];
  const proxy = startStdioProxy({ command: program, args, env: process.env, guard: new McpCallGuard({ engine, action: flags.action, idleGapMs: flags.idleGap, telemetry, transport: 'pipe', say }), input: io.stdin, output: io.stdout, say });
  say(`guarding ${[program, ...args].join(' ')} over stdio (${guarding})`);
  const passOn = (s: NodeJS.Signals): void => proxy.kill(s);
  for (const s of SIGNALS_PASSED_ON) process.on(s, passOn);
  let end: ServerEnd;
  try {
    end = await proxy.ended;
  } finally {
    for (const s of SIGNALS_PASSED_ON) process.off(s, passOn);
    // the client may keep our stdin open: the server is gone, so is the proxy
    io.stdin.destroy();
  }
  await telemetry.shutdown();
  if ('startError' in end) {
    say(`cannot start the server: ${end.startError}`);
    return EXIT_USAGE;
  }
  if (end.signal !== null) return 128 + (constants.signals[end.signal] ?? 0);
  return end.code ?? 0;
}
