/**
 * Re-creates the originals of the real-run corpus from fetched repository snapshots:
 * `npm run corpus:extract [-- source-id...]`. Reads every file named in `sources.ts` from the
 * bare git directories under `LOOPWATCH_MIRRORS` (default /work/.mirror), converts each run into
 * a `CorpusRun` and writes them, gzip'd JSON Lines, under `.tmp/real-originals/` (gitignored).
 * The commit and blob ids read go to `test/fixtures/real/sources.json` (committed).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { findBlobs, findHeadBlobs, headCommit, mirrorDir, readBlob, type BlobRef } from './mirror.js';
import { bfclRun, type BfclEntry } from './formats/bfcl.js';
import { tauBenchRun, type TauBenchResult } from './formats/tau-bench.js';
import { miniCliRun, type TerminalBenchResults } from './formats/mini-swe-agent-cli.js';
import { openHandsRun, type OpenHandsCompletionLog } from './formats/openhands.js';
import { sweAgentRun } from './formats/swe-agent.js';
import { liveMcpRuns, type LiveMcpTask } from './formats/livemcp.js';
import { asTau2File, tau2Runs, type Tau2File } from './formats/tau2.js';
import { toolathlonLogRun, toolathlonRun, type ToolathlonFile, type ToolathlonLog } from './formats/toolathlon.js';
import { exists, MANIFEST, originalRunsFile, writeLines } from './files.js';
import type { CorpusRun } from './run.js';
import { drawSample } from './sample.js';
import { SOURCES, type SourceFormat, type SourceSpec } from './sources.js';

export interface ManifestEntry {
  readonly id: string;
  readonly title: string;
  readonly repo: string;
  readonly commit: string;
  readonly licence: string;
  readonly origin: string;
  readonly runs: number;
  readonly files: ReadonlyArray<{ readonly path: string; readonly blob: string }>;
}

/** A τ² file name without its timestamp and agent/user suffix: the domain it ran. */
function tau2Prefix(spec: SourceSpec, path: string): string {
  if (spec.id === 'tau2-activegraph') return `${basename(dirname(dirname(path)))}/`;
  if (spec.id === 'tau2-leaderboard') return `${tau2Submission(path)}/${basename(path).replace(/\.json$/, '').replace(/^\d{4}-\d{2}-\d{2}T[\d:.]+_/, '')}/`;
  const stem = basename(path).replace(/(\.json)+$/, '');
  const domain = /(airline|retail|telecom)/.exec(stem)?.[1];
  if (spec.id !== 'tau2-gemma-domains' && domain) return `${domain}/`;
  return `${stem
    .replace(/^\d{4}-\d{2}-\d{2}[T_][\d:._-]+?_/, '')
    .replace(/_llm_agent.*$/, '')
    .replace(/[^\w-]+/g, '_')}/`;
}

/** The leaderboard submission a file belongs to (its folder's name up to the first `_`), or `sierra` for the harness's own results. */
function tau2Submission(path: string): string {
  const folder = /submissions\/([^/]+)\/trajectories\//.exec(path)?.[1];
  return folder ? (folder.split('_')[0] ?? folder) : 'sierra';
}

interface Read {
  readonly runs: CorpusRun[];
  /** Files read; `run` set when the file belongs to one run only (listed only if that run is kept). */
  readonly used: Array<{ path: string; blob: string; run?: string }>;
}

const DAY_MS = 86_400_000;

function readSweAgent(spec: SourceSpec, dir: string, blobs: readonly BlobRef[]): Read {
  const out: Read = { runs: [], used: [] };
  for (const { path, blob } of blobs) {
    const id = basename(path).replace(/\.traj$/, '');
    const base = Date.parse(spec.base ?? '2025-01-01T00:00:00Z') + out.runs.length * DAY_MS;
    out.runs.push(sweAgentRun(readBlob(dir, blob), { id, source: spec.id, agent: spec.agent, model: spec.model ?? 'unknown', base }));
    out.used.push({ path, blob, run: id });
  }
  return out;
}

function readTau2(spec: SourceSpec, dir: string, blobs: readonly BlobRef[]): Read {
  const out: Read = { runs: [], used: [] };
  const seenSimulations = new Set<string>();
  for (const { path, blob } of blobs) {
    let file: Tau2File | undefined;
    try {
      file = asTau2File(JSON.parse(readBlob(dir, blob)));
    } catch {
      continue;
    }
    if (!file) continue;
    // the same simulation is often committed twice (renamed copies): keep its first file
    const fresh = (file.simulations ?? []).filter((s) => {
      const key = typeof s.id === 'string' ? s.id : JSON.stringify([s.task_id, s.trial, s.start_time]);
      if (seenSimulations.has(key)) return false;
      seenSimulations.add(key);
      return Array.isArray(s.messages) && s.messages.length > 0;
    });
    if (fresh.length === 0) continue;
    const agent = spec.agentFromFile ? undefined : spec.agent;
    out.runs.push(...tau2Runs({ ...file, simulations: fresh }, { source: spec.id, prefix: tau2Prefix(spec, path), ...(agent ? { agent } : {}) }));
    out.used.push({ path, blob });
  }
  return out;
}

function readToolathlon(spec: SourceSpec, dir: string, blobs: readonly BlobRef[]): Read {
  const out: Read = { runs: [], used: [] };
  for (const { path, blob } of blobs) {
    const base = Date.parse(spec.base ?? '2025-01-01T00:00:00Z') + out.runs.length * DAY_MS;
    const run = toolathlonRun(JSON.parse(readBlob(dir, blob)) as ToolathlonFile, { name: basename(path), source: spec.id, agent: spec.agent, base });
    out.runs.push(run);
    out.used.push({ path, blob, run: run.id });
  }
  return out;
}

/**
 * Toolathlon harness logs (`recorded_trajectories_v2/run1/<model>/<task group>/<task>/log.json`):
 * every recorded version of a log is a run of its own (a task re-run and its log recommitted).
 * A log whose agent never answered (no assistant message) is not an agent run and is left out.
 */
function readToolathlonLog(spec: SourceSpec, dir: string, blobs: readonly BlobRef[]): Read {
  const out: Read = { runs: [], used: [] };
  for (const { path, blob } of blobs) {
    const [, , model = 'unknown', group = '?', task = '?'] = path.split('/');
    const log = JSON.parse(readBlob(dir, blob)) as ToolathlonLog;
    if (!Array.isArray(log.messages) || !log.messages.some((m) => (m as { role?: unknown }).role === 'assistant')) continue;
    const base = Date.parse(spec.base ?? '2025-01-01T00:00:00Z') + out.runs.length * DAY_MS;
    const id = `${model}/${group}/${task}`;
    out.runs.push(toolathlonLogRun(log, { id, model, source: spec.id, agent: spec.agent, base }));
    out.used.push({ path, blob });
  }
  return out;
}

function readLiveMcp(spec: SourceSpec, dir: string, blobs: readonly BlobRef[]): Read {
  const out: Read = { runs: [], used: [] };
  const base = Date.parse(spec.base ?? '2025-01-01T00:00:00Z');
  for (const { path, blob } of blobs) {
    out.runs.push(...liveMcpRuns(JSON.parse(readBlob(dir, blob)) as LiveMcpTask[], { source: spec.id, agent: spec.agent, model: spec.model ?? 'unknown', base }));
    out.used.push({ path, blob });
  }
  return out;
}

/** BFCL keeps results under `result(s)/<org>_<model>/…`: the model is named by that folder. */
function bfclModel(path: string): string {
  const folder = /(?:^|\/)results?\/([^/]+)\//.exec(path)?.[1] ?? 'unknown';
  return folder.replace('_', '/');
}

function readBfcl(spec: SourceSpec, dir: string, blobs: readonly BlobRef[]): Read {
  const out: Read = { runs: [], used: [] };
  for (const { path, blob } of blobs) {
    const model = bfclModel(path);
    for (const line of readBlob(dir, blob).split('\n')) {
      if (line.trim() === '') continue;
      const entry = JSON.parse(line) as BfclEntry;
      const id = `${model.split('/').pop() ?? model}/${String(entry.id)}`;
      const base = Date.parse(spec.base ?? '2025-01-01T00:00:00Z') + out.runs.length * DAY_MS;
      out.runs.push(bfclRun(entry, { id, source: spec.id, agent: spec.agent, model, base }));
    }
    out.used.push({ path, blob });
  }
  return out;
}

/**
 * Terminal-Bench trials of the `mini` command line: a trial folder holds the terminal recording
 * (`sessions/agent.cast`) and `results.json`. Trials where the agent never ran (its install
 * failed: no step in the recording) are not agent runs and are left out.
 */
function readTerminalBenchMini(spec: SourceSpec, dir: string, blobs: readonly BlobRef[]): Read {
  const out: Read = { runs: [], used: [] };
  const results = new Map(blobs.filter((b) => b.path.endsWith('/results.json')).map((b) => [dirname(b.path), b]));
  for (const cast of blobs.filter((b) => b.path.endsWith('/sessions/agent.cast'))) {
    const trial = dirname(dirname(cast.path));
    const result = results.get(trial);
    if (!result) continue;
    const info = JSON.parse(readBlob(dir, result.blob)) as TerminalBenchResults;
    // results/<benchmark>/<submission>/<run folder>/<task>/<trial>/
    const runFolder = trial.split('/').at(-3) ?? '?';
    const id = `${String(info.task_id)}/${runFolder}`;
    const run = miniCliRun(readBlob(dir, cast.blob), info, { id, source: spec.id, agent: spec.agent, model: spec.model ?? 'unknown' });
    if (!run.turns.some((t) => t.calls.length > 0)) continue;
    out.runs.push(run);
    out.used.push({ path: cast.path, blob: cast.blob, run: id }, { path: result.path, blob: result.blob, run: id });
  }
  return out;
}

/**
 * OpenHands SWE-bench evaluations: `trajs/<instance>/<model>-<time>.json`, the completion log of
 * the run's last model call (one per instance).
 */
function readOpenHands(spec: SourceSpec, dir: string, blobs: readonly BlobRef[]): Read {
  const out: Read = { runs: [], used: [] };
  for (const { path, blob } of blobs) {
    const id = basename(dirname(path));
    const base = Date.parse(spec.base ?? '2025-01-01T00:00:00Z') + out.runs.length * DAY_MS;
    out.runs.push(openHandsRun(JSON.parse(readBlob(dir, blob)) as OpenHandsCompletionLog, { id, source: spec.id, agent: spec.agent, model: spec.model ?? 'unknown', base }));
    out.used.push({ path, blob, run: id });
  }
  return out;
}

/**
 * τ-bench result files (`<agent strategy>-<model>-<temperature>_range_<from>-<to>_user-….json`,
 * an array of runs): each run is named by its file's stem, task and trial, and its agent is the
 * file's agent strategy (an experiment's files compare strategies). A run whose agent raised
 * before anything was recorded (`info.error`, an empty `traj`) holds no conversation: left out.
 */
function readTauBench(spec: SourceSpec, dir: string, blobs: readonly BlobRef[]): Read {
  const out: Read = { runs: [], used: [] };
  for (const { path, blob } of blobs) {
    const stem = basename(path).replace(/\.json$/, '');
    const agent = spec.agentFromFile ? (/^(.+?)-(?:none|gpt|claude|o\d)/.exec(stem)?.[1] ?? spec.agent) : spec.agent;
    const entries = JSON.parse(readBlob(dir, blob)) as TauBenchResult[];
    for (const entry of entries) {
      if (!Array.isArray(entry.traj) || entry.traj.length === 0) continue;
      const id = `${stem}/${String(entry.task_id)}/${String(entry.trial ?? 0)}`;
      const base = Date.parse(spec.base ?? '2025-01-01T00:00:00Z') + out.runs.length * DAY_MS;
      out.runs.push(tauBenchRun(entry, { id, source: spec.id, agent, model: spec.model ?? 'unknown', base }));
    }
    out.used.push({ path, blob });
  }
  return out;
}

const READERS: Record<SourceFormat, (spec: SourceSpec, dir: string, blobs: readonly BlobRef[]) => Read> = {
  'swe-agent': readSweAgent,
  tau2: readTau2,
  bfcl: readBfcl,
  'terminal-bench-mini': readTerminalBenchMini,
  toolathlon: readToolathlon,
  'toolathlon-log': readToolathlonLog,
  livemcp: readLiveMcp,
  openhands: readOpenHands,
  'tau-bench': readTauBench,
};

export function extractSource(spec: SourceSpec): { runs: CorpusRun[]; entry: ManifestEntry } | undefined {
  const dir = mirrorDir(spec.repo);
  if (!dir) return undefined;
  const { runs, used } = READERS[spec.format](spec, dir, spec.newestOnly ? findHeadBlobs(dir, spec.paths) : findBlobs(dir, spec.paths));
  // a second results file of the same domain and task (a re-run) gets a suffix: ids stay unique
  const ids = new Set<string>();
  const unique = runs.map((r) => {
    let id = r.id;
    for (let n = 2; ids.has(id); n++) id = `${r.id}~${n}`;
    ids.add(id);
    return id === r.id ? r : { ...r, id };
  });
  runs.splice(0, runs.length, ...drawSample(spec, unique));
  const kept = new Set(runs.map((r) => r.id));
  const files = used.filter((u) => u.run === undefined || kept.has(u.run)).map(({ path, blob }) => ({ path, blob }));
  return {
    runs,
    entry: { id: spec.id, title: spec.title, repo: spec.repo, commit: headCommit(dir), licence: spec.licence, origin: spec.origin, runs: runs.length, files },
  };
}

function main(): void {
  const wanted = process.argv.slice(2);
  const manifest: ManifestEntry[] = exists(MANIFEST) ? (JSON.parse(readFileSync(MANIFEST, 'utf8')) as ManifestEntry[]) : [];
  for (const spec of SOURCES) {
    if (wanted.length > 0 && !wanted.includes(spec.id)) continue;
    const out = extractSource(spec);
    if (!out) {
      console.error(`${spec.id}: no snapshot of ${spec.repo} under the mirror root; skipped`);
      continue;
    }
    writeLines(originalRunsFile(spec.id), out.runs.map((r) => JSON.stringify(r)));
    const at = manifest.findIndex((m) => m.id === spec.id);
    if (at >= 0) manifest[at] = out.entry;
    else manifest.push(out.entry);
    const calls = out.runs.reduce((n, r) => n + r.turns.reduce((k, t) => k + t.calls.length, 0), 0);
    console.log(`${spec.id}: ${out.runs.length} runs, ${calls} tool calls from ${out.entry.files.length} files of ${spec.repo}@${out.entry.commit.slice(0, 12)}`);
  }
  manifest.sort((a, b) => SOURCES.findIndex((s) => s.id === a.id) - SOURCES.findIndex((s) => s.id === b.id));
  writeFileSync(MANIFEST, JSON.stringify(manifest, null, 2) + '\n');
}

if (process.argv[1] && import.meta.url.endsWith(basename(process.argv[1]))) main();
