import type { LoopDetection, LoopKind } from './detector/types.js';

/** The reason an `abortSignal()` is aborted, and what the guard throws in abort mode. */
export class ToolLoopError extends Error {
  override readonly name = 'ToolLoopError';
  readonly toolName: string;
  readonly count: number;
  readonly kind: LoopKind;
  readonly detection: LoopDetection;

  constructor(detection: LoopDetection) {
    super(`Tool-call loop stopped by loopwatch: ${detection.message}`);
    this.toolName = detection.toolName;
    this.count = detection.count;
    this.kind = detection.kind;
    this.detection = detection;
  }
}
