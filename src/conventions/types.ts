import type { ToolCallContent } from '../detector/types.js';
import type { ScopeView } from './scopes.js';

/** A span event as the adapters read it. */
export interface SpanEventView {
  readonly name: string;
  readonly attributes?: Readonly<Record<string, unknown>>;
}

/**
 * The parts of a span that conventions read. Live SDK spans (2.x and 3.x) and spans decoded from
 * OTLP/JSON files both map onto it, so one adapter serves the processor and `loopwatch scan`.
 */
export interface SpanView {
  readonly name: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** 0 unset, 1 ok, 2 error (OpenTelemetry `SpanStatusCode`). */
  readonly status?: { readonly code: number; readonly message?: string };
  readonly events?: readonly SpanEventView[];
  /** The OpenTelemetry API's `SpanKind` (0 internal, 1 server, 2 client, 3 producer, 4 consumer); OTLP's numbers are one higher. */
  readonly kind?: number | undefined;
  /** The instrumentation scope of the tracer that made it (live SDK spans: one object per tracer). */
  readonly instrumentationScope?: ScopeView | undefined;
}

/** What an adapter reads off a finished tool span: the call's content, and its id when the span has one. */
export interface ToolCallFields extends ToolCallContent {
  readonly callId?: string | undefined;
}

/**
 * What an adapter looks at, declared so that spans it can never claim or name are skipped in a
 * few instructions: the processor runs on every span of the app, and almost none are tool spans.
 * A gate is a necessary condition only: a span that passes still goes through the adapters.
 */
export interface AdapterGate {
  /** Attribute keys whose presence (any value) may make the adapter claim or name the span. */
  readonly keys?: readonly string[];
  /** Attribute keys that matter only with one of these values. */
  readonly values?: Readonly<Record<string, readonly unknown[]>>;
  /** Exact span names the adapter claims. */
  readonly names?: readonly string[];
  /** Span-name prefixes the adapter claims. */
  readonly namePrefixes?: readonly string[];
  /**
   * Attribute keys without one of which the adapter's `userMessages` finds nothing;
   * `userMessageEvents`: it may find some in the span's events too. An adapter with
   * `userMessages` that declares neither is asked about every span it could read them from.
   */
  readonly userMessageKeys?: readonly string[];
  readonly userMessageEvents?: boolean;
  /**
   * Every key above is one that only agent, model and tool instrumentations write, never an
   * instrumentation of a library call (`scopes.ts`), whose spans are then not looked at for them.
   * The built-in adapters say so; one that does not (a custom mapping may name any key) makes the
   * gate look at every span's keys.
   */
  readonly agentKeysOnly?: boolean;
}

/**
 * One convention (gen_ai semantic conventions, AI SDK, OpenInference, ...).
 * `isToolSpan` runs on every span start and end, so it must be a few property reads.
 */
export interface ConventionAdapter {
  readonly name: string;
  /** Is this a tool execution span? At start the attributes may still be incomplete. */
  isToolSpan(span: SpanView): boolean;
  /** Reads the call off a span that is ending (or ended). */
  readToolCall(span: SpanView): ToolCallFields | undefined;
  /** Prompt template name carried by any span of this convention (a tool span or an ancestor). */
  promptName?(span: SpanView): string | undefined;
  /** Agent name carried by any span of this convention. */
  agentName?(span: SpanView): string | undefined;
  /**
   * The text of the user messages a span of this dialect records (a model call's input, a
   * user-message event), oldest first; undefined when it records none (see `user-messages.ts`).
   */
  userMessages?(span: SpanView): readonly string[] | undefined;
  /**
   * The attributes and span names this adapter looks at: a span with none of them is skipped
   * without calling the adapter. Adapters without a gate see every span (and so does every
   * adapter of a list that holds one without).
   */
  readonly gate?: AdapterGate;
}
