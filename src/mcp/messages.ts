/**
 * The JSON-RPC messages of MCP, as far as the proxy reads them. It parses a message only to read
 * what it needs (a method, an id, a tool call's name, arguments and `_meta`, a result) and relays
 * the bytes it received; so these are views onto parsed values, checked field by field.
 */

export type JsonRpcId = string | number;

/** An object with string keys (what every JSON-RPC message is). */
export type JsonObject = Record<string, unknown>;

export const METHOD_TOOLS_CALL = 'tools/call';
export const METHOD_TOOLS_LIST = 'tools/list';
export const METHOD_INITIALIZE = 'initialize';
export const METHOD_CANCELLED = 'notifications/cancelled';

/** The methods the proxy reads in a client's messages, as bytes: a message that names none of them is relayed unparsed. */
const CLIENT_NEEDLES: readonly Buffer[] = needles([METHOD_TOOLS_CALL, METHOD_TOOLS_LIST, METHOD_INITIALIZE, METHOD_CANCELLED]);
/** The members of a response: a server's message that names neither is relayed unparsed. */
const RESPONSE_NEEDLES: readonly Buffer[] = needles(['result', 'error']);

function needles(names: readonly string[]): Buffer[] {
  return names.map((n) => Buffer.from(`"${n}"`));
}

function namesAny(message: Buffer, among: readonly Buffer[]): boolean {
  for (const needle of among) if (message.indexOf(needle) !== -1) return true;
  return false;
}

/** Does a client's message name a method the proxy reads? (A cheap test before parsing; a false positive only costs a parse.) */
export function clientMessageMatters(message: Buffer): boolean {
  return namesAny(message, CLIENT_NEEDLES);
}

/** Could a server's message be a response (or a batch holding one)? The same cheap test: notifications and requests do not name those members, unless in their data. */
export function serverMessageMayRespond(message: Buffer): boolean {
  return namesAny(message, RESPONSE_NEEDLES);
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The parsed message, or undefined when the text is not JSON. */
export function parseJson(bytes: Buffer | string): unknown {
  try {
    return JSON.parse(typeof bytes === 'string' ? bytes : bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isId(v: unknown): v is JsonRpcId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

/** A request: a method and an id. */
export interface RequestView {
  readonly method: string;
  readonly id: JsonRpcId;
  readonly params: JsonObject | undefined;
}

export function asRequest(msg: unknown): RequestView | undefined {
  if (!isObject(msg) || typeof msg.method !== 'string' || !isId(msg.id)) return undefined;
  return { method: msg.method, id: msg.id, params: isObject(msg.params) ? msg.params : undefined };
}

/** A notification: a method and no id. */
export function asNotification(msg: unknown): { readonly method: string; readonly params: JsonObject | undefined } | undefined {
  if (!isObject(msg) || typeof msg.method !== 'string' || 'id' in msg) return undefined;
  return { method: msg.method, params: isObject(msg.params) ? msg.params : undefined };
}

/** A response: an id, and a result or an error (a message with a method is a request, whatever its id). */
export type ResponseView =
  | { readonly id: JsonRpcId; readonly result: unknown; readonly error?: undefined }
  | { readonly id: JsonRpcId; readonly result?: undefined; readonly error: { readonly code: number | undefined; readonly message: string } };

export function asResponse(msg: unknown): ResponseView | undefined {
  if (!isObject(msg) || 'method' in msg || !isId(msg.id)) return undefined;
  if ('error' in msg) {
    const e = isObject(msg.error) ? msg.error : {};
    return { id: msg.id, error: { code: typeof e.code === 'number' ? e.code : undefined, message: typeof e.message === 'string' ? e.message : '' } };
  }
  if ('result' in msg) return { id: msg.id, result: msg.result };
  return undefined;
}

/** Map key of an id: 1 and "1" are different ids. */
export function idKey(id: JsonRpcId): string {
  return typeof id === 'number' ? `n${id}` : `s${id}`;
}

/** A `tools/call` request's parts. */
export interface ToolCallRequest {
  readonly id: JsonRpcId;
  readonly name: string;
  readonly arguments: unknown;
  /** `params._meta` (trace context, progress token), when present. */
  readonly meta: JsonObject | undefined;
}

export function asToolCall(request: RequestView): ToolCallRequest | undefined {
  const p = request.params;
  if (request.method !== METHOD_TOOLS_CALL || !p || typeof p.name !== 'string') return undefined;
  return { id: request.id, name: p.name, arguments: p.arguments, meta: isObject(p._meta) ? p._meta : undefined };
}

/** A JSON-RPC response carrying an MCP `CallToolResult` with `isError: true`: what the proxy answers itself. */
export function toolErrorResponse(id: JsonRpcId, text: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }], isError: true } });
}
