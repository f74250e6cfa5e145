"""The official Python SDK calling toolbox's `mcp_server --token` over
Streamable HTTP: refused without the token, served with it.

Usage: interop_token.py URL TOKEN
"""

import asyncio
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def report(ok, name, why=""):
    print(f"PASS {name}" if ok else f"FAIL {name}: {why}", flush=True)


async def main():
    url, token = sys.argv[1], sys.argv[2]
    # Without the token the SDK cannot connect, and the server said why.
    try:
        async with Client(url, mode="legacy") as client:
            await client.list_tools()
        report(False, "python-token refused without a token", "it was served")
    except BaseException as error:  # noqa: BLE001 - failing to connect is the point
        report("MCPError" in repr(error), "python-token refused without a token", repr(error)[:200])
    async with create_mcp_http_client() as bare:
        response = await bare.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                   headers={"Accept": "application/json, text/event-stream"})
        challenge = response.headers.get("www-authenticate", "")
        report(response.status_code == 401 and "resource_metadata=" in challenge,
               "python-token 401 names the metadata", f"{response.status_code} {challenge}")
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        tools = await client.list_tools()
        names = sorted(t.name for t in tools.tools)
        report("math_add" in names, "python-token list with the token", names)
        result = await client.call_tool("math_add", {"a": 40, "b": 2})
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        report(not result.is_error and text == "42", "python-token call with the token", text)


asyncio.run(main())
