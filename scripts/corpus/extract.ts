/**
 * Re-creates the originals of the real-run corpus from fetched repository snapshots:
 * `npm run corpus:extract [-- source-id...]`. Reads every file named in `sources.ts` from the
 * bare git directories under `LOOPWATCH_MIRRORS` (default /work/.mirror), converts each run into
 * a `CorpusRun` and writes them, gzip'd JSON Lines, under `.tmp/real-originals/` (gitignored).
 * The commit and blob ids read go to `test/fixtures/real/sources.json` (committed).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { findBlobs, findHeadBlobs, headCommit, mirrorDir, readBlob } from './mirror.js';
import { sweAgentRun } from './formats/swe-agent.js';
import { liveMcpRuns, type LiveMcpTask } from './formats/livemcp.js';
import { tau2Runs, type Tau2File } from './formats/tau2.js';
import { toolathlonRun, type ToolathlonFile } from './formats/toolathlon.js';
import { exists, MANIFEST, originalRunsFile, writeLines } from './files.js';
import type { CorpusRun } from './run.js';
import { SOURCES, type SourceSpec } from './sources.js';

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
  const stem = basename(path).replace(/(\.json)+$/, '');
  const domain = /(airline|retail|telecom)/.exec(stem)?.[1];
  if (spec.id !== 'tau2-gemma-domains' && domain) return `${domain}/`;
  return `${stem
    .replace(/^\d{4}-\d{2}-\d{2}[T_][\d:._-]+?_/, '')
    .replace(/_llm_agent.*$/, '')
    .replace(/[^\w-]+/g, '_')}/`;
}

/** See `SourceSpec.sample`: limit runs all, the others by the order of a hash of their id. */
function sampleRuns(spec: SourceSpec, runs: CorpusRun[]): CorpusRun[] {
  const sample = spec.sample;
  if (!sample) return runs;
  const rank = (r: CorpusRun): string => createHash('sha256').update(r.id).digest('hex');
  const others = runs.filter((r) => !sample.always.test(r.outcome)).sort((a, b) => rank(a).localeCompare(rank(b)));
  const keep = new Set([...runs.filter((r) => sample.always.test(r.outcome)), ...others.slice(0, sample.others)]);
  return runs.filter((r) => keep.has(r));
}

export function extractSource(spec: SourceSpec): { runs: CorpusRun[]; entry: ManifestEntry } | undefined {
  const dir = mirrorDir(spec.repo);
  if (!dir) return undefined;
  const blobs = spec.newestOnly ? findHeadBlobs(dir, spec.paths) : findBlobs(dir, spec.paths);
  const base = Date.parse(spec.base ?? '2025-01-01T00:00:00Z');
  const runs: CorpusRun[] = [];
  const seenSimulations = new Set<string>();
  const used: Array<{ path: string; blob: string; run?: string }> = [];
  for (const { path, blob } of blobs) {
    const text = readBlob(dir, blob);
    if (spec.format === 'swe-agent') {
      const id = basename(path).replace(/\.traj$/, '');
      runs.push(sweAgentRun(text, { id, source: spec.id, agent: spec.agent, model: spec.model ?? 'unknown', base: base + runs.length * 86_400_000 }));
      used.push({ path, blob, run: id });
      continue;
    }
    if (spec.format === 'toolathlon') {
      const run = toolathlonRun(JSON.parse(text) as ToolathlonFile, { name: basename(path), source: spec.id, agent: spec.agent, base: base + runs.length * 86_400_000 });
      runs.push(run);
      used.push({ path, blob, run: run.id });
      continue;
    }
    if (spec.format === 'livemcp') {
      runs.push(...liveMcpRuns(JSON.parse(text) as LiveMcpTask[], { source: spec.id, agent: spec.agent, model: spec.model ?? 'unknown', base }));
      used.push({ path, blob });
      continue;
    }
    let file: Tau2File;
    try {
      file = JSON.parse(text) as Tau2File;
    } catch {
      continue;
    }
    // the same simulation is often committed twice (renamed copies): keep its first file
    const fresh = (file.simulations ?? []).filter((s) => {
      const key = typeof s.id === 'string' ? s.id : JSON.stringify([s.task_id, s.trial, s.start_time]);
      if (seenSimulations.has(key)) return false;
      seenSimulations.add(key);
      return Array.isArray(s.messages) && s.messages.length > 0;
    });
    if (fresh.length === 0) continue;
    runs.push(...tau2Runs({ ...file, simulations: fresh }, { source: spec.id, prefix: tau2Prefix(spec, path), agent: spec.agent }));
    used.push({ path, blob });
  }
  // a second results file of the same domain and task (a re-run) gets a suffix: ids stay unique
  const ids = new Set<string>();
  const unique = runs.map((r) => {
    let id = r.id;
    for (let n = 2; ids.has(id); n++) id = `${r.id}~${n}`;
    ids.add(id);
    return id === r.id ? r : { ...r, id };
  });
  runs.splice(0, runs.length, ...sampleRuns(spec, unique));
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
