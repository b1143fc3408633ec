import { readUserMessages } from '../conventions/index.js';
import type { ConventionAdapter } from '../conventions/types.js';
import type { TraceDetector } from '../detector/trace-detector.js';
import { userMessageHash } from '../detector/user-message.js';
import type { Hash } from '../fingerprint/hash.js';
import { START_QUANTUM_MS } from '../sequence/call-sequence.js';
import type { PendingCall, UserInput } from './trace-state.js';
import type { ReplaySpan } from './types.js';

/**
 * A trace's user inputs, told to the engine in the order the live processor heard them: it hears a
 * model call's input when the model call ends and records a tool call when it ends, so by end
 * time; within the start quantum (a tool started in the millisecond its model call ended may seem
 * to end first, as may a model call started in the millisecond a tool ended), by arrival, which is
 * the order spans ended in.
 */
export class HeardInputs {
  private readonly inputs: UserInput[];
  private readonly told: boolean[];
  /** Every input before it has been told. */
  private next = 0;

  constructor(inputs: readonly UserInput[]) {
    this.inputs = [...inputs].sort((a, b) => a.end - b.end || a.seq - b.seq);
    this.told = new Array<boolean>(this.inputs.length).fill(false);
  }

  /** Tells `detector` every input heard before the call `c` was recorded. */
  before(c: PendingCall, detector: TraceDetector): void {
    const inputs = this.inputs;
    for (let u = inputs[this.next]; u !== undefined && (this.told[this.next] === true || u.end < c.end - START_QUANTUM_MS); u = inputs[++this.next]) {
      if (this.told[this.next] !== true) this.tell(this.next, detector);
    }
    for (let k = this.next; k < inputs.length; k++) {
      const u = inputs[k] as UserInput;
      if (u.end > c.end + START_QUANTUM_MS) break;
      if (this.told[k] !== true && u.seq < c.seq) this.tell(k, detector);
    }
  }

  private tell(k: number, detector: TraceDetector): void {
    this.told[k] = true;
    for (const m of this.inputs[k]?.messages ?? []) detector.userMessage(m);
  }
}

/** The user messages a span records, as the engine hears them; undefined when it records none. */
export function userInputOf(adapters: readonly ConventionAdapter[], span: ReplaySpan, seq: number): UserInput | undefined {
  const texts = readUserMessages(adapters, span);
  if (texts === undefined) return undefined;
  const messages: Hash[] = [];
  for (const text of texts) {
    const h = userMessageHash(text);
    if (h !== undefined) messages.push(h);
  }
  return messages.length > 0 ? { end: span.endTime, seq, messages } : undefined;
}

