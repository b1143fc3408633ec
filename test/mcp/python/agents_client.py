"""The OpenAI Agents SDK's MCPServerStdio through `loopwatch mcp`, for the e2e test
test/mcp/configs.e2e.test.ts. No model is called: the tools are listed and called the way
the SDK's agent loop calls them (`MCPUtil.invoke_mcp_tool`, which turns a tool result into what
the model reads). It makes the same call five times, then another call, and prints one JSON line
per call: what the model would read; then the refused call once more through `call_tool`, to
show its `isError`.

Usage: python agents_client.py <name> <params as JSON> <tool> <arguments as JSON> <other tool> <its arguments>
"""

import asyncio
import json
import sys

from agents import RunContextWrapper
from agents.mcp import MCPServerStdio, MCPUtil


def model_reads(output) -> str:
    items = output if isinstance(output, list) else [output]
    return "\n".join(item.get("text", "") if isinstance(item, dict) else str(item) for item in items)


async def main() -> None:
    name, params = sys.argv[1], json.loads(sys.argv[2])
    tool_name, arguments, other, other_arguments = sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
    async with MCPServerStdio(name=name, params=params) as server:
        tools = {tool.name: tool for tool in await server.list_tools()}
        print(json.dumps({"tools": sorted(tools)}), flush=True)
        context = RunContextWrapper(context=None)
        for i, (called, args) in enumerate([(tool_name, arguments)] * 5 + [(other, other_arguments)]):
            output = await MCPUtil.invoke_mcp_tool(server, tools[called], context, args)
            print(json.dumps({"call": i + 1, "tool": called, "text": model_reads(output)}), flush=True)
        result = await server.call_tool(tool_name, json.loads(arguments))
        text = "\n".join(getattr(block, "text", f"[{block.type}]") for block in result.content)
        print(json.dumps({"call": 7, "tool": tool_name, "isError": bool(result.is_error), "text": text}), flush=True)


asyncio.run(main())
