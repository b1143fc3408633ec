import { LoopEngine } from '../detector/engine.js';
import type { RawError } from '../detector/error-class.js';
import { buildToolCall } from '../detector/tool-call.js';
import { userMessageHash } from '../detector/user-message.js';
import type { LoopDetection, ToolCall } from '../detector/types.js';
import { ToolLoopError } from '../errors.js';
import { callContained, log, notifyContained, reportContained } from '../otel/diag.js';
import { combine, type Hash } from '../fingerprint/hash.js';
import type { Batch } from '../sequence/call-sequence.js';
import { guardAiSdkTools, type WrapToolsOptions } from './ai-sdk.js';
import type { CallGuard, CheckOptions, GuardedCall, ProceedingCall, RunOptions } from './calls.js';
import { decide, strongest } from './decide.js';
import { guardDispatcher, type Dispatcher, type WrapDispatcherOptions } from './dispatcher.js';
import type { GuardEvent, GuardedCallRecord, GuardOutcome } from './events.js';
import { expectedOutcome } from './expect.js';
import { decisionMessage, hintText, LOOP_HINT_TYPE, type GuardFacts, type LoopHint } from './hint.js';
import { splitGuardOptions, type GuardAction, type ResolvedBackoff, type StopScope, type ToolLoopGuardOptions } from './options.js';
import { GuardSession, type CallRecord } from './session.js';
import { activeSpan, markSpan } from './span-mark.js';
import { callOutcome, changesState, type ToolAnnotations } from './tool-result.js';
import { backoffDelay, isTransientError, sleep } from './transient.js';

const UNGUARDED: ProceedingCall = {
  action: 'proceed',
  delayMs: 0,
  detection: undefined,
  succeeded: () => undefined,
  failed: () => undefined,
  cancelled: () => undefined,
};

/**
 * Stops looping tool calls before they run. Ask it about each call (`check`, or `run` around
 * it, or the `wrapTools` / `wrapDispatcher` wrappers); it runs the same engine as the span
 * processor on the calls that really ran, judges the next one by the outcome it is expected to
 * have, and answers proceed, a hint (a synthetic result the model reads) or a `ToolLoopError`.
 *
 * One guard holds one conversation's state: create one per agent run, or call `reset()` on each
 * new user turn. A hinted or refused call is never recorded as a call, so the guard cannot feed
 * its own loop; its interventions are counted separately and escalate (see `GuardAction`).
 * Nothing here throws into the agent except the intended `ToolLoopError`.
 */
export class ToolLoopGuard<H = LoopHint> implements CallGuard<H> {
  readonly engine: LoopEngine;
  readonly action: GuardAction;
  readonly stopScope: StopScope;
  private readonly maxHints: number;
  private readonly backoff: ResolvedBackoff | undefined;
  private readonly options: ToolLoopGuardOptions<H>;
  private readonly clock: () => number;
  private readonly id: string;
  private generation = 0;
  private session: GuardSession;

  constructor(options: ToolLoopGuardOptions<H> = {}) {
    const { config, backoff } = splitGuardOptions(options as ToolLoopGuardOptions<unknown>);
    this.engine = options.engine ?? new LoopEngine(config ?? {});
    this.action = options.action ?? 'graduated';
    this.stopScope = options.stopScope ?? 'run';
    this.maxHints = options.maxHints ?? 3;
    this.backoff = backoff;
    this.options = options;
    this.clock = options.now ?? Date.now;
    this.id = options.id ?? '';
    this.session = this.newSession();
  }

  /** Aborted (reason: the `ToolLoopError`) when the guard stops the run. Pass it to the agent's model calls. */
  get signal(): AbortSignal {
    return this.session.controller.signal;
  }

  /** The error that stopped this turn, if any. */
  get stopped(): ToolLoopError | undefined {
    return this.session.stopped;
  }

  /** A new conversation: forget calls, interventions and the stop. `signal` is a new signal afterwards. */
  reset(): void {
    this.session = this.newSession();
  }

  /**
   * The user said `text`. Something this conversation has not heard is a new turn: the guard's
   * interventions and stop are forgotten (`signal` is a new signal), and a call repeated across
   * it is no proof of a loop (a re-check the user asked for), while the calls are remembered.
   * What the user said before adds nothing: the loop goes on being counted, a stop stays.
   */
  userMessage(text: string): void {
    try {
      const content = userMessageHash(text);
      if (content === undefined) return;
      const s = this.session;
      // a session that has judged nothing yet is the new turn already (its signal may be in use)
      if (s.detector.userMessage(content) && s.sequence.callCount > 0) this.session = new GuardSession(s.detector, ++this.generation, this.engine.config.historySize, s.outcomes);
    } catch (e) {
      this.problem('a user message', e);
    }
  }

  /** The latest calls of this turn (at most `limit`), oldest first: fingerprints and decisions, no raw content. */
  recentCalls(limit = Number.POSITIVE_INFINITY): GuardedCallRecord[] {
    return this.session.recentRecords(limit);
  }

  /**
   * Judges a call before it runs. Returns a proceeding call (run it, then report with
   * `succeeded` / `failed`) or a hint to return instead; throws `ToolLoopError` when the run must stop.
   */
  check(toolName: string, args: unknown, options: CheckOptions = {}): GuardedCall<H> {
    let plan: GuardedCall<H> | ToolLoopError;
    try {
      plan = this.plan(toolName, args, options);
    } catch (e) {
      // A defect of ours must not stop somebody's agent: the call runs unguarded.
      this.problem('the guard check', e);
      return UNGUARDED;
    }
    if (plan instanceof ToolLoopError) throw plan;
    return plan;
  }

  /** `check`, then `execute` (after any backoff delay), then the outcome recorded. The tool's own errors pass through unchanged. */
  async run<R>(toolName: string, args: unknown, execute: () => R | PromiseLike<R>, options: RunOptions = {}): Promise<Awaited<R> | H> {
    const call = this.check(toolName, args, options);
    if (call.action === 'hint') return call.hint;
    if (call.delayMs > 0) {
      try {
        await sleep(call.delayMs, [options.signal, this.signal]);
      } catch (reason) {
        call.cancelled();
        throw reason;
      }
    }
    let result: Awaited<R>;
    try {
      result = await execute();
    } catch (error) {
      call.failed(error);
      throw error;
    }
    call.succeeded(result);
    return result;
  }

  /** An AI SDK `tools` object with every `execute` guarded (see `guardAiSdkTools`). */
  wrapTools<T extends object>(tools: T, options?: WrapToolsOptions): T {
    return guardAiSdkTools(this, tools, options);
  }

  /** A `(toolName, args, ...rest) => Promise<result>` dispatcher, guarded (see `guardDispatcher`). */
  wrapDispatcher<Args, Rest extends unknown[], R>(
    dispatch: Dispatcher<Args, Rest, R>,
    options?: WrapDispatcherOptions<Args, Rest>,
  ): (toolName: string, args: Args, ...rest: Rest) => Promise<Awaited<R> | H> {
    return guardDispatcher(this, dispatch, options);
  }

  private newSession(): GuardSession {
    return new GuardSession(this.engine.createTrace(this.id), ++this.generation, this.engine.config.historySize);
  }

  private plan(toolName: string, args: unknown, options: CheckOptions): GuardedCall<H> | ToolLoopError {
    const s = this.session;
    const index = s.sequence.nextCallIndex();
    const now = this.clock();
    const span = activeSpan();
    const batch = s.batchFor(options.batch);
    const declaredReadOnly = options.annotations?.readOnlyHint;
    const base = buildToolCall(
      this.engine,
      {
        toolName,
        arguments: args,
        startTime: now,
        endTime: now,
        batch: batch.key,
        callIndex: index,
        ...(span ? { spanId: span.spanId } : {}),
        ...(typeof declaredReadOnly === 'boolean' ? { declaredReadOnly } : {}),
      },
      log.warn,
    );
    const trigger = combine(this.engine.toolHash(toolName), base.argsHash ?? Number.NaN);
    const record: CallRecord = { index, toolName, argsHash: base.argsHash, status: 'running', startTime: now };
    const enforce = this.engine.config.mode === 'enforce';
    const where = { traceId: span?.traceId ?? this.id, spanId: span?.spanId ?? '', callIndex: index };

    const stoppedAs = s.stopped && enforce ? (this.stopScope === 'run' ? s.stopped.detection : s.refusedAs(trigger)) : undefined;
    if (stoppedAs) {
      const d: LoopDetection = { ...stoppedAs, ...where };
      s.addRecord({ ...record, status: 'blocked', detection: d, endTime: now });
      if (span) markSpan(span.span, { action: 'blocked', detection: d, event: false });
      this.report({ action: 'blocked', phase: 'before', detection: d, strike: 0, alreadyStopped: true });
      return new ToolLoopError(d);
    }

    const failures = s.outcomes.failuresSinceSuccess(toolName, base.argsHash);
    const transientRetry = failures > 0 && s.wasTransient(trigger);
    const delayMs = transientRetry && this.backoff ? backoffDelay(this.backoff, failures) : 0;
    // A poll's next answer may be the one that moves, and a wait is deliberate: judging them by
    // the outcome they are expected to have would refuse the poll that finishes the job. Loops of
    // them are judged once they ran, as the span processor does (and stopped then, if critical).
    // Likewise a call that ran before a declared change of state: its last outcome may not be its next.
    const role = this.engine.policies.get(toolName, base.declaredReadOnly).role;
    const found =
      role === 'poller' || role === 'wait' || s.changedSince(trigger)
        ? []
        : s.detector.preview({ ...base, outcome: expectedOutcome(s.outcomes, toolName, base.argsHash) }, batch.running === 0);
    const primary = strongest(found);
    if (!primary) return this.proceed(s, { base, batch, record, trigger, annotations: options.annotations }, delayMs, undefined);

    const fingerprints = found.map((d) => d.fingerprint);
    const prior = s.strikesOn(fingerprints, batch.key);
    // A parallel duplicate of a call refused in this same step gets the same answer, not a new strike.
    const strikes = prior.sameBatch ? Math.max(0, prior.count - 1) : prior.count;
    const intended = decide({ action: this.action, maxHints: this.maxHints, detection: primary, strikes, transientRetry });
    const facts: GuardFacts = {
      rule: primary.rule,
      toolName,
      before: Math.max(1, primary.count - 1),
      ...(primary.cycleTools ? { cycleTools: primary.cycleTools } : {}),
      sameResultKnown: primary.evidence === 'arguments+result',
    };

    const intervenes = intended === 'hint' || intended === 'abort';
    // In observe mode the strike is counted as if enforced, so the events tell what enforcement would do.
    const strike = intervenes ? strikes + 1 : strikes;
    if (intervenes) s.strike(fingerprints, batch.key, trigger, strike);
    if (!intervenes || !enforce) {
      const d: LoopDetection = { ...primary, ...where, message: decisionMessage(facts, 'ran') };
      const wouldBe = intended === 'hint' ? 'hinted' : intended === 'abort' ? 'blocked' : undefined;
      const action: GuardOutcome = intended === 'delay' && delayMs > 0 ? 'delayed' : 'allowed';
      // A loop the calls keep continuing is reported once per level and verdict, not on every call.
      const newVerdict = s.firstReport(`${d.fingerprint}:${d.level}:${action}:${wouldBe ?? ''}`);
      s.firstReport(`${d.fingerprint}:${d.level}`); // the same loop found again once the call ran is not news
      if (newVerdict || delayMs > 0) {
        this.report({ action, phase: 'before', detection: d, strike, ...(wouldBe ? { wouldBe } : {}), ...(delayMs > 0 ? { delayMs } : {}) });
      }
      return this.proceed(s, { base, batch, record, trigger, annotations: options.annotations }, delayMs, d);
    }

    const count = primary.count + strikes;
    if (intended === 'hint') {
      const d: LoopDetection = { ...primary, ...where, level: 'warning', count, message: decisionMessage(facts, 'hinted') };
      const finalWarning = this.action === 'graduated' || strike >= this.maxHints;
      const hint = this.buildHint(toolName, args, d, hintText(facts, finalWarning, this.stopScope), finalWarning);
      s.addRecord({ ...record, status: 'hinted', detection: d, endTime: now });
      if (span) markSpan(span.span, { action: 'hinted', detection: d, event: true });
      this.report({ action: 'hinted', phase: 'before', detection: d, strike });
      return { action: 'hint', hint, detection: d };
    }
    const d: LoopDetection = { ...primary, ...where, level: 'critical', count, message: decisionMessage(facts, 'blocked') };
    const error = new ToolLoopError(d);
    s.addRecord({ ...record, status: 'blocked', detection: d, endTime: now });
    if (span) markSpan(span.span, { action: 'blocked', detection: d, event: true });
    s.refuse(trigger, d);
    this.stop(s, error);
    this.report({ action: 'blocked', phase: 'before', detection: d, strike });
    return error;
  }

  /** `base`: the call as judged before it ran (arguments already fingerprinted, not kept raw). */
  private proceed(
    s: GuardSession,
    planned: PlannedCall,
    delayMs: number,
    detection: LoopDetection | undefined,
  ): ProceedingCall {
    const { base, batch, record: template, trigger, annotations } = planned;
    const { toolName } = base;
    const startTime = template.startTime + delayMs;
    const record = s.addRecord({ ...template, startTime, ...(delayMs > 0 ? { delayMs } : {}), ...(detection ? { detection } : {}) });
    s.enter(batch);
    let settled = false;
    const finish = (outcome: { result: unknown } | { error: unknown } | undefined): void => {
      if (settled) return;
      settled = true;
      try {
        const batchComplete = s.leave(batch);
        const endTime = this.clock();
        record.endTime = endTime;
        if (!outcome) {
          record.status = 'blocked';
          return;
        }
        if (s !== this.session) return; // reset meanwhile: a call of the previous turn
        // An MCP result with isError is the tool's failure, reported inside a response.
        const settled = 'error' in outcome ? outcome : callOutcome(outcome.result);
        const failed = 'error' in settled;
        const transient = failed ? this.isTransient(settled.error) : undefined;
        record.status = failed ? 'error' : 'ok';
        if (transient !== undefined) record.transient = transient;
        s.finished(trigger, !failed && changesState(annotations, s.unchangedRepeat(trigger)));
        const { outcome: recorded } = buildToolCall(
          this.engine,
          { toolName, ...(failed ? { error: rawError(settled.error) } : { result: settled.result }), startTime, endTime, batch: batch.key, callIndex: base.callIndex },
          log.warn,
        );
        const call: ToolCall = { ...base, outcome: recorded, startTime, endTime: Math.max(startTime, endTime) };
        // Ran with no loop in sight: whatever was refused before, the loop is broken now.
        if (!detection) s.clearStrikes(trigger);
        s.setTransient(trigger, transient);
        for (const d of s.record(call, batchComplete)) this.afterRun(s, d, trigger);
      } catch (e) {
        this.problem('recording a tool outcome', e);
      }
    };
    return {
      action: 'proceed',
      delayMs,
      detection,
      succeeded: (result) => finish({ result }),
      failed: (error) => finish({ error }),
      cancelled: () => finish(undefined),
    };
  }

  /**
   * A loop found once a call ran (its outcome completed the evidence, e.g. different arguments
   * getting the same answer). The call keeps its real result; a critical loop stops the run from
   * the next call on, and `signal` aborts now so the next model call does not happen.
   */
  private afterRun(s: GuardSession, d: LoopDetection, trigger: number): void {
    const stops = d.level === 'critical' && d.mode === 'enforce';
    const fresh = s.firstReport(`${d.fingerprint}:${d.level}`);
    if (stops) s.refuse(trigger, d);
    if (stops && this.stop(s, new ToolLoopError(d))) this.report({ action: 'stopped', phase: 'after', detection: d, strike: 0 });
    else if (fresh) this.report({ action: 'allowed', phase: 'after', detection: d, strike: 0 });
  }

  private stop(s: GuardSession, error: ToolLoopError): boolean {
    return callContained('an abort listener', () => s.stop(error), true);
  }

  private buildHint(toolName: string, args: unknown, detection: LoopDetection, message: string, finalWarning: boolean): H {
    const standard: LoopHint = {
      type: LOOP_HINT_TYPE,
      message,
      toolName,
      kind: detection.kind,
      level: detection.level,
      count: detection.count,
    };
    const custom = this.options.hint;
    if (!custom) return standard as unknown as H;
    return callContained('the hint builder', () => custom({ toolName, arguments: args, detection, message, finalWarning }), standard as unknown as H);
  }

  private isTransient(error: unknown): boolean {
    const judge = this.options.isTransient ?? isTransientError;
    return callContained('isTransient', () => judge(error) === true, false);
  }

  private report(event: GuardEvent): void {
    const callback = this.options.onDecision;
    if (callback) notifyContained('onDecision', () => callback(event));
  }

  private problem(where: string, e: unknown): void {
    reportContained(where, e);
  }
}

/** A call the guard lets run: as judged before it ran, its batch, its record, its trigger (tool + arguments) and the tool's annotations. */
interface PlannedCall {
  readonly base: ToolCall;
  readonly batch: Batch;
  readonly record: CallRecord;
  readonly trigger: Hash;
  readonly annotations: ToolAnnotations | undefined;
}

/** The error as the engine classifies it: type and message, read defensively. */
function rawError(error: unknown): RawError {
  try {
    if (typeof error === 'object' && error !== null) {
      const { name, message } = error as { name?: unknown; message?: unknown };
      return {
        ...(typeof name === 'string' && name.length > 0 ? { type: name } : {}),
        ...(typeof message === 'string' ? { message } : {}),
      };
    }
    return { message: String(error) };
  } catch {
    return {};
  }
}
