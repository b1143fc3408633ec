import type { CorpusCall, CorpusRun, CorpusTurn } from '../run.js';
import { readAsciicast, without, type TimedText } from './asciicast.js';

/**
 * mini-swe-agent's `mini` command line run inside a terminal harness (Terminal-Bench records the
 * terminal as an asciicast, `sessions/agent.cast`, next to the trial's `results.json`). The
 * transcript is what `mini` prints: per step a header `mini-swe-agent (step N, $cost):`, the
 * model's answer (a `THOUGHT:` and exactly one ```` ```bash ```` block, the action), then `User:`
 * and the observation: `<returncode>N</returncode>` and the command's `<output>`, or the timeout
 * notice of a command killed after the time limit. An answer without exactly one bash block runs
 * nothing (mini answers with a format error). The submission (`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`)
 * is answered by what was submitted, without an envelope; the command running when the harness's
 * time limit ended the run has no observation (a call without result).
 *
 * A command that exits non-zero is a failed call with the observation as its error text and no
 * error class, as an instrumented shell tool records it; a timed-out command fails with class
 * `timeout`. Times are the recording's: a model turn lasts from its step header to its answer, a
 * command from its answer to its observation. The recording also holds the harness's own noise
 * (spinner frames, LiteLLM's logging tracebacks on stderr), removed before parsing. The terminal
 * is 160 columns wide and mini's console wraps longer lines, so texts hold the wrapped lines.
 */

export interface TerminalBenchResults {
  readonly task_id?: unknown;
  readonly instruction?: unknown;
  readonly failure_mode?: unknown;
}

const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Waiting for the LM to respond\.\.\.\r?/g;
const CARRIAGE_RETURN = /\r/g;
/** A LiteLLM log line on stderr and the traceback printed with it (indented frames, blank lines, exception lines). */
const LITELLM_NOISE =
  /^\d\d:\d\d:\d\d - LiteLLM:[A-Z]+:[^\n]*\n(?:(?:Traceback \(most recent call last\):|During handling of the above exception, another exception occurred:|[ \t]+\S[^\n]*|[ \t]*|[\w.]*(?:Error|Exception)(?::[^\n]*)?)\n)*/gm;
const STEP = /^mini-swe-agent \(step (\d+), \$[\d.]+\):\n/gm;
const OBSERVATION = /^User:\n/m;
const RULE = /^─{10,}[^\n]*$/m;
/** What follows the last answer when the agent stops: mini's exit, the shell, the recorder. */
const TRAILER = /^(?:Saved trajectory to |root@[^\n]*?[#$] |asciinema: |exit$)/m;
const BASH_BLOCK = /```bash\s*\n([\s\S]*?)\n```/g;
const SUBMIT = /COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT/;
const RETURN_CODE = /<returncode>(-?\d+)<\/returncode>/;
const TIMED_OUT = /timed out and has been killed/;

/** The first non-space character at or after `from` (below `to`), else `from`. */
function firstPrinted(text: string, from: number, to: number): number {
  for (let i = from; i < to; i++) if (!/\s/.test(text[i] ?? '')) return i;
  return from;
}

function lastPrinted(text: string, from: number, to: number): number {
  for (let i = to - 1; i >= from; i--) if (!/\s/.test(text[i] ?? '')) return i;
  return from;
}

/**
 * How the agent's run ended: its own submission first (the harness reports `agent_timeout` for
 * some runs that had submitted and exited, when its wait for the command outlived the limit),
 * else the harness's time limit, mini's own limits, or an end without submission.
 */
function outcomeOf(failure: string, calls: readonly CorpusCall[], tail: string): string {
  const last = calls[calls.length - 1];
  if (last && last.error === undefined && SUBMIT.test(JSON.stringify(last.arguments))) return 'submitted';
  if (failure === 'agent_timeout') return 'agent_timeout';
  if (/\bLimitsExceeded\b/.test(tail)) return 'limits_exceeded';
  return 'ended_without_submission';
}

export function miniCliRun(cast: string, results: TerminalBenchResults, meta: { id: string; source: string; agent: string; model: string }): CorpusRun {
  let doc: TimedText = readAsciicast(cast);
  for (const noise of [SPINNER, CARRIAGE_RETURN, LITELLM_NOISE]) doc = without(doc, noise);
  const { text, times } = doc;
  const at = (i: number): number => times[Math.min(Math.max(i, 0), times.length - 1)] ?? 0;
  const model = /\bmini -m (\S+)/.exec(text)?.[1]?.replace(/^[\w-]+\//, '') ?? meta.model;
  const headers = [...text.matchAll(STEP)];
  const turns: CorpusTurn[] = [];
  const instruction = typeof results.instruction === 'string' ? results.instruction : '';
  const launched = text.search(/\bmini -m /);
  if (headers.length > 0) {
    const t = at(launched >= 0 ? launched : (headers[0]?.index ?? 0));
    turns.push({ kind: 'user', start: t, end: t, calls: [], text: instruction });
  }
  headers.forEach((h, n) => {
    const from = (h.index ?? 0) + h[0].length;
    const to = headers[n + 1]?.index ?? text.length;
    const segment = text.slice(from, to);
    const user = OBSERVATION.exec(segment);
    const trailer = TRAILER.exec(segment);
    const answerEnd = from + (user ? user.index : trailer ? trailer.index : segment.length);
    const answer = text.slice(from, answerEnd).trim();
    const modelStart = at(h.index ?? 0);
    const modelEnd = Math.max(modelStart, at(firstPrinted(text, from, answerEnd)));
    const blocks = [...answer.matchAll(BASH_BLOCK)];
    const calls: CorpusCall[] = [];
    if (blocks.length === 1) {
      const command = blocks[0]?.[1] ?? '';
      const start = at(lastPrinted(text, from, answerEnd)) + 1;
      let observation: string | undefined;
      let end = start + 1;
      if (user) {
        const body = from + user.index + user[0].length;
        const rule = RULE.exec(text.slice(body, to));
        observation = text.slice(body, rule ? body + rule.index : to).replace(/\s+$/, '');
        end = Math.max(start + 1, at(from + user.index));
      } else {
        end = Math.max(start + 1, at(lastPrinted(text, from, to)));
      }
      const code = observation === undefined ? undefined : RETURN_CODE.exec(observation)?.[1];
      let outcome: Pick<CorpusCall, 'result' | 'error' | 'errorType'> = {};
      // the submission prints what was submitted, not an observation envelope: never a failure
      if (observation !== undefined && !SUBMIT.test(command)) {
        if (code !== undefined && code !== '0') outcome = { error: observation, errorType: null };
        else if (code === undefined && TIMED_OUT.test(observation)) outcome = { error: observation, errorType: 'timeout' };
        else outcome = { result: observation };
      } else if (observation !== undefined) outcome = { result: observation };
      calls.push({ name: 'bash', arguments: { command }, ...outcome, start, end });
    }
    turns.push({ kind: 'model', start: modelStart, end: modelEnd, calls, text: answer });
  });
  const allCalls = turns.flatMap((t) => t.calls);
  const lastHeader = headers[headers.length - 1];
  return {
    id: meta.id,
    source: meta.source,
    agent: meta.agent,
    model,
    outcome: outcomeOf(typeof results.failure_mode === 'string' ? results.failure_mode : '', allCalls, lastHeader ? text.slice(lastHeader.index) : ''),
    recordedTimes: true,
    turns,
  };
}
