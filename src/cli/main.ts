import { Command, CommanderError, Option } from 'commander';
import { writeFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { defaultAdapters } from '../conventions/index.js';
import { PriceTable } from '../cost/prices.js';
import { LoopCostTotals } from '../cost/totals.js';
import { ConfigError, type LoopwatchConfig } from '../detector/config.js';
import { LoopEngine } from '../detector/engine.js';
import { ConfigFileError, loadConfigFile } from './config-file.js';
import { expandInputs, InputError } from './input.js';
import { detectionJsonLine, formatCostSummary, formatProgress, formatSummary, formatTrace } from './output.js';
import { NO_TEMPLATE, renderReport, ReportCollector } from './report/index.js';
import { scanInputs, type ScanStats } from './scan.js';
import { addServeCommand } from './serve-command.js';
import pkg from '../../package.json' with { type: 'json' };

export interface CliIo {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stdin: Readable;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** stderr is a terminal: progress redraws one line. */
  readonly interactive: boolean;
}

export const EXIT_CLEAN = 0;
export const EXIT_LOOPS = 1;
export const EXIT_USAGE = 2;

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
  const write = (stream: Writable, text: string): void => {
    stream.write(text.endsWith('\n') ? text : `${text}\n`);
  };
  const program = new Command('loopwatch')
    .description('Find LLM-agent tool-call loops in OpenTelemetry traces.')
    .version(pkg.version)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .showHelpAfterError('(run loopwatch scan --help for usage)');

  program
    .command('scan')
    .description('Scan exported OTLP/JSON traces (files, folders or - for stdin) for tool-call loops.')
    .argument('<paths...>', 'files or folders of OTLP/JSON (one object per file, or JSON Lines); - reads stdin')
    .option('--json', 'one JSON object per detection per line, with the LoopDetection fields')
    .option('--config <file>', 'loopwatch configuration (YAML or JSON): thresholds, tools, roles')
    .option('--report <file>', 'also write a self-contained HTML report (charts, worst traces; no arguments or results)')
    .addOption(new Option('--fail-on <level>', 'lowest level that makes the exit code 1').choices(['warning', 'critical']).default('warning'))
    .action(async (paths: string[], flags: ScanFlags) => {
      exitCode = await runScan(paths, flags, io, write);
    });

  addServeCommand(program, io, (code) => void (exitCode = code), pkg.version);

  try {
    await program.parseAsync(argv as string[], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      // help and version exit 0; every usage error is 2 (the contract), not commander's 1
      return e.exitCode === 0 ? EXIT_CLEAN : EXIT_USAGE;
    }
    write(io.stderr, `loopwatch: ${(e as Error).message}`);
    return EXIT_USAGE;
  }
  return exitCode;
}

async function runScan(paths: string[], flags: ScanFlags, io: CliIo, write: (s: Writable, t: string) => void): Promise<number> {
  let config: LoopwatchConfig = {};
  if (flags.config) {
    try {
      config = await loadConfigFile(flags.config);
    } catch (e) {
      if (e instanceof ConfigFileError) {
        write(io.stderr, `loopwatch: bad configuration\n${e.message}`);
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
      write(io.stderr, `loopwatch: bad configuration: ${e.message}`);
      return EXIT_USAGE;
    }
    throw e;
  }
  let files;
  try {
    files = await expandInputs(paths);
  } catch (e) {
    if (e instanceof InputError) {
      write(io.stderr, `loopwatch: ${e.message}`);
      return EXIT_USAGE;
    }
    throw e;
  }
  if (files.length === 0) {
    write(io.stderr, `loopwatch: no OTLP/JSON files (.json, .jsonl, .ndjson) under ${paths.join(', ')}`);
    return EXIT_USAGE;
  }

  const minBytes = Number(io.env.LOOPWATCH_PROGRESS_MIN_BYTES ?? PROGRESS_MIN_BYTES);
  const known = files.every((f) => f.size !== undefined) ? files.reduce((s, f) => s + (f.size ?? 0), 0) : undefined;
  let lastProgress = 0;
  let progressShown = false;
  const errors: InputError[] = [];
  let failing = 0;

  const report = flags.report !== undefined ? new ReportCollector() : undefined;
  const costs = new LoopCostTotals();
  const prices = PriceTable.of(config.prices, (model) => write(io.stderr, `loopwatch: warning: no price for model ${model} in the configuration's prices; loops on it are reported in tokens only`));
  const stats: ScanStats = await scanInputs(files, {
    engine,
    adapters: defaultAdapters,
    stdin: io.stdin,
    prices,
    onTrace: (trace) => {
      report?.add(trace);
      if (trace.loopBill !== undefined) costs.add(trace.loopPrompt ?? NO_TEMPLATE, trace.loopBill);
      for (const d of trace.detections) if (flags.failOn === 'warning' || d.level === 'critical') failing++;
      if (trace.detections.length === 0) return;
      if (flags.json) for (const d of trace.detections) write(io.stdout, detectionJsonLine(d));
      else write(io.stdout, `${formatTrace(trace)}\n`);
    },
    onError: (e) => {
      errors.push(e);
      write(io.stderr, `loopwatch: ${e.message}`);
    },
    onProblem: (m) => write(io.stderr, `loopwatch: warning: ${m}`),
    onProgress: (s) => {
      const now = Date.now();
      if ((known ?? s.bytes) < minBytes || now - lastProgress < PROGRESS_EVERY_MS) return;
      lastProgress = now;
      progressShown = true;
      io.stderr.write(io.interactive ? `\r${formatProgress(s, known)}` : `${formatProgress(s, known)}\n`);
    },
  });
  if (progressShown && io.interactive) io.stderr.write('\n');
  const summary = [formatSummary(stats), formatCostSummary(costs, prices !== undefined)].filter((s) => s.length > 0).join('\n');
  if (flags.json) write(io.stderr, summary);
  else write(io.stdout, summary);
  if (report && flags.report) {
    const html = renderReport(report.result(), { version: pkg.version, inputs: paths, files: stats.files, spans: stats.spans });
    try {
      await writeFile(flags.report, html);
    } catch (e) {
      write(io.stderr, `loopwatch: cannot write the report to ${flags.report}: ${(e as Error).message}`);
      return EXIT_USAGE;
    }
    write(io.stderr, `loopwatch: report written to ${flags.report}`);
  }
  if (errors.length > 0) {
    write(io.stderr, `loopwatch: ${errors.length} input error${errors.length === 1 ? '' : 's'}; results above cover the readable input only`);
    return EXIT_USAGE;
  }
  return failing > 0 ? EXIT_LOOPS : EXIT_CLEAN;
}
