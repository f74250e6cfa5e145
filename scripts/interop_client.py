"""The official Python MCP SDK as a client of toolbox's `mcp_server` example.

Usage: interop_client.py (stdio COMMAND... | http URL) MODE
Prints one `PASS name` or `FAIL name: why` line per check, and the
negotiated protocol version.
"""

import asyncio
import sys

from mcp import Client, StdioServerParameters


def report(ok, name, why=""):
    print(f"PASS {name}" if ok else f"FAIL {name}: {why}", flush=True)


def text_of(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def main():
    kind = sys.argv[1]
    mode = sys.argv[-1]
    if kind == "stdio":
        command = sys.argv[2:-1]
        server = StdioServerParameters(command=command[0], args=command[1:])
    else:
        server = sys.argv[2]
    tag = f"python-{kind}-{mode}"
    async with Client(server, mode=mode) as client:
        version = None
        for attribute in ("protocol_version", "negotiated_protocol_version"):
            version = version or getattr(client, attribute, None)
        session = getattr(client, "session", None)
        for source in (session, client):
            for attribute in ("initialize_result", "discover_result"):
                result = getattr(source, attribute, None) if source is not None else None
                if result is not None and version is None:
                    version = getattr(result, "protocol_version", None) or getattr(
                        result, "supported_versions", None
                    )
        print(f"VERSION {tag} {version}", flush=True)
        tools = await client.list_tools()
        names = sorted(t.name for t in tools.tools)
        report(names == ["crm_get_customer", "math_add", "math_divide"], f"{tag} list", names)
        result = await client.call_tool("math_add", {"a": 40, "b": 2})
        report(not result.is_error and text_of(result) == "42", f"{tag} call", text_of(result))
        result = await client.call_tool("math_divide", {"a": 1, "b": 0})
        report(
            result.is_error and "cannot divide by zero" in text_of(result),
            f"{tag} tool error",
            text_of(result),
        )
        result = await client.call_tool("math_add", {"a": "forty", "b": 2})
        report(
            result.is_error and "invalid arguments at `a`" in text_of(result),
            f"{tag} bad arguments",
            text_of(result),
        )
        try:
            result = await client.call_tool("launch_rocket", {})
            report(
                result.is_error and "Unknown tool" in text_of(result),
                f"{tag} unknown tool",
                text_of(result),
            )
        except Exception as error:  # a JSON-RPC error is what the protocol asks for
            report("Unknown tool" in str(error), f"{tag} unknown tool", str(error))


asyncio.run(main())
