/**
 * E2E for issue 15: a real Python agent (the OpenTelemetry SDK from PyPI, OpenInference's tracer,
 * gen_ai and Traceloop-shaped spans; a plain-Python mock model) exports OTLP/HTTP to the real
 * collector's load balancer (load-balancer.yaml), which routes by trace id over OTLP/gRPC to two
 * `loopwatch serve` processes (the built CLI); they forward to serve-gateway.yaml (tail sampling,
 * file export, Prometheus exporter), which Debian's Prometheus scrapes. Then one serve instance is
 * killed (SIGKILL) in the middle of a second run and restarted on its spool (issue 28): nothing is
 * lost and no detection is counted twice.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { startLoadBalancer, type LoadBalancer } from './support/collector.js';
import { expectEventuallyEqual } from './support/expect-eventually.js';
import { readFileLogRecords, readFileSpans, type FileSpan } from './support/otlp-json-lines.js';
import { RUN_ROOT } from './support/paths.js';
import { logTail, sleep, waitFor } from './support/process.js';
import { startPrometheus, type PrometheusServer } from './support/prometheus.js';
import { PYTHON_AGENT, pythonForE2e, startServe, startServeGateway, type ServeGateway, type ServeInstance, type ServeStatsView } from './support/serve-tier.js';
import { countsFromVector, DETECTION_LABELS, sorted, TOOL_CALL_LABELS, type Counts } from './support/truth.js';

interface RunTruth {
  readonly scenario: string;
  readonly trace_id: string;
  readonly dialect: string;
  readonly prompt: string;
  readonly tools: string[];
  readonly looping: boolean;
  readonly expected: { kind: string; level: string; tool: string; prompt: string }[];
}

const runDir = join(RUN_ROOT, `serve-python-${process.pid}-${Date.now()}`);
let failed = false;
let python: string;
let gateway: ServeGateway;
let serves: ServeInstance[] = [];
let balancer: LoadBalancer;
let prom: PrometheusServer;

/** Each serve instance's spool: a restart replays what the killed process had not forwarded. */
const spoolOf = (i: number): string => join(runDir, `serve-${i}.spool`);

/** Spans of one run: the agent span, a model call before each tool call and one after the last, the tool calls. */
const spansOf = (run: RunTruth): number => 2 * run.tools.length + 2;
const key = (values: readonly string[]): string => values.join(' | ');

function expectedDetections(runs: readonly RunTruth[]): Counts {
  const c: Counts = {};
  for (const r of runs) for (const d of r.expected) c[key([d.prompt, d.tool, d.kind, d.level])] = (c[key([d.prompt, d.tool, d.kind, d.level])] ?? 0) + 1;
  return sorted(c);
}
function expectedToolCalls(runs: readonly RunTruth[]): Counts {
  const c: Counts = {};
  for (const r of runs) for (const t of r.tools) c[key([r.prompt, t])] = (c[key([r.prompt, t])] ?? 0) + 1;
  return sorted(c);
}
/** Detections as the loop.detected events of forwarded spans say. */
function detectionsInEvents(spans: readonly FileSpan[]): Counts {
  const c: Counts = {};
  for (const s of spans) {
    for (const e of s.events) {
      if (e.name !== 'loop.detected') continue;
      const a = e.attributes;
      const k = key([String(a['gen_ai.prompt.name'] ?? 'unknown'), String(a['gen_ai.tool.name']), String(a['loop.kind']), String(a['loop.level'])]);
      c[k] = (c[k] ?? 0) + 1;
    }
  }
  return sorted(c);
}

async function promCounts(metric: string, labels: readonly string[]): Promise<Counts> {
  return countsFromVector(await prom.query(`sum by (${labels.join(', ')}) (${metric})`), labels);
}

/** Runs the Python agent to the end; the truth file gets one line per run. */
function runAgent(label: string, rounds: number, pauseMs: number): Promise<RunTruth[]> {
  const truth = join(runDir, `truth-${label}.jsonl`);
  return new Promise((resolve, reject) => {
    const child = spawn(python, [PYTHON_AGENT, '--endpoint', balancer.otlpHttpUrl, '--truth', truth, '--label', label, '--rounds', String(rounds), '--pause-ms', String(pauseMs)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`python agent exited ${code}:\n${output}`));
      resolve(
        readFileSync(truth, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as RunTruth),
      );
    });
  });
}

/** Waits until the file exporter's output stops growing (or `expectSpans` arrived), then reads it. */
async function settledSpans(file: string, expectSpans: number | undefined, timeoutMs: number): Promise<FileSpan[]> {
  let last = -1;
  let stableSince = Date.now();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const spans = readFileSpans(file);
    if (expectSpans !== undefined && spans.length >= expectSpans) return spans;
    if (spans.length !== last) {
      last = spans.length;
      stableSince = Date.now();
    } else if (expectSpans === undefined && Date.now() - stableSince > 8_000) return spans;
    if (Date.now() > deadline) return spans;
    await sleep(250);
  }
}

describe('loopwatch serve in the collector tier, with a real Python agent', { timeout: 240_000 }, () => {
  const truth1: RunTruth[] = [];

  beforeAll(async () => {
    python = pythonForE2e();
    // 0 %: only looping (or failing) traces are kept by tail sampling; the test-only "all" file shows everything serve forwarded.
    gateway = await startServeGateway({ name: 'serve-gateway', runDir, samplePercent: 0 });
    serves = await Promise.all(
      [0, 1].map((i) => startServe({ name: `serve-${i}`, runDir, forward: gateway.otlpHttpBase, spoolDir: spoolOf(i), env: { LOOPWATCH_SERVE_QUIET_AFTER_ROOT_MS: '1000' } })),
    );
    balancer = await startLoadBalancer({ name: 'load-balancer', runDir, gateways: serves.map((s) => s.endpoint) });
    prom = await startPrometheus({ name: 'prometheus', runDir, targets: [gateway.metricsTarget] });
    await prom.waitForTargetsUp(1);
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([balancer?.stop(), ...serves.map((s) => s.stop()), gateway?.stop(), prom?.stop()]);
    if (!failed && !process.env.LOOPWATCH_KEEP_RUN) rmSync(runDir, { recursive: true, force: true });
    else console.log(`e2e logs and data kept in ${runDir}`);
  });

  it('counts exactly by prompt template, tool and kind; keeps every looping trace with its events; flags no honest trace', async () => {
    onTestFailed(() => {
      failed = true;
      for (const s of serves) console.log(`${s.process.name} log:\n${logTail(s.process.logFile)}`);
    });
    truth1.push(...(await runAgent('p1', 3, 0)));
    const total = truth1.reduce((n, r) => n + spansOf(r), 0);
    const all = await settledSpans(gateway.allTracesFile, total, 60_000);
    // every span forwarded exactly once
    expect(all.length).toBe(total);
    expect(new Set(all.map((s) => s.spanId)).size).toBe(total);
    // the load balancer spread the traces and each serve saw whole traces
    const stats = (await Promise.all(serves.map((s) => s.stats()))) as ServeStatsView[];
    expect(stats.map((s) => s.receivedSpans).reduce((a, b) => a + b, 0)).toBe(total);
    expect(stats.every((s) => s.completedTraces > 0)).toBe(true);
    expect(stats.reduce((n, s) => n + s.completedTraces, 0)).toBe(truth1.length);

    // tail sampling at 0 %: exactly the looping traces are kept, each with its events
    const looping = new Set(truth1.filter((r) => r.looping).map((r) => r.trace_id));
    await waitFor(async () => (new Set(readFileSpans(gateway.sampledFile).map((s) => s.traceId)).size >= looping.size ? true : undefined), {
      timeoutMs: 30_000,
      what: 'looping traces in the sampled file',
    });
    await sleep(1_500);
    const sampled = readFileSpans(gateway.sampledFile);
    expect(new Set(sampled.map((s) => s.traceId))).toEqual(looping);
    for (const run of truth1.filter((r) => r.looping)) {
      const spans = sampled.filter((s) => s.traceId === run.trace_id);
      expect(spans, `spans of looping trace ${run.scenario} ${run.trace_id}`).toHaveLength(spansOf(run));
      expect(detectionsInEvents(spans), `events of ${run.scenario}`).toEqual(expectedDetections([run]));
    }
    // OpenInference and Traceloop tool spans carry the gen_ai keys and the prompt name after serve
    const toolSpans = sampled.filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool');
    expect(toolSpans.length).toBe(truth1.filter((r) => r.looping).reduce((n, r) => n + r.tools.length, 0));
    for (const s of toolSpans) expect(typeof s.attributes['gen_ai.prompt.name']).toBe('string');
    // no honest trace flagged: no event anywhere outside the looping traces
    expect(all.filter((s) => !looping.has(s.traceId) && s.events.some((e) => e.name === 'loop.detected'))).toEqual([]);

    // Prometheus: exact counters from serve's Metrics API (cumulative; no count connector, no batch)
    await expectEventuallyEqual(() => promCounts('gen_ai_tool_loop_detections_total', DETECTION_LABELS), expectedDetections(truth1), {
      timeoutMs: 30_000,
      settleMs: 3_000,
      what: 'gen_ai_tool_loop_detections_total by prompt, tool, kind, level',
    });
    await expectEventuallyEqual(() => promCounts('gen_ai_tool_calls_total', TOOL_CALL_LABELS), expectedToolCalls(truth1), {
      timeoutMs: 30_000,
      what: 'gen_ai_tool_calls_total by prompt and tool',
    });
    // the detections as OpenTelemetry events (log records), one per detection, on the looping traces only
    const detectionsTotal = truth1.reduce((n, r) => n + r.expected.length, 0);
    await waitFor(async () => (readFileLogRecords(gateway.logsFile).length >= detectionsTotal ? true : undefined), { timeoutMs: 20_000, what: 'log records' });
    const records = readFileLogRecords(gateway.logsFile);
    expect(records).toHaveLength(detectionsTotal);
    expect(records.every((r) => r.eventName === 'loop.detected' && looping.has(r.traceId))).toBe(true);

    console.log(
      `serve e2e phase 1: ${truth1.length} runs, ${total} spans; serve-0 ${stats[0]?.completedTraces} traces / serve-1 ${stats[1]?.completedTraces}; ` +
        `PromQL sum by (prompt, tool, kind, level) (gen_ai_tool_loop_detections_total) = ${JSON.stringify(await promCounts('gen_ai_tool_loop_detections_total', DETECTION_LABELS))}; ` +
        `sum by (prompt, tool) (gen_ai_tool_calls_total) = ${JSON.stringify(await promCounts('gen_ai_tool_calls_total', TOOL_CALL_LABELS))}`,
    );
  });

  it('one serve instance killed mid-run and restarted on its spool: every span arrives (at least once), every detection is counted exactly once', async () => {
    onTestFailed(() => void (failed = true));
    const victim = serves[1] as ServeInstance;
    const before = readFileSpans(gateway.allTracesFile).length;
    const agent = runAgent('p2', 6, 40);
    // kill -9 (no clean shutdown, what a crash or an OOM kill does) while it holds traces
    let held = await victim.stats();
    for (const deadline = Date.now() + 30_000; (held?.heldSpans ?? 0) < 20 && Date.now() < deadline; await sleep(50)) held = await victim.stats();
    process.kill(victim.process.pid, 'SIGKILL');
    expect(held?.heldSpans, 'spans held by the killed instance').toBeGreaterThan(0);
    await waitFor(async () => (victim.process.exitStatus() !== undefined ? true : undefined), { timeoutMs: 5_000, what: 'serve-1 gone' });
    const killedAt = Date.now();
    await sleep(3_000);
    // The balancer redelivers what serve-1 refused while it was down with its exporter's backoff
    // (5 s growing, jittered): a trace replayed from the spool may get its last spans 10 s or more
    // after the restart. The trace wait must outlast that, as docs/serve.md says; the default (30 s)
    // does. With the 5 s the other instances use, such a trace completed without its root and its
    // first calls were counted under prompt `unknown` (2 of 5 CI runs in session 4).
    const restarted = await startServe({ name: 'serve-1-restarted', runDir, forward: gateway.otlpHttpBase, port: victim.port, traceWaitMs: 30_000, spoolDir: spoolOf(1), env: { LOOPWATCH_SERVE_QUIET_AFTER_ROOT_MS: '1000' } });
    serves[1] = restarted;
    const truth2 = await agent;
    const truthSpans = truth2.reduce((n, r) => n + spansOf(r), 0);
    const all = await settledSpans(gateway.allTracesFile, undefined, 120_000);
    const phase2 = all.slice(before);
    const bySpanCount = new Map<string, Set<string>>();
    for (const s of phase2) {
      let ids = bySpanCount.get(s.traceId);
      if (!ids) bySpanCount.set(s.traceId, (ids = new Set()));
      ids.add(s.spanId);
    }
    const whole = truth2.filter((r) => bySpanCount.get(r.trace_id)?.size === spansOf(r));
    const missingOrPartial = truth2.filter((r) => bySpanCount.get(r.trace_id)?.size !== spansOf(r));
    const copies = all.length - new Set(all.map((s) => s.spanId)).size;

    // nothing lost: every trace of the run arrived whole (a span forwarded just before the kill may arrive twice)
    expect(missingOrPartial.map((r) => r.scenario)).toEqual([]);
    // counters: exactly the truth, across the kill (a count the killed process had exported is not made again; one it had not, is)
    const truthAll = expectedDetections([...truth1, ...truth2]);
    await expectEventuallyEqual(() => promCounts('gen_ai_tool_loop_detections_total', DETECTION_LABELS), truthAll, {
      timeoutMs: 30_000,
      settleMs: 3_000,
      what: 'gen_ai_tool_loop_detections_total across the kill',
    });
    await expectEventuallyEqual(() => promCounts('gen_ai_tool_calls_total', TOOL_CALL_LABELS), expectedToolCalls([...truth1, ...truth2]), {
      timeoutMs: 30_000,
      what: 'gen_ai_tool_calls_total across the kill',
    });

    const summary = {
      runs: truth2.length,
      spansSent: truthSpans,
      spansForwarded: phase2.length,
      tracesWhole: whole.length,
      tracesMissingOrPartial: missingOrPartial.length,
      spanCopies: copies,
      victimHeldAtKill: held ? { openTraces: held.openTraces, heldSpans: held.heldSpans, queuedSpans: held.queuedSpans } : undefined,
      detectionsTruth: Object.values(expectedDetections(truth2)).reduce((a, b) => a + b, 0),
      restartedAfterMs: Date.now() - killedAt,
      restartedServeReceivedSpans: (await restarted.stats())?.receivedSpans,
      restartedServeReplayedSpans: (await restarted.stats())?.spoolReplayedSpans,
    };
    expect(summary.restartedServeReplayedSpans, 'spans replayed from the spool').toBeGreaterThan(0);
    console.log(`serve e2e phase 2 (serve-1 killed with SIGKILL while it held spans, restarted on its spool 3 s later): ${JSON.stringify(summary)}`);
    expect(existsSync(gateway.sampledFile)).toBe(true);
  });
});
