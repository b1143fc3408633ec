import { LoopEngine } from '../../src/detector/engine.js';
import type { LoopwatchConfig } from '../../src/detector/config/index.js';
import { buildToolCall } from '../../src/detector/tool-call.js';
import { userMessageHash } from '../../src/detector/user-message.js';
import type { LoopDetection } from '../../src/detector/types.js';

/** One scripted tool call. Times are relative: `idleMs` is the model's think time before it. */
export interface Step {
  readonly tool: string;
  readonly args?: unknown;
  readonly result?: unknown;
  readonly error?: { type?: string; message?: string };
  readonly idleMs?: number;
  readonly durationMs?: number;
  /** The agent (sub-agent) that made the call, as the processor reads it from the agent span. */
  readonly agent?: string;
}

/** What the user says between the agent's calls (the engine hears it before the next call). */
export interface UserSays {
  readonly user: string;
}

/** A step is one call, several calls made in parallel (one batch), or a user message. */
export type ScriptItem = Step | readonly Step[] | UserSays;

export interface RunResult {
  readonly detections: LoopDetection[];
  /** Detections produced by each call, by 1-based call index. */
  readonly byCall: Map<number, LoopDetection[]>;
  /** Call index of the first detection at this level (undefined when none). */
  first(level: 'warning' | 'critical'): number | undefined;
  readonly calls: number;
  /** End time (epoch ms) of a call, by 1-based call index. */
  endOf(callIndex: number): number | undefined;
}

/**
 * Feeds a scripted agent run into a fresh engine trace the way the span processor does: calls in
 * end order, parallel calls sharing a batch, the batch complete when its last call ends.
 */
export function runAgent(script: readonly ScriptItem[], config: LoopwatchConfig = {}, engine = new LoopEngine(config), traceId = 'trace-1'): RunResult {
  const trace = engine.createTrace(traceId);
  const detections: LoopDetection[] = [];
  const byCall = new Map<number, LoopDetection[]>();
  let clock = Date.parse('2026-11-21T10:00:00Z');
  let index = 0;
  const ends = new Map<number, number>();
  script.forEach((item, stepNo) => {
    if ('user' in item) {
      const content = userMessageHash(item.user);
      if (content !== undefined) trace.userMessage(content);
      return;
    }
    const batch: readonly Step[] = Array.isArray(item) ? (item as readonly Step[]) : [item as Step];
    const start = clock + (batch[0]?.idleMs ?? 1_000);
    let end = start;
    const calls = batch.map((s, k) => {
      const callStart = start + k; // parallel calls start within a millisecond of each other
      const callEnd = callStart + (s.durationMs ?? 100);
      end = Math.max(end, callEnd);
      index++;
      ends.set(index, callEnd);
      return { s, callStart, callEnd, callIndex: index };
    });
    calls.sort((a, b) => a.callEnd - b.callEnd);
    calls.forEach((c, k) => {
      const call = buildToolCall(engine, {
        toolName: c.s.tool,
        ...(c.s.args !== undefined ? { arguments: c.s.args } : {}),
        ...(c.s.result !== undefined ? { result: c.s.result } : {}),
        ...(c.s.error ? { error: c.s.error } : {}),
        startTime: c.callStart,
        endTime: c.callEnd,
        batch: `step-${stepNo}`,
        callIndex: c.callIndex,
        spanId: `span-${c.callIndex}`,
        promptName: 'test-prompt',
        ...(c.s.agent !== undefined ? { agentName: c.s.agent } : {}),
      });
      const found = trace.record(call, k === calls.length - 1);
      if (found.length > 0) {
        detections.push(...found);
        byCall.set(c.callIndex, [...(byCall.get(c.callIndex) ?? []), ...found]);
      }
    });
    clock = end;
  });
  return {
    detections,
    byCall,
    calls: index,
    endOf: (callIndex) => ends.get(callIndex),
    first: (level) => detections.find((d) => d.level === level)?.callIndex,
  };
}

/** `n` copies of a step, a batch or a list of steps; or `n` results of `make(i)`. */
export function times<T>(n: number, make: ((i: number) => T) | T): T[] {
  return Array.from({ length: n }, (_, i) => (typeof make === 'function' ? (make as (i: number) => T)(i) : make));
}
