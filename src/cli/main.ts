import { Command, CommanderError, Option } from 'commander';
import { writeFile } from 'node:fs/promises';
import { defaultAdapters } from '../conventions/index.js';
import { PriceTable } from '../cost/prices.js';
import { LoopSpendTotals } from '../cost/totals.js';
import { ConfigError, type LoopwatchConfig } from '../detector/config/index.js';
import { LoopEngine } from '../detector/engine.js';
import { ConfigFileError, loadConfigFile } from '../formats/config-file.js';
import { displayName, expandInputs, InputError } from '../formats/input.js';
import { detectionJsonLine, formatCostSummary, formatProgress, formatSummary, formatTrace, inputNotes } from './output.js';
import { NO_TEMPLATE, renderReport, ReportCollector } from '../report/index.js';
import { scanInputs, type ScanStats } from './scan.js';
import { addMcpCommand } from './mcp-command.js';
import { addServeCommand } from './serve-command.js';
import { OutputSink } from './sink.js';
import { printableLines } from './terminal-text.js';
import pkg from '../../packages/cli/package.json' with { type: 'json' };
import type { CliIo } from './io.js';

export type { CliIo } from './io.js';


export const EXIT_CLEAN = 0;
export const EXIT_LOOPS = 1;
export const EXIT_USAGE = 2;

const EXIT_CODES_HELP = `
Exit codes:
  0  no loop found (at the --fail-on level) in all of the input
  1  loops found
  2  bad input or usage: a file that cannot be read or is not a trace file, empty input, a bad
     option or configuration; the message names the file and line. Readable files are still
     scanned, but 2 wins over 1.
When the output is closed early (loopwatch scan ... | head), reading stops and the exit code
covers what was read until then.

Inputs: OTLP/JSON as the collector's file exporter writes it (JSON Lines) or one document per
file; Grafana Tempo's trace API answers ({"batches":[...]}, {"trace":{...}}); Jaeger's JSON
({"data":[...]}); OTLP protobuf (the file exporter's format: proto, or one message per file).`;

/** Inputs at least this large (or stdin past it) get progress lines on stderr. */
const PROGRESS_MIN_BYTES = 32 * 1024 * 1024;
const PROGRESS_EVERY_MS = 2_000;

interface ScanFlags {
  json?: boolean;
  config?: string;
  report?: string;
  failOn: 'warning' | 'critical';
}

/** Runs the CLI and resolves to the exit code (never calls process.exit: output must flush). */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode = EXIT_CLEAN;
  const out = new OutputSink(io.stdout);
  const err = new OutputSink(io.stderr);
  const program = new Command('loopwatch')
    .description('Find LLM-agent tool-call loops in OpenTelemetry traces.')
    .version(pkg.version)
    .exitOverride()
    .configureOutput({ writeOut: (s) => out.write(s), writeErr: (s) => err.write(s) })
    .showHelpAfterError('(run loopwatch scan --help for usage)')
    .addHelpText('after', '\nExit codes: loopwatch scan --help lists them (0 no loop, 1 loops found, 2 bad input or usage).');

  program
    .command('scan')
    .description('Scan exported traces (files, folders or - for stdin) for tool-call loops.')
    .argument('<paths...>', 'trace files or folders of them (OTLP/JSON, JSON Lines, Tempo, Jaeger, OTLP protobuf); - reads stdin')
    .option('--json', 'one JSON object per detection per line, with the LoopDetection fields')
    .option('--config <file>', 'loopwatch configuration (YAML or JSON): thresholds, tools, roles')
    .option('--report <file>', 'also write a self-contained HTML report (charts, worst traces; no arguments or results)')
    .addOption(new Option('--fail-on <level>', 'lowest level that makes the exit code 1').choices(['warning', 'critical']).default('warning'))
    .addHelpText('after', EXIT_CODES_HELP)
    .action(async (paths: string[], flags: ScanFlags) => {
      exitCode = await runScan(paths, flags, io, out, err);
    });

  addServeCommand(program, io, (code) => void (exitCode = code), pkg.version);
  addMcpCommand(program, io, (code) => void (exitCode = code), pkg.version);

  try {
    await program.parseAsync(argv as string[], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      // help and version exit 0; every usage error is 2 (the contract), not commander's 1
      return e.exitCode === 0 ? EXIT_CLEAN : EXIT_USAGE;
    }
    say(err, `loopwatch: ${(e as Error).message}`);
    return EXIT_USAGE;
  }
  return exitCode;
}

/** Human text: control characters from trace files and file names escaped, line breaks kept. */
function say(sink: OutputSink, text: string): void {
  const safe = printableLines(text);
  sink.write(safe.endsWith('\n') ? safe : `${safe}\n`);
}

async function runScan(paths: string[], flags: ScanFlags, io: CliIo, out: OutputSink, err: OutputSink): Promise<number> {
  let config: LoopwatchConfig = {};
  if (flags.config) {
    try {
      config = await loadConfigFile(flags.config);
    } catch (e) {
      if (e instanceof ConfigFileError) {
        say(err, `loopwatch: bad configuration\n${e.message}`);
        return EXIT_USAGE;
      }
      throw e;
    }
  }
  let engine: LoopEngine;
  try {
    engine = new LoopEngine(config);
  } catch (e) {
    if (e instanceof ConfigError) {
      say(err, `loopwatch: bad configuration: ${e.message}`);
      return EXIT_USAGE;
    }
    throw e;
  }
  let files;
  try {
    files = await expandInputs(paths);
  } catch (e) {
    if (e instanceof InputError) {
      say(err, `loopwatch: ${e.message}`);
      return EXIT_USAGE;
    }
    throw e;
  }
  if (files.length === 0) {
    say(err, `loopwatch: no trace files (.json, .jsonl, .ndjson, .otlp, .pb, .binpb) under ${paths.join(', ')}`);
    return EXIT_USAGE;
  }

  const minBytes = Number(io.env.LOOPWATCH_PROGRESS_MIN_BYTES ?? PROGRESS_MIN_BYTES);
  const known = files.every((f) => f.size !== undefined) ? files.reduce((s, f) => s + (f.size ?? 0), 0) : undefined;
  let lastProgress = 0;
  let progressShown = false;
  const failed: { readonly name: string; readonly message: string }[] = [];
  let failing = 0;

  const report = flags.report !== undefined ? new ReportCollector() : undefined;
  const costs = new LoopSpendTotals();
  const prices = PriceTable.of(config.prices, (model) => say(err, `loopwatch: warning: no price for model ${model} in the configuration's prices; loops on it are reported in tokens only`));
  const stats: ScanStats = await scanInputs(files, {
    engine,
    adapters: defaultAdapters,
    stdin: () => io.stdin,
    ...(io.stdinFd !== undefined ? { stdinFd: io.stdinFd } : {}),
    prices,
    onTrace: (trace) => {
      report?.add(trace);
      if (trace.loopSpend !== undefined) costs.add(trace.loopPrompt ?? NO_TEMPLATE, trace.loopSpend);
      for (const d of trace.detections) if (flags.failOn === 'warning' || d.level === 'critical') failing++;
      if (trace.detections.length === 0) return;
      if (flags.json) for (const d of trace.detections) out.write(`${detectionJsonLine(d)}\n`);
      else say(out, `${formatTrace(trace)}\n`);
    },
    onError: (e) => {
      failed.push({ name: displayName(e.source), message: e.detail + (e.line !== undefined ? ` (line ${e.line}${e.column !== undefined ? `, column ${e.column}` : ''})` : '') });
      say(err, `loopwatch: ${e.message}`);
    },
    onProblem: (m) => say(err, `loopwatch: warning: ${m}`),
    onProgress: (s) => {
      const now = Date.now();
      if ((known ?? s.bytes) < minBytes || now - lastProgress < PROGRESS_EVERY_MS) return;
      lastProgress = now;
      progressShown = true;
      err.write(io.interactive ? `\r${formatProgress(s, known)}` : `${formatProgress(s, known)}\n`);
    },
    // the output decides the pace: a slow reader holds the scan, a closed one stops it
    ready: () => out.ready(),
    stopped: () => out.closed,
  });
  if (progressShown && io.interactive) err.write('\n');
  for (const note of inputNotes(stats)) say(err, `loopwatch: warning: ${note}`);
  const summary = [formatSummary(stats), formatCostSummary(costs, prices !== undefined)].filter((s) => s.length > 0).join('\n');
  say(flags.json ? err : out, summary);
  if (report && flags.report) {
    const html = renderReport(report.result(), { version: pkg.version, inputs: paths.map(displayName), files: stats.files, spans: stats.spans, failed });
    try {
      await writeFile(flags.report, html);
    } catch (e) {
      say(err, `loopwatch: cannot write the report to ${flags.report} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
      return EXIT_USAGE;
    }
    say(err, `loopwatch: report written to ${flags.report}`);
  }
  if (failed.length > 0) {
    say(err, `loopwatch: ${failed.length} input error${failed.length === 1 ? '' : 's'}; results above cover the readable input only`);
    return EXIT_USAGE;
  }
  return failing > 0 ? EXIT_LOOPS : EXIT_CLEAN;
}
