import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  GEN_AI_OPERATION_EXECUTE_TOOL,
  nonEmpty,
  spanError,
  toolCallFields,
} from './attributes.js';
import type { ConventionAdapter, SpanView, ToolCallFields } from './types.js';

/** OpenTelemetry MCP semantic conventions (development status). */
export const ATTR_MCP_METHOD_NAME = 'mcp.method.name';
export const ATTR_MCP_SESSION_ID = 'mcp.session.id';
export const MCP_METHOD_TOOLS_CALL = 'tools/call';
/** Span names are `{mcp.method.name} {target}`: `tools/call get-weather`. */
const TOOLS_CALL_SPAN_PREFIX = `${MCP_METHOD_TOOLS_CALL} `;
/** `SpanKind.SERVER` of the OpenTelemetry API (OTLP numbers kinds one higher; decoders convert). */
const SPAN_KIND_SERVER = 1;

/**
 * MCP `tools/call` spans as the OpenTelemetry MCP conventions describe them (`mcp.method.name =
 * tools/call`, `gen_ai.tool.name`, span name `tools/call {tool}`), from MCP client and server
 * instrumentations and from `loopwatch mcp`. Both sides of one call may be in a trace: the
 * client's span (CLIENT) and the server's (SERVER, its child through `params._meta`). The
 * conventions mark the tool call with `gen_ai.operation.name = execute_tool`; a span that says
 * nothing of it is the call unless it is the server side, whose client span is the call (that is
 * how `loopwatch mcp` writes a call whose client propagates its trace context, so the call is
 * counted once). Before the gen_ai adapter in the list, so an MCP span is read here even when it
 * also carries the gen_ai keys.
 */
export const mcpAdapter: ConventionAdapter = {
  name: 'mcp',

  isToolSpan(span: SpanView): boolean {
    if (span.attributes[ATTR_MCP_METHOD_NAME] !== MCP_METHOD_TOOLS_CALL) return false;
    const operation = span.attributes[ATTR_GEN_AI_OPERATION_NAME];
    if (operation !== undefined) return operation === GEN_AI_OPERATION_EXECUTE_TOOL;
    return span.kind !== SPAN_KIND_SERVER;
  },

  readToolCall(span: SpanView): ToolCallFields | undefined {
    const attrs = span.attributes;
    const toolName = nonEmpty(attrs[ATTR_GEN_AI_TOOL_NAME]) ?? toolNameFromSpanName(span.name);
    if (toolName === undefined) return undefined;
    return toolCallFields(toolName, attrs[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS], attrs[ATTR_GEN_AI_TOOL_CALL_RESULT], spanError(span), nonEmpty(attrs[ATTR_GEN_AI_TOOL_CALL_ID]));
  },

  gate: { values: { [ATTR_MCP_METHOD_NAME]: [MCP_METHOD_TOOLS_CALL] }, agentKeysOnly: true },
};

function toolNameFromSpanName(name: string): string | undefined {
  if (!name.startsWith(TOOLS_CALL_SPAN_PREFIX)) return undefined;
  const rest = name.slice(TOOLS_CALL_SPAN_PREFIX.length).trim();
  return rest.length > 0 ? rest : undefined;
}
