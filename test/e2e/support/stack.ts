/**
 * `npm run stack` / `npm run stack:stop`: the gateway collector and Prometheus on loopback with
 * demo agent traffic, left running in the background. Pid files live in the run dir, so
 * `stop` works from another shell.
 *   tsx test/e2e/support/stack.ts start|stop|status
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startCollector } from './collector.js';
import { GATEWAY_CONFIG, GATEWAY_FILE_EXPORT_OVERLAY, REPO_ROOT, RULES_FILE, RUN_ROOT } from './paths.js';
import { freePorts } from './ports.js';
import { sleep, startProcess, waitFor } from './process.js';
import { startPrometheus } from './prometheus.js';

const runDir = process.env.LOOPWATCH_STACK_DIR ?? join(RUN_ROOT, 'stack');
const pidDir = join(runDir, 'pids');
/** What each pid file's process must be running: a recycled pid is never killed. */
const PARTS = { traffic: 'demo-traffic', prometheus: 'prometheus', gateway: 'otelcol-loopwatch' } as const;
type Part = keyof typeof PARTS;

function alive(pid: number, part: Part): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(PARTS[part]);
  } catch {
    return false;
  }
}

function pidOf(part: Part): number | undefined {
  const file = join(pidDir, `${part}.pid`);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && alive(pid, part) ? pid : undefined;
}

async function portOrFree(preferred: number): Promise<number> {
  const free = await new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(preferred, '127.0.0.1', () => s.close(() => resolve(true)));
  });
  if (free) return preferred;
  const [port] = await freePorts(1);
  if (port === undefined) throw new Error('no free port');
  console.log(`  port ${preferred} is busy, using ${port}`);
  return port;
}

async function stop(): Promise<void> {
  let stopped = 0;
  for (const part of Object.keys(PARTS) as Part[]) {
    const pid = pidOf(part);
    rmSync(join(pidDir, `${part}.pid`), { force: true });
    if (pid === undefined) continue;
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 40 && alive(pid, part); i++) await sleep(250);
    if (alive(pid, part)) process.kill(pid, 'SIGKILL');
    console.log(`stopped ${part} (pid ${pid})`);
    stopped++;
  }
  if (stopped === 0) console.log('loopwatch stack: nothing running');
}

async function start(): Promise<void> {
  const running = (Object.keys(PARTS) as Part[]).filter((p) => pidOf(p) !== undefined);
  if (running.length > 0) {
    console.log(`loopwatch stack already running (${running.join(', ')}); \`npm run stack:stop\` first.`);
    if (existsSync(join(runDir, 'stack.txt'))) console.log(readFileSync(join(runDir, 'stack.txt'), 'utf8'));
    return;
  }
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(pidDir, { recursive: true });
  const ports = {
    grpc: await portOrFree(4317),
    http: await portOrFree(4318),
    metrics: await portOrFree(8889),
    health: await portOrFree(13133),
    telemetry: await portOrFree(8888),
    prometheus: await portOrFree(9090),
  };
  const sampledFile = join(runDir, 'sampled-traces.jsonl');
  const gateway = await startCollector({
    name: 'gateway',
    configs: [GATEWAY_CONFIG, GATEWAY_FILE_EXPORT_OVERLAY],
    env: {
      LOOPWATCH_OTLP_GRPC_ENDPOINT: `127.0.0.1:${ports.grpc}`,
      LOOPWATCH_OTLP_HTTP_ENDPOINT: `127.0.0.1:${ports.http}`,
      LOOPWATCH_PROMETHEUS_ENDPOINT: `127.0.0.1:${ports.metrics}`,
      LOOPWATCH_SAMPLED_TRACES_FILE: sampledFile,
    },
    healthPort: ports.health,
    telemetryPort: ports.telemetry,
    runDir,
    detached: true,
  });
  writeFileSync(join(pidDir, 'gateway.pid'), String(gateway.process.pid));
  const prom = await startPrometheus({
    name: 'prometheus',
    runDir,
    targets: [`127.0.0.1:${ports.metrics}`],
    ruleFiles: [RULES_FILE],
    port: ports.prometheus,
    scrapeInterval: '5s',
    detached: true,
  });
  writeFileSync(join(pidDir, 'prometheus.pid'), String(prom.process.pid));
  const otlpUrl = `http://127.0.0.1:${ports.http}/v1/traces`;
  const traffic = startProcess({
    name: 'demo-traffic',
    command: process.execPath,
    args: [join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(REPO_ROOT, 'test', 'e2e', 'support', 'demo-traffic.ts'), otlpUrl, '90', '10000'],
    logFile: join(runDir, 'demo-traffic.log'),
    detached: true,
  });
  writeFileSync(join(pidDir, 'traffic.pid'), String(traffic.pid));

  const example = 'sum by (gen_ai_prompt_name, loop_kind, loop_level) (gen_ai_tool_loop_detections_total)';
  const first = await waitFor(async () => {
    const r = await prom.query(example);
    return r.length > 0 ? r : undefined;
  }, { timeoutMs: 60_000, what: 'the first demo round in Prometheus', processes: [gateway.process, prom.process, traffic] });

  const info = `
loopwatch stack on loopback (logs, data and pid files: ${runDir})
  OTLP in           gRPC 127.0.0.1:${ports.grpc}   HTTP ${otlpUrl}
  loop metrics      http://127.0.0.1:${ports.metrics}/metrics
  Prometheus        ${prom.url}   (alerts: ${prom.url}/classic/alerts, rules: ${prom.url}/classic/rules)
  collector health  ${gateway.healthUrl}   self-metrics ${gateway.telemetryUrl}
  sampled traces    ${sampledFile}   (read it with: npx tsx src/cli/bin.ts scan ${sampledFile})
  demo traffic      a round of 10 agent runs every 10 s for 15 minutes (log: ${join(runDir, 'demo-traffic.log')})

Example PromQL (paste into ${prom.url}/classic/graph):
  ${example}
  sum by (gen_ai_prompt_name, gen_ai_tool_name) (gen_ai_tool_calls_total)
  job_exported_job_gen_ai_prompt_name:gen_ai_tool_loop_detections_per_tool_call:ratio_rate5m
  sum by (gen_ai_prompt_name, gen_ai_token_type) (gen_ai_tool_loop_tokens_total)
  sum by (gen_ai_prompt_name) (gen_ai_tool_loop_cost_usd_total)
  ALERTS{alertstate="firing"}

Stop everything: npm run stack:stop
`;
  writeFileSync(join(runDir, 'stack.txt'), info);
  console.log(info);
  console.log(`Right now, ${example}:`);
  for (const s of first) console.log(`  ${JSON.stringify(s.metric)} ${s.value}`);
}

async function status(): Promise<void> {
  for (const part of Object.keys(PARTS) as Part[]) console.log(`${part}: ${pidOf(part) ?? 'not running'}`);
}

const command = process.argv[2];
const actions: Record<string, () => Promise<void>> = { start, stop, status };
const action = command ? actions[command] : undefined;
if (!action) {
  console.error('usage: stack.ts start|stop|status');
  process.exit(2);
}
action().catch(async (e: unknown) => {
  console.error(`loopwatch stack: ${e instanceof Error ? e.message : String(e)}`);
  if (command === 'start') await stop();
  process.exit(1);
});
