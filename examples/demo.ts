/**
 * `npm run demo`: loopwatch on the real OpenTelemetry SDK, no network.
 * A support agent loops on an order lookup; loopwatch warns at the 3rd identical call and stops
 * the run at the 5th through abortSignal(). A second, honest run stays quiet.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { context } from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LoopDetectionSpanProcessor, ToolLoopError, type LoopDetection } from '../src/index.js';
import { helpfulModel, runAgent, stubbornModel, type Turn } from './support-agent.js';

const MAX_STEPS = 20;
const bold = (s: string): string => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const say = (s = ''): void => console.log(s);

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter();
const detections: LoopDetection[] = [];
const pending: string[] = [];
// 1. Register loopwatch next to the exporting processor: one line in an existing setup.
const loops = new LoopDetectionSpanProcessor({
  onLoop: (d) => {
    detections.push(d);
    const mark = d.level === 'critical' ? '✖ CRITICAL, abortSignal() aborted' : '⚠ warning';
    pending.push(`           ${mark}: ${d.message}`);
  },
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
    say(`    Without loopwatch it would have made ${MAX_STEPS} calls, each one a paid model step.`);
  } else {
    say(`  → The run was not stopped (${looping.steps} steps).`);
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
  say(`Next: scan the exported spans after the fact (the CLI runs from source in a checkout; \`npx loopwatch\` once installed):`);
  say(`  npm run loopwatch -- scan ${shown}`);
  say(`  npm run loopwatch -- scan --report ${join(relative(process.cwd(), dir), 'report.html')} ${shown}`);
  await provider.shutdown();

  // The demo doubles as a smoke test in CI: it fails if loopwatch did not behave as described.
  const warned = detections.find((d) => d.level === 'warning');
  const critical = detections.find((d) => d.level === 'critical');
  const ok = warned?.callIndex === 3 && critical?.callIndex === 5 && stop instanceof ToolLoopError && looping.steps === 5 && detections.length === 2 && honest.answer !== undefined;
  if (!ok) console.error('demo: loopwatch did not warn at call 3 and stop at call 5 as expected');
  return ok ? 0 : 1;
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
