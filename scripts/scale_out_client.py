"""The official Python SDK driving many calls through a load balancer in
front of toolbox's `mcp_server --http` processes.

Usage: scale_out_client.py URL CALLS CONCURRENCY MODE
MODE is a protocol version to pin (`2026-07-28`: stateless, no handshake,
every request on its own) or `legacy` (the `2025-11-25` handshake and a
session, which needs a sticky balancer).

Each of CONCURRENCY clients calls `math_add` with its own operands and
checks every answer. Prints `PASS`/`FAIL` lines and one
`RATE calls calls_per_second` line.
"""

import asyncio
import sys
import time

from mcp import Client


async def worker(url, mode, index, calls, wrong):
    async with Client(url, mode=mode) as client:
        for n in range(calls):
            a, b = index * 100_000 + n, n
            result = await client.call_tool("math_add", {"a": a, "b": b})
            text = "\n".join(getattr(c, "text", "") for c in result.content)
            if result.is_error or text != str(a + b):
                wrong.append(f"{a}+{b} answered {text!r} (error: {result.is_error})")


async def main():
    url, calls, concurrency, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    per_client = [calls // concurrency + (1 if i < calls % concurrency else 0) for i in range(concurrency)]
    wrong = []
    started = time.perf_counter()
    outcomes = await asyncio.gather(
        *(worker(url, mode, i, n, wrong) for i, n in enumerate(per_client)), return_exceptions=True
    )
    elapsed = time.perf_counter() - started
    failures = [repr(o)[:300] for o in outcomes if isinstance(o, BaseException)]
    print(f"RATE {calls} {calls / elapsed:.1f}", flush=True)
    if failures:
        print(f"FAIL {mode} clients: {len(failures)} failed, first: {failures[0]}", flush=True)
    if wrong:
        print(f"FAIL {mode} answers: {len(wrong)} of {calls} wrong, first: {wrong[0]}", flush=True)
    if not failures and not wrong:
        print(f"PASS {mode} {calls} calls answered correctly", flush=True)


asyncio.run(main())
