"""Calls one tool of an MCP server over stdio with the official Python SDK
and prints its result's content blocks as JSON (for comparing a server with
toolbox re-serving it).

Usage: interop_content.py TOOL COMMAND...
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


async def main():
    tool, command = sys.argv[1], sys.argv[2:]
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(server, mode="legacy") as client:
        result = await client.call_tool(tool, {})
        blocks = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.content]
        print(json.dumps(blocks, sort_keys=True))


asyncio.run(main())
