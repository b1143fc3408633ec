import type { RawError } from '../detector/error-class.js';
import { errorText, log } from '../otel/diag.js';
import { spanError, toolCallFields } from './attributes.js';
import type { AdapterGate, ConventionAdapter, SpanView, ToolCallFields } from './types.js';

/** Attribute keys tried in order, or a function of the span. */
export type AttributeSource<T> = string | readonly string[] | ((span: SpanView) => T | undefined);

/** Which spans are tool calls. */
export type ToolSpanMatcher =
  /** The span has this attribute (any value). */
  | string
  /** The attribute equals one of these values (or is present, when `equals` is omitted). */
  | { readonly attribute: string; readonly equals?: string | number | boolean | ReadonlyArray<string | number | boolean> }
  /** The span name starts with this string, or matches this expression. */
  | { readonly spanName: string | RegExp }
  | ((span: SpanView) => boolean);

export interface CustomAdapterOptions {
  /** Shown in diagnostics (default `custom`). */
  readonly name?: string;
  readonly toolSpan: ToolSpanMatcher;
  /** Tool name; the span name when none of these yields a non-empty string. */
  readonly toolName?: AttributeSource<string>;
  /** Arguments (JSON string, object, or any value the fingerprint can hash). */
  readonly arguments?: AttributeSource<unknown>;
  readonly result?: AttributeSource<unknown>;
  readonly callId?: AttributeSource<string>;
  /**
   * The failure, if any. Default: span status ERROR, `error.type`, exception events. A function
   * returning `true` marks a failure without details; attribute keys give the error message.
   */
  readonly error?: AttributeSource<RawError | string | boolean>;
  /** Prompt template name; read on every span of the trace (tool spans and their ancestors). */
  readonly promptName?: AttributeSource<string>;
  readonly agentName?: AttributeSource<string>;
}

/**
 * A convention adapter for in-house instrumentation, from a mapping of attribute keys:
 *
 * ```ts
 * customAdapter({ toolSpan: { attribute: 'my.kind', equals: 'tool' }, toolName: 'my.tool',
 *                 arguments: 'my.args', result: 'my.result', promptName: 'my.prompt' })
 * ```
 * Pass it ahead of the built-in adapters: `conventions: [myAdapter, ...defaultAdapters]`. Mapping
 * functions run inside span hooks: an exception from one is contained (that value counts as
 * absent) and reported once through `diag`.
 */
export function customAdapter(options: CustomAdapterOptions): ConventionAdapter {
  const name = options.name ?? 'custom';
  const isTool = compileMatcher(options.toolSpan, name);
  let reported = false;
  const guard = <T>(what: string, fn: () => T, fallback: T): T => {
    try {
      return fn();
    } catch (e) {
      if (!reported) {
        reported = true;
        log.error(`the ${what} mapping of adapter '${name}' threw and was ignored: ${errorText(e)}`);
      }
      return fallback;
    }
  };
  const read = <T>(source: AttributeSource<T> | undefined, span: SpanView, what: string): T | unknown => {
    if (source === undefined) return undefined;
    if (typeof source === 'function') return guard(what, () => source(span), undefined);
    for (const key of typeof source === 'string' ? [source] : source) {
      const v = span.attributes[key];
      if (v !== undefined && v !== null && v !== '') return v;
    }
    return undefined;
  };
  const readString = (source: AttributeSource<string> | undefined, span: SpanView, what: string): string | undefined => {
    const v = read(source, span, what);
    return typeof v === 'string' && v.length > 0 ? v : undefined;
  };

  const adapter: ConventionAdapter = {
    name,
    isToolSpan: (span) => guard('toolSpan', () => isTool(span), false),
    readToolCall(span: SpanView): ToolCallFields | undefined {
      const toolName = readString(options.toolName, span, 'toolName') ?? (span.name.length > 0 ? span.name : undefined);
      if (toolName === undefined) return undefined;
      return toolCallFields(
        toolName,
        read(options.arguments, span, 'arguments'),
        read(options.result, span, 'result'),
        options.error === undefined ? spanError(span) : toRawError(read(options.error, span, 'error')),
        readString(options.callId, span, 'callId'),
      );
    },
    ...(options.promptName !== undefined ? { promptName: (span: SpanView) => readString(options.promptName, span, 'promptName') } : {}),
    ...(options.agentName !== undefined ? { agentName: (span: SpanView) => readString(options.agentName, span, 'agentName') } : {}),
  };
  const gate = customGate(options);
  return gate ? { ...adapter, gate } : adapter;
}

/**
 * The gate of a mapping made of attribute keys and a span-name prefix: what `isToolSpan`,
 * `promptName` and `agentName` can look at. Functions and regular expressions can look at
 * anything, so a mapping with one has no gate (the adapter then sees every span).
 */
function customGate(options: CustomAdapterOptions): AdapterGate | undefined {
  const keys: string[] = [];
  const values: Record<string, readonly unknown[]> = {};
  const namePrefixes: string[] = [];
  const m = options.toolSpan;
  if (typeof m === 'function') return undefined;
  if (typeof m === 'string') keys.push(m);
  else if ('attribute' in m) {
    if (m.equals === undefined) keys.push(m.attribute);
    else values[m.attribute] = Array.isArray(m.equals) ? m.equals : [m.equals];
  } else if ('spanName' in m) {
    if (typeof m.spanName !== 'string') return undefined;
    namePrefixes.push(m.spanName);
  }
  for (const source of [options.promptName, options.agentName]) {
    if (source === undefined) continue;
    if (typeof source === 'function') return undefined;
    keys.push(...(typeof source === 'string' ? [source] : source));
  }
  return { keys, values, namePrefixes };
}

function toRawError(v: unknown): RawError | undefined {
  if (v === undefined || v === null || v === false || v === '') return undefined;
  if (v === true) return {};
  if (typeof v === 'string') return { message: v };
  if (typeof v === 'object') {
    const o = v as { type?: unknown; message?: unknown };
    return {
      ...(typeof o.type === 'string' ? { type: o.type } : {}),
      ...(typeof o.message === 'string' ? { message: o.message } : {}),
    };
  }
  return { message: String(v) };
}

function compileMatcher(m: ToolSpanMatcher, name: string): (span: SpanView) => boolean {
  if (typeof m === 'function') return m;
  if (typeof m === 'string') return (span) => span.attributes[m] !== undefined;
  if ('attribute' in m) {
    const key = m.attribute;
    if (m.equals === undefined) return (span) => span.attributes[key] !== undefined;
    const allowed = new Set<unknown>(Array.isArray(m.equals) ? m.equals : [m.equals]);
    return (span) => allowed.has(span.attributes[key]);
  }
  if ('spanName' in m) {
    const pattern = m.spanName;
    if (typeof pattern === 'string') return (span) => span.name.startsWith(pattern);
    return (span) => {
      pattern.lastIndex = 0;
      return pattern.test(span.name);
    };
  }
  throw new TypeError(`loopwatch: customAdapter '${name}': toolSpan must be an attribute key, { attribute, equals? }, { spanName } or a function`);
}
