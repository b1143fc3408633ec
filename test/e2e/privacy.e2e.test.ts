/**
 * Privacy through the real collector: agent runs whose tool arguments, results and error
 * messages hold a secret loop, loopwatch reports them, the gateway turns the events and tool
 * spans into metrics, and the collector's `/metrics` text (what Prometheus scrapes) never holds
 * the secret. Reuses the e2e harness as it is.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { createAgentApp, type AgentApp } from './support/agent-app.js';
import { emitRun, type RunSpec } from './support/agent-traffic.js';
import { startGateway, type Gateway } from './support/collector.js';
import { RUN_ROOT } from './support/paths.js';
import { httpGet, waitFor } from './support/process.js';

const SECRET = 'sk-live-9d2f41c7e05b4a8e93c6d1f0a7b5e2c4';
const runDir = join(RUN_ROOT, `privacy-${process.pid}-${Date.now()}`);
let failed = false;
let gateway: Gateway;
let app: AgentApp;

const runs: RunSpec[] = [
  {
    agent: 'vault-bot',
    template: 'vault-v1',
    steps: Array.from({ length: 6 }, () => ({ tool: 'read_secret', args: { name: 'db', token: SECRET }, result: { value: SECRET } })),
  },
  {
    agent: 'vault-bot',
    template: 'vault-v1',
    steps: Array.from({ length: 5 }, () => ({ tool: 'login', args: { password: SECRET }, error: { type: 'AuthError', message: `rejected ${SECRET}` } })),
  },
];

describe('the collector metrics of looping runs full of secrets', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    gateway = await startGateway({ name: 'privacy', runDir, samplePercent: 0 });
    app = createAgentApp({ serviceName: 'agent-private', otlpTracesUrl: gateway.otlpHttpUrl });
  }, 90_000);

  afterAll(async () => {
    await app?.shutdown();
    await gateway?.stop();
    if (!failed && !process.env.LOOPWATCH_KEEP_RUN) rmSync(runDir, { recursive: true, force: true });
    else console.log(`e2e logs and data kept in ${runDir}`);
  });

  it('count the loops and the calls, and never hold the secret', async () => {
    onTestFailed(() => void (failed = true));
    for (const spec of runs) emitRun(app.tracer, spec);
    await app.flush();
    expect(app.exporter.failures).toEqual([]);
    expect(new Set(app.detections.map((d) => d.kind))).toEqual(new Set(['repeat', 'error_pattern']));
    const url = `http://${gateway.metricsTarget}/metrics`;
    const text = await waitFor(
      async () => {
        const r = await httpGet(url);
        const body = r?.body ?? '';
        const loops = body.split('\n').filter((l) => l.startsWith('gen_ai_tool_loop_detections_total{'));
        return loops.length >= 2 && body.includes('gen_ai_tool_calls_total{') ? body : undefined;
      },
      { timeoutMs: 60_000, what: 'loop and tool-call counters on the collector /metrics' },
    );
    // the metrics are there, labelled by tool and prompt template...
    expect(text).toMatch(/gen_ai_tool_loop_detections_total\{[^}]*gen_ai_tool_name="read_secret"/);
    expect(text).toMatch(/gen_ai_tool_loop_detections_total\{[^}]*gen_ai_tool_name="login"/);
    expect(text).toMatch(/gen_ai_tool_calls_total\{[^}]*gen_ai_prompt_name="vault-v1"/);
    // ...and nothing of the secret, whole or in part
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(SECRET.slice(8, 24));
  });
});
