"""Starts an MCP server over stdio, lists its tools, prints them whole.

Usage: list_tools_full.py PACKAGE VERSION COMMAND [ARGS...]

Unlike list_tools.py (schemas only), this keeps what a tool search reads:
each tool's name, title, description and inputSchema, beside the package
and version that served them. Environment variables the server insists on
(API keys it only uses when a tool is called) are set by the caller.
"""
import json
import subprocess
import sys
import threading

package, version, command = sys.argv[1], sys.argv[2], sys.argv[3:]
child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
timer = threading.Timer(60, child.kill)
timer.start()


def send(message):
    child.stdin.write(json.dumps(message) + "\n")
    child.stdin.flush()


def answer(id_):
    while True:
        line = child.stdout.readline()
        if not line:
            raise SystemExit(f"{package} closed stdout")
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if message.get("id") == id_:
            return message


send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "toolbox-search-corpus", "version": "1"}}})
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
child.kill()
timer.cancel()
keep = ("name", "title", "description", "inputSchema")
print(json.dumps({
    "package": package,
    "version": version,
    "tools": [{k: t[k] for k in keep if k in t} for t in tools],
}, indent=1, ensure_ascii=False))
