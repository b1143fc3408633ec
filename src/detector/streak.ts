import { ARGS_NOVEL, type CallHistory, NEWS, OK, sameHash, USER_TURN, WAIT, WRITE } from './history.js';

/** What one rule counts: which earlier calls repeat the current one and which end the run. */
export interface StreakQuery {
  /** Entry i repeats the current call for this rule. */
  occurrence(i: number): boolean;
  /** Entry i shows progress on this very signature (a different answer), so the run ends there. */
  breaks(i: number): boolean;
  /**
   * Entry i is other work in between. The default: a successful call with arguments never seen
   * before in the trace (new work). A streak survives `gapBudget` such steps (`budget`, when given).
   */
  gap?(i: number): boolean;
  /** Steps of other work the streak survives; default `StreakOptions.gapBudget`. */
  readonly budget?: number;
  /**
   * A user message that said something new ends the run (the evidence is "nothing new between");
   * otherwise the walk goes on past it, counting it as news between the repetitions.
   */
  readonly userTurnEnds?: boolean;
  /** Repetitions spaced far apart in time count for less (spaced-out polling). */
  readonly spacing: boolean;
  /**
   * A repetition with a write between it and the one before (a `writer`'s call that applied with
   * arguments new to the trace, or that only failed before) weighs nothing: it verifies that write.
   */
  readonly writeVerifies?: boolean;
  /** Counting stops once the weighted total reaches this: nothing above the top threshold matters. */
  readonly stopAt: number;
}

export interface StreakOptions {
  readonly gapBudget: number;
  readonly idleMs: number;
  readonly weight: number;
}

export interface Streak {
  /** Steps (batches) in the run, the current one included. */
  readonly count: number;
  /** `count` with spaced-out repetitions weighted down. */
  readonly weighted: number;
  /** Distinct argument hashes among the occurrences (up to 16). */
  readonly distinctArgs: number;
  /** Consecutive occurrences whose outcome differed. */
  readonly outputChanges: number;
  /**
   * Steps between the occurrences holding a call that told the agent something new (`NEWS`):
   * 0 means nothing new between the repetitions, whatever `gap` let the walk go past.
   */
  readonly news: number;
  /** User messages that said something new, between the occurrences (0 when `userTurnEnds`). */
  readonly userTurns: number;
  /** Repetitions with no new user message between them and the occurrence before (`count - 1` when `userTurnEnds`). */
  readonly unprompted: number;
  /**
   * History index of the first call of the run: the earliest-recorded occurrence of the oldest
   * step counted (the current call when it is the only one).
   */
  readonly first: number;
}

const MAX_DISTINCT = 16;

function defaultGap(h: CallHistory, i: number): boolean {
  const f = h.flags(i);
  return (f & OK) !== 0 && (f & ARGS_NOVEL) !== 0;
}

/**
 * Walks back from the newest call (the current one). Calls of the current batch are parallel
 * siblings and are skipped; an earlier batch counts once however many matching calls it holds
 * (duplicates inside one batch are not repetitions). Waits are invisible unless they are what
 * is being counted.
 */
export function walkStreak(h: CallHistory, q: StreakQuery, opts: StreakOptions): Streak {
  const cur = h.size - 1;
  const curBatch = h.batch(cur);
  let count = 1;
  let weighted = 1;
  let gaps = 0;
  let newerStart = h.start(cur);
  let lastOut = h.out(cur);
  let changes = 0;
  let first = cur;
  let news = 0;
  /** News steps since the last occurrence found: between repetitions only once another one is. */
  let newsSince = 0;
  let userTurns = 0;
  let turnsSince = 0;
  let unprompted = 0;
  const args: number[] = [h.args(cur)];
  const addArgs = (a: number): void => {
    if (args.length < MAX_DISTINCT && !args.some((x) => sameHash(x, a))) args.push(a);
  };

  const budget = q.budget ?? opts.gapBudget;
  /** A user message that said something new came before the batch just walked (or the current one). */
  let turn = (h.flags(cur) & USER_TURN) !== 0;
  let i = cur - 1;
  /** A write that applied for the first time came after the occurrence just walked past (`writeVerifies`). */
  let wroteSince = false;
  let newerWeight = 1;
  while (i >= 0 && weighted < q.stopAt) {
    const batch = h.batch(i);
    if (batch === curBatch) {
      if ((h.flags(i) & USER_TURN) !== 0) turn = true;
      i--;
      continue;
    }
    if (turn) {
      if (q.userTurnEnds === true) break;
      newsSince++;
      turnsSince++;
      turn = false;
    }
    let occurrence = -1;
    let earliest = -1;
    let broken = false;
    let gap = false;
    let told = false;
    let wrote = false;
    for (; i >= 0 && h.batch(i) === batch; i--) {
      if ((h.flags(i) & USER_TURN) !== 0) turn = true;
      const isOccurrence = q.occurrence(i);
      if ((h.flags(i) & WAIT) !== 0 && !isOccurrence) continue;
      if (q.breaks(i)) broken = true;
      else if (isOccurrence) {
        if (occurrence < 0) occurrence = i;
        earliest = i;
        addArgs(h.args(i));
      } else {
        if ((h.flags(i) & NEWS) !== 0) told = true;
        if (q.gap ? q.gap(i) : defaultGap(h, i)) gap = true;
        if ((h.flags(i) & (WRITE | OK | ARGS_NOVEL)) === (WRITE | OK | ARGS_NOVEL)) wrote = true;
      }
    }
    if (broken) break;
    if (wrote && q.writeVerifies === true) wroteSince = true;
    if (occurrence >= 0) {
      news += newsSince;
      newsSince = 0;
      if (turnsSince === 0) unprompted++;
      userTurns += turnsSince;
      turnsSince = 0;
      count++;
      first = earliest;
      const idle = newerStart - h.end(occurrence);
      // the newer repetition verified the write before it
      if (wroteSince) weighted -= newerWeight;
      newerWeight = q.spacing && idle >= opts.idleMs ? opts.weight : 1;
      weighted += newerWeight;
      wroteSince = false;
      newerStart = h.start(occurrence);
      if (!sameHash(h.out(occurrence), lastOut)) changes++;
      lastOut = h.out(occurrence);
    } else if (gap && ++gaps > budget) {
      break;
    } else if (told) {
      newsSince++;
    }
  }
  return { count, weighted, distinctArgs: args.length, outputChanges: changes, news, userTurns, unprompted, first };
}
