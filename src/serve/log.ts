import type { LoopDetection } from '../detector/types.js';
import { loopEventAttributes } from '../otel/event-attributes.js';

export type LogFormat = 'human' | 'json';
export const LOG_FORMATS: readonly LogFormat[] = ['human', 'json'];
export type LogLevel = 'info' | 'warn' | 'error';

/**
 * serve's log on stderr: one line per event, human (`loopwatch serve: warn: ...`) or JSON (one
 * object per line, for log shippers). A detection is one line with the contract's event
 * attributes (names, counts, fingerprint: never arguments or results).
 */
export class ServeLog {
  constructor(
    private readonly format: LogFormat,
    private readonly write: (line: string) => void,
  ) {}

  log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
    if (this.format === 'json') this.write(JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields }));
    else this.write(`loopwatch serve: ${level === 'info' ? '' : `${level}: `}${message}`);
  }

  detection(d: LoopDetection): void {
    if (this.format === 'json') {
      this.log('warn', 'loop.detected', { trace_id: d.traceId, span_id: d.spanId, ...loopEventAttributes(d) });
      return;
    }
    const where = [`trace ${d.traceId}`, `span ${d.spanId}`, `call ${d.callIndex}`, ...(d.promptName !== undefined ? [`prompt ${d.promptName}`] : [])].join(', ');
    this.write(`loopwatch serve: loop: ${d.level} ${d.kind} of ${d.toolName} ×${d.count} (${where}): ${d.message}`);
  }
}
