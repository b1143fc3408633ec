/**
 * `npm run demo`: loopwatch on the real OpenTelemetry SDK, no network.
 * A support agent loops on an order lookup; loopwatch warns at the 3rd identical call and stops
 * the run at the 5th through abortSignal(), and says what the loop cost and what the stop saved
 * (from the model calls' token usage, priced with an example price table). A second, honest run
 * stays quiet.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { context } from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LoopDetectionSpanProcessor, ToolLoopError, type LoopDetection, type Spend, type TraceLoopSummary } from '../src/index.js';
import { formatSpend, formatTokens, formatUsd } from '../src/cost/format.js';
import { helpfulModel, runAgent, stubbornModel, type Turn } from './support-agent.js';

const MAX_STEPS = 20;
/**
 * Example prices, USD per million tokens, for the demo's model: loopwatch ships no price list
 * (prices change); put your provider's current prices in your configuration's `prices`.
 */
const DEMO_PRICES = { 'gpt-4o*': { input: 2.5, output: 10, cachedInput: 1.25 } };
const bold = (s: string): string => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const say = (s = ''): void => console.log(s);

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter();
const detections: LoopDetection[] = [];
const summaries: TraceLoopSummary[] = [];
const pending: string[] = [];
// 1. Register loopwatch next to the exporting processor: one line in an existing setup.
const loops = new LoopDetectionSpanProcessor({
  prices: DEMO_PRICES,
  onLoop: (d) => {
    detections.push(d);
    const mark = d.level === 'critical' ? '✖ CRITICAL, abortSignal() aborted' : '⚠ warning';
    pending.push(`           ${mark}: ${d.message}`);
    if (d.tokens) pending.push(`             the model calls asking for these repetitions: ${formatTokens(d.tokens)}${d.costUsd !== undefined ? `, ${formatUsd(d.costUsd)}` : ''}`);
  },
  onTraceEnd: (s) => void summaries.push(s),
});
const provider = new BasicTracerProvider({ spanProcessors: [loops, new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('support-agent');

function show(step: number, turn: Turn): void {
  const result = JSON.stringify(turn.result);
  say(`  step ${String(step).padStart(2)}  ${turn.call.tool}(${JSON.stringify(turn.call.args)}) → ${result.length > 90 ? `${result.slice(0, 87)}...` : result}`);
  for (const line of pending.splice(0)) say(line);
}

async function main(): Promise<number> {
  say(bold('loopwatch demo: a support agent on the real OpenTelemetry SDK (no network)'));
  say();
  say(bold(`Run 1: the customer asks about order A-1234, which does not exist (step limit ${MAX_STEPS})`));
  say('  The model keeps searching the same way. Each answer carries a fresh request id and timestamp,');
  say('  so the raw results never repeat byte for byte; loopwatch strips such volatile values first.');
  const looping = await runAgent({
    tracer,
    model: stubbornModel,
    promptName: 'support-v2',
    maxSteps: MAX_STEPS,
    signalFor: () => loops.abortSignal(), // 2. tie the run to its trace: aborted on a critical loop
    onStep: show,
  });
  const stop = looping.stoppedBy;
  if (stop instanceof ToolLoopError) {
    say(`  → The run stopped after ${looping.steps} tool calls: ${stop.name} (tool ${stop.toolName}, ${stop.count} calls, kind ${stop.kind}).`);
  } else {
    say(`  → The run was not stopped (${looping.steps} steps).`);
  }
  const bill = summaries.find((s) => s.traceId === looping.traceId);
  // What the stop saved: the same run again, loopwatch only watching (observe mode), to its step limit.
  const unstopped = await runUnstopped();
  const saved = bill?.loop && unstopped?.loop ? difference(unstopped.loop, bill.loop) : undefined;
  say();
  say(bold('What the loop cost (onTraceEnd, from the model calls\' token usage; example prices)'));
  if (bill?.loop) {
    say(`  The loop, from the end of its first call to the stop: ${formatSpend(bill.loop)}.`);
    if (bill.afterDetection) say(`  Of that, after the first warning: ${formatSpend(bill.afterDetection)}.`);
  }
  if (unstopped?.loop && saved) {
    say(`  Without the stop the run goes on to its step limit (${MAX_STEPS} tool calls); measured with loopwatch only watching,`);
    say(`  its loop costs ${formatSpend(unstopped.loop)}.`);
    say(`  → The stop saved ${formatSpend(saved)}: ${Math.round((100 * (saved.costUsd ?? 0)) / (unstopped.loop.costUsd ?? 1))}% of what this loop would have cost.`);
  }
  say();

  say(bold('Run 2: the customer asks about order B-2002, which exists'));
  const honestStart = detections.length;
  const honest = await runAgent({ tracer, model: helpfulModel, promptName: 'support-v2', maxSteps: MAX_STEPS, signalFor: () => loops.abortSignal(), onStep: show });
  say(`  → Answer: "${honest.answer}" after ${honest.steps} tool calls; loopwatch stayed quiet (${detections.length - honestStart} detections).`);
  say();

  await provider.forceFlush();
  say(bold('What your tracing backend receives (span events added by loopwatch):'));
  for (const span of exporter.getFinishedSpans()) {
    for (const event of span.events.filter((e) => e.name === 'loop.detected')) {
      const a = event.attributes ?? {};
      say(`  ${span.name}  loop.detected  level=${String(a['loop.level'])} kind=${String(a['loop.kind'])} count=${String(a['loop.count'])} call_index=${String(a['loop.call_index'])} fingerprint=${String(a['loop.fingerprint'])} prompt=${String(a['gen_ai.prompt.name'])}`);
      say(`      loop.tokens.input=${String(a['loop.tokens.input'])} loop.tokens.output=${String(a['loop.tokens.output'])} loop.cost.usd=${String(a['loop.cost.usd'])}`);
    }
    for (const event of span.events.filter((e) => e.name === 'loop.summary')) {
      const a = event.attributes ?? {};
      say(`  ${span.name}  loop.summary  detections=${String(a['loop.detections'])} stopped=${String(a['loop.stopped'])} model_calls=${String(a['loop.model_calls'])} tokens.input=${String(a['loop.tokens.input'])} tokens.output=${String(a['loop.tokens.output'])} cost.usd=${String(a['loop.cost.usd'])}`);
    }
  }
  const toolSpans = exporter.getFinishedSpans().filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool');
  say(`  Every tool span also carries gen_ai.prompt.name (${toolSpans.filter((s) => s.attributes['gen_ai.prompt.name'] === 'support-v2').length}/${toolSpans.length}), so a collector can count loops per prompt template.`);
  say();
  // The same spans as an exporter sends them (OTLP/JSON), for `loopwatch scan` to read back.
  const dir = join(import.meta.dirname, '..', '.tmp', 'demo');
  mkdirSync(dir, { recursive: true });
  const tracesFile = join(dir, 'traces.jsonl');
  writeFileSync(tracesFile, `${new TextDecoder().decode(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans()))}\n`);
  const shown = relative(process.cwd(), tracesFile);
  say(`Next: scan the exported spans after the fact (the CLI runs from source in a checkout; \`npx -y @loopwatch/cli\` once published):`);
  say(`  npm run loopwatch -- scan ${shown}`);
  say(`  npm run loopwatch -- scan --report ${join(relative(process.cwd(), dir), 'report.html')} ${shown}`);
  await provider.shutdown();

  // The demo doubles as a smoke test in CI: it fails if loopwatch did not behave as described.
  const warned = detections.find((d) => d.level === 'warning');
  const critical = detections.find((d) => d.level === 'critical');
  const ok = warned?.callIndex === 3 && critical?.callIndex === 5 && stop instanceof ToolLoopError && looping.steps === 5 && detections.length === 2 && honest.answer !== undefined;
  if (!ok) console.error('demo: loopwatch did not warn at call 3 and stop at call 5 as expected');
  // ...and priced them: the stop's repetitions, the loop's bill, and a saving from the stop
  const costed = critical?.tokens !== undefined && critical.costUsd !== undefined && (bill?.loop?.costUsd ?? 0) > 0 && (saved?.costUsd ?? 0) > 0 && summaries.length === 1;
  if (!costed) console.error('demo: loopwatch did not say what the loop cost and what the stop saved');
  return ok && costed ? 0 : 1;
}

/** The looping run again on its own provider, loopwatch in observe mode (never stops it): its bill. */
async function runUnstopped(): Promise<TraceLoopSummary | undefined> {
  let summary: TraceLoopSummary | undefined;
  const watcher = new LoopDetectionSpanProcessor({ mode: 'observe', prices: DEMO_PRICES, onTraceEnd: (s) => void (summary = s) });
  const twin = new BasicTracerProvider({ spanProcessors: [watcher] });
  await runAgent({ tracer: twin.getTracer('support-agent'), model: stubbornModel, promptName: 'support-v2', maxSteps: MAX_STEPS, signalFor: () => watcher.abortSignal() });
  await twin.shutdown();
  return summary;
}

function difference(a: Spend, b: Spend): Spend {
  const tokens = { input: a.tokens.input - b.tokens.input, output: a.tokens.output - b.tokens.output };
  const costUsd = a.costUsd !== undefined && b.costUsd !== undefined ? a.costUsd - b.costUsd : undefined;
  return { tokens, modelCalls: a.modelCalls - b.modelCalls, ...(costUsd !== undefined ? { costUsd } : {}) };
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  },
);
