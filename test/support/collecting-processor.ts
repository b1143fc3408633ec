import { LoopDetectionSpanProcessor, type LoopDetection, type LoopDetectionSpanProcessorOptions } from '../../src/index.js';

/**
 * A processor whose detections are also collected here, in order; the test's own `onLoop`, if
 * any, still runs (and what it returns or throws still reaches the processor).
 */
export function collectingProcessor(options: LoopDetectionSpanProcessorOptions = {}): { loops: LoopDetectionSpanProcessor; detections: LoopDetection[] } {
  const detections: LoopDetection[] = [];
  const loops = new LoopDetectionSpanProcessor({
    ...options,
    onLoop: (d) => {
      detections.push(d);
      return options.onLoop?.(d);
    },
  });
  return { loops, detections };
}
