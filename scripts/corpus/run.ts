/**
 * A real agent run reduced to what the corpus keeps: the model turns, the tool calls each turn
 * asked for (several at once form a parallel batch), their outcomes and the times. Every source
 * format is converted into this shape first; the pseudonymizer and the OTLP writer only know it.
 */

export interface TokenUsage {
  readonly input: number;
  readonly output: number;
}

export interface CorpusCall {
  readonly name: string;
  /** A JSON value (object) or the raw argument text, as the source recorded it. */
  readonly arguments: unknown;
  /** The result as the tool returned it (text, or JSON text). Absent when not recorded. */
  readonly result?: string;
  /** Present when the source says the call failed: its error text. */
  readonly error?: string;
  /**
   * The failure's class as an instrumentation records it (`error.type`): `tool_error` for an MCP
   * result with `isError`, `null` for none (a command that exited non-zero: status ERROR only).
   * Absent: `_OTHER` (the source says only that the call failed).
   */
  readonly errorType?: string | null;
  /** Call id as the source recorded it (a random id). */
  readonly id?: string;
  /** Epoch milliseconds. */
  readonly start: number;
  readonly end: number;
}

export interface CorpusTurn {
  /** `model`: one model call and the tool calls it asked for; `user`: a user message. */
  readonly kind: 'model' | 'user';
  readonly start: number;
  readonly end: number;
  readonly usage?: TokenUsage;
  /** Sub-agent that made this turn; undefined for the main agent. */
  readonly agent?: string;
  /**
   * What the user or the model said. A user's text is written to OTLP (pseudonymized in the
   * corpus) as the gen_ai conventions record it; the model's words stay in the originals, for a
   * labeller to read the run.
   */
  readonly text?: string;
  readonly calls: readonly CorpusCall[];
}

export interface CorpusRun {
  /** Stable id inside its source: benchmark instance or task id (public names), trial. */
  readonly id: string;
  readonly source: string;
  readonly agent: string;
  readonly model: string;
  /** How the run ended, in the source's words (`submitted`, `exit_cost`, `user_stop`, `max_steps`). */
  readonly outcome: string;
  /** The source recorded per-message timestamps (else they are synthesized, monotone). */
  readonly recordedTimes: boolean;
  readonly turns: readonly CorpusTurn[];
}

/** Tool calls of a run in order (1-based index = position + 1), as detection numbers them. */
export function callsOf(run: CorpusRun): CorpusCall[] {
  const calls: CorpusCall[] = [];
  for (const t of run.turns) for (const c of t.calls) calls.push(c);
  // detection numbers calls by start time; the writer keeps turns in time order
  return calls;
}
