"""Starts an MCP server over stdio, lists its tools, prints a corpus fixture.

Usage: list_tools.py SERVER VERSION COMMAND [ARGS...]
"""
import json
import subprocess
import sys

server, version, command = sys.argv[1], sys.argv[2], sys.argv[3:]
child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def send(message):
    child.stdin.write(json.dumps(message) + "\n")
    child.stdin.flush()


def answer(id_):
    while True:
        line = child.stdout.readline()
        if not line:
            raise SystemExit(f"{server} closed stdout")
        message = json.loads(line)
        if message.get("id") == id_:
            return message


send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "toolbox-corpus", "version": "1"}}})
answer(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
tools, cursor, id_ = [], None, 2
while True:
    send({"jsonrpc": "2.0", "id": id_, "method": "tools/list", "params": {"cursor": cursor} if cursor else {}})
    result = answer(id_)["result"]
    tools += result["tools"]
    cursor = result.get("nextCursor")
    id_ += 1
    if not cursor:
        break
child.terminate()
print(json.dumps({
    "server": server,
    "version": version,
    "tools": [{"name": t["name"], "inputSchema": t["inputSchema"]} for t in tools],
}, indent=1))
