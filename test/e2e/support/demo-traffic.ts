/**
 * Demo agent traffic for `npm run stack`: rounds of looping and honest agent runs through
 * loopwatch's processor to a collector, a round every few seconds, for a bounded time.
 *   tsx test/e2e/support/demo-traffic.ts <otlp-traces-url> [rounds=90] [interval-ms=10000]
 */
import { createAgentApp } from './agent-app.js';
import { emitRun, trafficRound } from './agent-traffic.js';
import { sleep } from './process.js';

const [url, roundsArg, intervalArg] = process.argv.slice(2);
if (!url) {
  console.error('usage: demo-traffic.ts <otlp-traces-url> [rounds] [interval-ms]');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 90);
const intervalMs = Number(intervalArg ?? 10_000);
const app = createAgentApp({ serviceName: 'loopwatch-demo-agent', otlpTracesUrl: url });
let stopping = false;
process.on('SIGTERM', () => void (stopping = true));
process.on('SIGINT', () => void (stopping = true));

for (let round = 0; round < rounds && !stopping; round++) {
  const before = app.detections.length;
  const runs = trafficRound(round).map((spec) => emitRun(app.tracer, spec));
  await app.flush();
  const tools = runs.reduce((n, r) => n + r.toolCalls.length, 0);
  console.log(`${new Date().toISOString()} round ${round + 1}/${rounds}: ${runs.length} agent runs, ${tools} tool calls, ${app.detections.length - before} loop detections`);
  for (let waited = 0; waited < intervalMs && !stopping; waited += 250) await sleep(250);
}
await app.shutdown();
if (app.exporter.failures.length > 0) console.error(`export failures: ${app.exporter.failures.join('; ')}`);
