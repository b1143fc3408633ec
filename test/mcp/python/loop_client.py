"""A Python MCP client (the official `mcp` SDK) through `loopwatch mcp` over stdio, for the e2e
test test/mcp/python-client.e2e.test.ts. It makes the same failing call five times, then another
call, and prints one JSON line per call: what the model would read (the text) and isError.

Usage: python loop_client.py <tool> <arguments as JSON> <other tool> <its arguments> -- <command> [args...]
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result) -> str:
    return "\n".join(getattr(block, "text", f"[{block.type}]") for block in result.content)


async def main() -> None:
    tool, arguments, other, other_arguments = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
    command = sys.argv[sys.argv.index("--") + 1 :]
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            print(json.dumps({"tools": [t.name for t in tools.tools]}), flush=True)
            for i in range(5):
                result = await session.call_tool(tool, arguments)
                print(json.dumps({"call": i + 1, "tool": tool, "isError": bool(result.is_error), "text": text_of(result)}), flush=True)
            result = await session.call_tool(other, other_arguments)
            print(json.dumps({"call": 6, "tool": other, "isError": bool(result.is_error), "text": text_of(result)}), flush=True)


asyncio.run(main())
