/**
 * A shape measured on the corpus, not a detector: `npx tsx scripts/eval/failing-recheck.ts [--split dev]`.
 * Every run that reruns one call failing the same way (tool, arguments and what the failure said)
 * at least three times with other calls between: per streak, its reruns, what happened between
 * them (new calls that succeeded, calls that repeat an earlier call, calls repeating a call of an
 * earlier gap of the streak: the "fix" sent again identically), and where the run went after.
 * Calls and outcomes are compared by loopwatch's fingerprints (volatile values removed, a
 * failure's message and output kept), as the failure rules compare them.
 */
import { LoopEngine } from '../../src/detector/engine.js';
import { buildToolCall } from '../../src/detector/tool-call.js';
import type { EvalCall } from './runs.js';
import { loadLabels } from './labels.js';
import { loadRealCorpora, type EvalRun } from './runs.js';
import { SPLITS, type Split } from './split.js';

/** What the calls between two reruns of one failing call did. */
export interface Gap {
  readonly calls: number;
  /** Calls with arguments new to the run that succeeded: new work. */
  readonly newOk: number;
  /** Calls with arguments new to the run that failed. */
  readonly newFailed: number;
  /** Calls repeating an earlier call and outcome of the run: nothing new. */
  readonly repeats: number;
  /** Calls whose tool and arguments already ran in an earlier gap of this streak (a fix resent). */
  readonly fromEarlierGap: number;
}

export interface FailingStreak {
  readonly tool: string;
  /** 1-based calls of the reruns. */
  readonly at: readonly number[];
  readonly gaps: readonly Gap[];
  /** What the same call did next after the streak: its output moved, it succeeded, or it never ran again. */
  readonly after: 'moved' | 'succeeded' | 'not-rerun';
}

export const ENGINE = new LoopEngine();

/** The call's identity and outcome as loopwatch fingerprints them (`saysError`: a success whose result says it failed). */
export function keys(c: EvalCall): { call: string; outcome: string; saysError: boolean } {
  const t = buildToolCall(ENGINE, {
    toolName: c.name,
    arguments: c.args,
    ...(c.result === undefined ? {} : { result: c.result }),
    ...(c.failed ? { error: c.errorText === undefined ? {} : { message: c.errorText } } : {}),
    startTime: c.start,
    endTime: c.end,
    batch: c.batch,
    callIndex: c.index,
  });
  const o = t.outcome;
  return { call: `${c.name}\0${t.argsHash ?? ''}`, outcome: o.ok ? `ok\0${o.resultHash ?? ''}` : `error\0${o.failureHash}`, saysError: o.ok && o.saysError === true };
}

/** The streaks of one run: every call failing the same way 3 times or more with calls between. */
export function failingStreaks(run: EvalRun, minReruns = 3): FailingStreak[] {
  const calls = run.calls;
  const fp = new Map(calls.map((c) => [c, keys(c)]));
  const callKey = (c: EvalCall): string => fp.get(c)?.call ?? '';
  const outcomeKey = (c: EvalCall): string => fp.get(c)?.outcome ?? '';
  const at = (i: number): EvalCall => calls[i] as EvalCall;
  const seenCall = new Set<string>();
  const seenCallOutcome = new Set<string>();
  /** Per call: new arguments / repeats an earlier call and outcome (as of its own position). */
  const isNew: boolean[] = [];
  const isRepeat: boolean[] = [];
  for (const c of calls) {
    const k = callKey(c);
    const ko = `${k}\u0001${outcomeKey(c)}`;
    isNew.push(!seenCall.has(k));
    isRepeat.push(seenCallOutcome.has(ko));
    seenCall.add(k);
    seenCallOutcome.add(ko);
  }
  const out: FailingStreak[] = [];
  const byCall = new Map<string, number[]>();
  calls.forEach((c, i) => {
    const k = callKey(c);
    byCall.set(k, [...(byCall.get(k) ?? []), i]);
  });
  for (const positions of byCall.values()) {
    let start = 0;
    while (start < positions.length) {
      const first = at(positions[start] as number);
      let end = start + 1;
      if (first.failed) {
        while (end < positions.length) {
          const c = at(positions[end] as number);
          if (!c.failed || outcomeKey(c) !== outcomeKey(first)) break;
          end++;
        }
      }
      const streak = positions.slice(start, end);
      const spread = streak.length >= 2 && (streak.at(-1) as number) - (streak[0] as number) > streak.length - 1;
      if (first.failed && streak.length >= minReruns && spread) {
        const gaps: Gap[] = [];
        const earlier = new Set<string>();
        for (let g = 1; g < streak.length; g++) {
          const from = (streak[g - 1] as number) + 1;
          const to = streak[g] as number;
          const keys: string[] = [];
          let newOk = 0;
          let newFailed = 0;
          let repeats = 0;
          let fromEarlierGap = 0;
          for (let i = from; i < to; i++) {
            const c = at(i);
            const k = callKey(c);
            keys.push(k);
            if (isRepeat[i]) repeats++;
            else if (isNew[i]) {
              if (c.failed) newFailed++;
              else newOk++;
            }
            if (earlier.has(k)) fromEarlierGap++;
          }
          for (const k of keys) earlier.add(k);
          gaps.push({ calls: to - from, newOk, newFailed, repeats, fromEarlierGap });
        }
        const next = positions[end];
        const after = next === undefined ? 'not-rerun' : at(next).failed ? 'moved' : 'succeeded';
        out.push({ tool: first.name, at: streak.map((i) => at(i).index), gaps, after });
      }
      start = end;
    }
  }
  return out;
}

function gapText(g: Gap): string {
  return `${g.calls}c/${g.newOk}n${g.newFailed > 0 ? `+${g.newFailed}nf` : ''}${g.repeats > 0 ? `/${g.repeats}r` : ''}${g.fromEarlierGap > 0 ? `/${g.fromEarlierGap}e` : ''}`;
}

function main(): void {
  const i = process.argv.indexOf('--split');
  const splits: Split[] = i > 0 ? [process.argv[i + 1] as Split] : [...SPLITS];
  for (const corpus of loadRealCorpora(undefined, splits)) {
    const labels = loadLabels(corpus.id);
    for (const run of corpus.runs) {
      const label = labels.get(run.runId)?.label ?? 'none';
      for (const s of failingStreaks(run)) {
        console.log(
          [corpus.id, run.runId, label, run.outcome ?? '-', `calls=${run.calls.length}`, s.tool, `x${s.at.length}`, `at=${s.at.join(',')}`, `gaps=${s.gaps.map(gapText).join(' ')}`, `after=${s.after}`].join('\t'),
        );
      }
    }
  }
}

if (process.argv[1]?.endsWith('failing-recheck.ts')) main();
