/**
 * Prints one run the way a labeller reads it:
 * `npm run corpus:inspect -- <corpus> <run id> [--compact | --focus] [--width N]`.
 * Each tool call with its index, `‖` when it shares a parallel batch with the call before, the
 * tool, shortened arguments and result, and what loopwatch and the anchors reported at that
 * call; user messages (and, unless compact, the model's words) when the originals are present
 * (`.tmp/real-originals`), else the pseudonymized corpus alone (structure only). `--compact`: one
 * line a call, `≡k` marking the same call (tool and arguments) as call k and `=k` the same
 * outcome; `--focus`: compact, only the calls near a detection or an exact repeat.
 */
import { basename } from 'node:path';
import { ANCHORS } from '../eval/anchors/index.js';
import { loopwatchDetections } from '../eval/loopwatch.js';
import { loadCorpusFile, type EvalCall, type EvalRun } from '../eval/runs.js';
import { splitOf } from '../eval/split.js';
import { corpusFile, exists, originalOtlpFile, originalRunsFile, readLines } from './files.js';
import { sourceById } from './sources.js';
import type { CorpusRun } from './run.js';

function short(s: string | undefined, width: number): string {
  if (s === undefined) return '∅';
  const flat = s.replace(/\s+/g, ' ').trim();
  return `${flat.length > width ? `${flat.slice(0, width)}…` : flat} (${s.length})`;
}

function outcomeOf(c: EvalCall): string {
  return c.failed ? `E\0${c.errorText}` : `R\0${c.result}`;
}

/** Per call: what loopwatch and the anchors reported there. */
function notesOf(corpusSpans: Parameters<typeof loopwatchDetections>[0], run: EvalRun): Map<number, string[]> {
  const notes = new Map<number, string[]>();
  const add = (at: number, text: string): void => {
    notes.set(at, [...(notes.get(at) ?? []), text]);
  };
  for (const d of loopwatchDetections(corpusSpans).get(run.traceId) ?? []) add(d.callIndex, `LW ${d.kind}/${d.rule}:${d.level}×${d.count}`);
  for (const a of ANCHORS) {
    const v = a.run(run);
    if (v.warning !== undefined) add(v.warning, `${a.name}:w`);
    if (v.critical !== undefined) add(v.critical, `${a.name}:c`);
  }
  return notes;
}

/** Per call: `≡k` (same tool and arguments as call k) and `=k` (same tool and outcome as call k). */
function repeatMarks(run: EvalRun): Map<number, string> {
  const lastCall = new Map<string, number>();
  const lastOutcome = new Map<string, number>();
  const marks = new Map<number, string>();
  for (const c of run.calls) {
    const call = `${c.name}\0${c.args}`;
    const out = `${c.name}\0${outcomeOf(c)}`;
    const same = lastCall.get(call);
    const sameOut = lastOutcome.get(out);
    lastCall.set(call, c.index);
    lastOutcome.set(out, c.index);
    marks.set(c.index, `${same !== undefined ? `≡${same}` : ''}${sameOut !== undefined ? `=${sameOut}` : ''}`);
  }
  return marks;
}

/** Calls within a few places of a detection or of an exact repeat (same call, same outcome). */
function focusSet(run: EvalRun, notes: ReadonlyMap<number, string[]>): Set<number> {
  const shown = new Set<number>();
  const last = new Map<string, string>();
  for (const c of run.calls) {
    const key = `${c.name}\0${c.args}`;
    const repeated = last.get(key) === outcomeOf(c);
    last.set(key, outcomeOf(c));
    if (repeated || notes.has(c.index)) for (let k = c.index - 3; k <= c.index + 2; k++) shown.add(k);
  }
  return shown;
}

function main(): void {
  const [corpus, runId, ...rest] = process.argv.slice(2);
  if (!corpus || !runId) {
    console.error('usage: corpus:inspect <corpus> <run id> [--compact | --focus] [--width N] [--test-split]');
    process.exitCode = 2;
    return;
  }
  // Reading a held-out run is labelling work, never rule work: say so before showing it.
  if (sourceById(corpus).heldOut && splitOf(corpus, runId) === 'test' && !rest.includes('--test-split')) {
    console.error(`${corpus} ${runId} is in the held-out test split: rule changes must not look at it. Labellers: add --test-split.`);
    process.exitCode = 2;
    return;
  }
  const width = Number(rest[rest.indexOf('--width') + 1] ?? 0) || 110;
  const focus = rest.includes('--focus');
  const compact = focus || rest.includes('--compact');
  const original = exists(originalOtlpFile(corpus));
  const path = original ? originalOtlpFile(corpus) : corpusFile(corpus);
  const loaded = loadCorpusFile(corpus, path);
  const run = loaded.runs.find((r) => r.runId === runId);
  if (!run) {
    console.error(`no run "${runId}" in ${path}`);
    process.exitCode = 2;
    return;
  }
  const source = original && exists(originalRunsFile(corpus))
    ? readLines(originalRunsFile(corpus)).map((l) => JSON.parse(l) as CorpusRun).find((r) => r.id === runId)
    : undefined;
  const notes = notesOf({ ...loaded, runs: [run], spans: loaded.spans.filter((s) => s.traceId === run.traceId) }, run);
  const marks = repeatMarks(run);
  const shown = focus ? focusSet(run, notes) : undefined;
  console.log(`${corpus} ${run.runId}  outcome=${run.outcome}  calls=${run.calls.length}  user messages=${run.userTimes.length}  (${original ? 'original' : 'pseudonymized'})`);

  let skipped = 0;
  const printCall = (c: EvalCall, prev: EvalCall | undefined): void => {
    if (shown && !shown.has(c.index)) {
      skipped++;
      if (c.index === run.calls.length) console.log(`    … ${skipped} calls`);
      return;
    }
    if (skipped > 0) console.log(`    … ${skipped} calls`);
    skipped = 0;
    const batch = prev && prev.batch === c.batch ? '‖' : ' ';
    const found = notes.get(c.index) ?? [];
    if (compact) {
      const res = c.failed ? `ERR ${short(c.errorText, width >> 1)}` : short(c.result, width >> 1);
      console.log(`${String(c.index).padStart(3)}${batch}${(marks.get(c.index) ?? '').padEnd(9)} ${c.name.slice(0, 18).padEnd(18)} ${short(c.args, width)} → ${res}${found.length > 0 ? `  !! ${found.join(', ')}` : ''}`);
      return;
    }
    const outcome = c.failed ? `ERROR ${short(c.errorText, width)}` : short(c.result, width);
    console.log(`${String(c.index).padStart(3)}${batch} ${c.name} ${short(c.args, width)}\n       → ${outcome}${found.length > 0 ? `\n       !! ${found.join(', ')}` : ''}`);
  };
  if (!source) {
    run.calls.forEach((c, i) => printCall(c, run.calls[i - 1]));
    return;
  }
  // the originals interleave what the user and the model said with the calls, turn by turn
  let k = 0;
  for (const turn of source.turns) {
    if (turn.kind === 'user') console.log(`    USER: ${short(turn.text, width)}`);
    else if (turn.text && turn.text.trim() !== '' && !compact) console.log(`    MODEL: ${short(turn.text, width)}`);
    for (let j = 0; j < turn.calls.length; j++, k++) {
      const c = run.calls[k];
      if (c) printCall(c, run.calls[k - 1]);
    }
  }
}

if (process.argv[1] && import.meta.url.endsWith(basename(process.argv[1]))) main();
