/**
 * MCP tool results and tool annotations, as the guard reads them. A `CallToolResult` (what an MCP
 * server answers to `tools/call`, and what MCP tool adapters such as the AI SDK's return from
 * `execute`) reports a tool's failure inside a successful response: `isError: true` with the
 * failure's text as content. The guard counts that as the failure it is, not as a result.
 */

/** The hints an MCP server may declare on a tool (`Tool.annotations`); all are hints, none is trusted for safety alone. */
export interface ToolAnnotations {
  /** The tool does not change its environment. */
  readonly readOnlyHint?: boolean;
  /** A change it makes may destroy something (meaningful when not read-only). */
  readonly destructiveHint?: boolean;
  /** Calling it again with the same arguments changes nothing more (meaningful when not read-only). */
  readonly idempotentHint?: boolean;
}

/** What a finished call is to the engine: a result to fingerprint, or a failure with its message. */
export type CallOutcome = { readonly result: unknown } | { readonly error: { readonly name: string; readonly message: string } };

/** `error.type` the MCP semantic conventions give a `CallToolResult` with `isError: true`. */
export const TOOL_ERROR_TYPE = 'tool_error';

/** Text blocks joined (other blocks are named by their type): what the model reads of a result. */
export function contentText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const block of content) {
    if (typeof block !== 'object' || block === null) continue;
    const { type, text } = block as { type?: unknown; text?: unknown };
    if (typeof text === 'string') parts.push(text);
    else if (typeof type === 'string') parts.push(`[${type}]`);
  }
  return parts.join('\n');
}

/** Is `value` shaped like an MCP `CallToolResult` (an object with a `content` array)? */
export function isCallToolResult(value: unknown): value is { content: unknown[]; structuredContent?: unknown; isError?: unknown } {
  return typeof value === 'object' && value !== null && Array.isArray((value as { content?: unknown }).content);
}

/**
 * The outcome the engine records for a tool's return value: an MCP `CallToolResult` with
 * `isError: true` is a failure whose message is its text; another `CallToolResult` is its
 * `structuredContent` when it has one (the content then usually repeats it as text), else its
 * content; anything else is the result as it is.
 */
export function callOutcome(value: unknown): CallOutcome {
  try {
    if (!isCallToolResult(value)) return { result: value };
    if (value.isError === true) return { error: { name: TOOL_ERROR_TYPE, message: contentText(value.content) } };
    return { result: value.structuredContent !== undefined ? value.structuredContent : value.content };
  } catch {
    return { result: value }; // a hostile proxy: fingerprinted as it is (the fingerprint contains its own failures)
  }
}

/** Declared read-only or not (undefined: not declared, nothing is assumed). */
function declaredReadOnly(annotations: ToolAnnotations | undefined): boolean | undefined {
  const r = annotations?.readOnlyHint;
  return typeof r === 'boolean' ? r : undefined;
}

/**
 * A successful call that may have changed what other calls return: its tool is declared not
 * read-only, and it is not the repeat of an idempotent call (`repeat`: the same tool and
 * arguments ran last time with no change in between, so an idempotent one changes nothing more).
 */
export function changesState(annotations: ToolAnnotations | undefined, repeat: boolean): boolean {
  if (declaredReadOnly(annotations) !== false) return false;
  return !(repeat && annotations?.idempotentHint === true);
}
