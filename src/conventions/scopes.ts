/**
 * The instrumentation scopes whose spans no built-in convention reads: OpenTelemetry JS's own
 * instrumentations of clients, databases and the runtime. They make a span around one library
 * call, write only their own semantic conventions' keys (http.*, url.*, db.*, server.*, ...) and
 * hand no user code the span as the active one, so nothing of an agent (a gen_ai, tool, MCP or
 * framework key) is ever written on it. Most of what an agent app traces besides its model and tool
 * calls is theirs: the HTTP calls under each model call, the database and file reads.
 *
 * Why a list of names and not a decision learned from a scope's first spans: a scope that carried
 * no agent key so far says nothing about its next span (an app's own tracer may start a database
 * span first and tool spans later), and a span whose keys are not looked at cannot show that it
 * was one after all. A name on this list is a fact about the instrumentation, not a guess from its
 * history. Not on it: instrumentations that write gen_ai keys on some of their spans (the AWS
 * SDK's, on Bedrock model calls, with their token usage).
 */
const LIBRARY_CALL_SCOPES: readonly string[] = [
  '@opentelemetry/instrumentation-undici',
  '@opentelemetry/instrumentation-fetch',
  '@opentelemetry/instrumentation-dns',
  '@opentelemetry/instrumentation-net',
  '@opentelemetry/instrumentation-fs',
  '@opentelemetry/instrumentation-pg',
  '@opentelemetry/instrumentation-mysql',
  '@opentelemetry/instrumentation-mysql2',
  '@opentelemetry/instrumentation-tedious',
  '@opentelemetry/instrumentation-oracledb',
  '@opentelemetry/instrumentation-knex',
  '@opentelemetry/instrumentation-mongodb',
  '@opentelemetry/instrumentation-mongoose',
  '@opentelemetry/instrumentation-redis',
  '@opentelemetry/instrumentation-redis-4',
  '@opentelemetry/instrumentation-ioredis',
  '@opentelemetry/instrumentation-memcached',
  '@opentelemetry/instrumentation-cassandra-driver',
];

/**
 * Instrumentations of both sides of a protocol: their client spans are library calls like the
 * above, their server spans hold the app's handler (user code may write an agent's name on the
 * active span there), so only their client spans are skipped.
 */
const CLIENT_SIDE_SCOPES: readonly string[] = ['@opentelemetry/instrumentation-http', '@opentelemetry/instrumentation-grpc'];

/** The OpenTelemetry API's `SpanKind.CLIENT`. */
const CLIENT_KIND = 2;

/** Scopes told apart at most: an app has a few dozen; past this the table starts again. */
const MAX_SCOPES = 256;

/** What decides, per scope: all its spans are library calls, only its client spans, or none. */
type ScopeRole = typeof OTHER | typeof LIBRARY_CALLS | typeof CLIENT_SIDE;
const OTHER = 0;
const LIBRARY_CALLS = 1;
const CLIENT_SIDE = 2;

/** An instrumentation scope as the SDK's spans carry it (2.x and 3.x: one object per tracer). */
export interface ScopeView {
  readonly name: string;
}

/**
 * Decides, once per instrumentation scope, whether its spans are library calls that no built-in
 * convention reads (see `LIBRARY_CALL_SCOPES`). A span carries the scope object of the tracer
 * that made it, so the spans of one scope are told by identity: the last scope asked about is
 * compared first (spans of one kind come in runs), then a bounded table.
 */
export class LibraryCallScopes {
  private readonly roles = new Map<ScopeView, ScopeRole>();
  private lastScope: ScopeView | undefined;
  private lastRole: ScopeRole = OTHER;

  /** Whether a span of `scope` and `kind` is a library call no built-in convention reads. */
  isLibraryCall(scope: ScopeView | undefined, kind: number | undefined): boolean {
    if (scope === undefined) return false;
    let role: ScopeRole | undefined;
    if (scope === this.lastScope) role = this.lastRole;
    else {
      role = this.roles.get(scope);
      if (role === undefined) {
        role = roleOf(scope.name);
        if (this.roles.size >= MAX_SCOPES) this.roles.clear();
        this.roles.set(scope, role);
      }
      this.lastScope = scope;
      this.lastRole = role;
    }
    return role === LIBRARY_CALLS || (role === CLIENT_SIDE && kind === CLIENT_KIND);
  }
}

function roleOf(name: string): ScopeRole {
  if (LIBRARY_CALL_SCOPES.includes(name)) return LIBRARY_CALLS;
  return CLIENT_SIDE_SCOPES.includes(name) ? CLIENT_SIDE : OTHER;
}
