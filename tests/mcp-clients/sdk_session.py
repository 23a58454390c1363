#!/usr/bin/env python3
"""One session of the official MCP Python SDK (`mcp`) with an MCP server.

    sdk_session.py --budget BYTES [--root URI]... -- SERVER_CMD... < STEPS.json

The e2e tests of `fsctl mcp` (tests/tests/e2e/mcp_clients.rs) run it. STEPS
is a list of {"call": TOOL, "arguments": {...}} (add "error": true for a
call that must be refused) and {"roots": [URI, ...]} (the client's roots
change: roots/list_changed is sent). With --root the client offers MCP
Roots from the start.

What it checks itself, failing with one line on stderr and exit 1:
- every tool has a title, and a plain input schema: one `type` string per
  property, no `null`, no `format`, no unknown parameters allowed;
- every answer the SDK validates against the tool's output schema (it
  raises on a mismatch), and a refused call is one line with isError;
- every successful answer's text and its structured content (compact JSON)
  each fit the byte budget;
- the text carries the structured content: every string and every number
  in it appears in the text.

It prints one JSON line per step: {"call", "isError", "text",
"structured"}, for the test's own oracles; first a line {"tools": [...]}.
"""

import argparse
import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
import mcp.types as types


def fail(msg):
    print(f"sdk_session: {msg}", file=sys.stderr, flush=True)
    sys.stderr.flush()
    os._exit(1)


def check_input_schema(tool, schema):
    text = json.dumps(schema)
    if "null" in text or '"format"' in text:
        fail(f"{tool}: input schema has null or format: {text}")

    def walk(node, at):
        if not isinstance(node, dict):
            return
        if "type" in node and not isinstance(node["type"], str):
            fail(f"{tool}: {at}: type is not one string: {node['type']}")
        if node.get("type") == "object" and "properties" in node:
            if node.get("additionalProperties") is not False:
                fail(f"{tool}: {at}: unknown parameters are not refused")
            for k, v in node["properties"].items():
                if "type" not in v:
                    fail(f"{tool}: {at}.{k}: no type")
                walk(v, f"{at}.{k}")
        if "items" in node:
            walk(node["items"], f"{at}[]")

    walk(schema, "")


def leaves(v):
    if isinstance(v, dict):
        for x in v.values():
            yield from leaves(x)
    elif isinstance(v, list):
        for x in v:
            yield from leaves(x)
    elif isinstance(v, bool):
        return
    elif isinstance(v, (int, float, str)):
        yield v


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=int, required=True)
    ap.add_argument("--root", action="append", default=[])
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    steps = json.load(sys.stdin)
    roots = {"uris": list(a.root)}
    asked = asyncio.Event()

    async def list_roots(context):
        asked.set()
        return types.ListRootsResult(roots=[types.Root(uri=u) for u in roots["uris"]])

    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))
    kwargs = {"list_roots_callback": list_roots} if a.root else {}
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w, **kwargs) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            for t in tools:
                if not t.title:
                    fail(f"{t.name}: no title")
                check_input_schema(t.name, t.input_schema)
                if t.output_schema is None:
                    fail(f"{t.name}: no output schema")
            print(json.dumps({"tools": [t.model_dump(by_alias=True, exclude_none=True) for t in tools]}), flush=True)
            for step in steps:
                if "roots" in step:
                    roots["uris"] = step["roots"]
                    asked.clear()
                    await s.send_roots_list_changed()
                    # The server asks again; from then on its calls wait for the answer.
                    try:
                        await asyncio.wait_for(asked.wait(), 10)
                    except asyncio.TimeoutError:
                        fail("roots/list_changed: the server did not ask for the roots again")
                    print(json.dumps({"roots": step["roots"]}), flush=True)
                    continue
                name, args = step["call"], step.get("arguments", {})
                try:
                    res = await s.call_tool(name, args)
                except Exception as e:  # the SDK's validation, or a protocol error
                    fail(f"{name} {json.dumps(args)}: {type(e).__name__}: {e}")
                text = "\n".join(c.text for c in res.content if getattr(c, "type", "") == "text")
                sc = res.structured_content
                if step.get("error"):
                    if not res.is_error:
                        fail(f"{name} {json.dumps(args)}: expected a refusal, got {text[:300]}")
                    if "\n" in text.strip():
                        fail(f"{name}: a refusal is one line: {text!r}")
                else:
                    if res.is_error:
                        fail(f"{name} {json.dumps(args)}: unexpected error: {text}")
                    if sc is None:
                        fail(f"{name}: no structured content")
                    tb = len(text.encode())
                    sb = len(json.dumps(sc, separators=(",", ":"), ensure_ascii=False).encode())
                    if tb > a.budget or sb > a.budget:
                        fail(f"{name}: {tb} bytes of text, {sb} of structured content; budget {a.budget}")
                    low = text.lower()
                    for v in leaves(sc):
                        s_v = str(v)
                        if isinstance(v, str) and s_v.lower() not in low:
                            fail(f"{name}: the text lacks {s_v!r} of the structured content:\n{text[:2000]}")
                        if not isinstance(v, str) and s_v not in text:
                            fail(f"{name}: the text lacks the number {s_v} of the structured content:\n{text[:2000]}")
                print(json.dumps({"call": name, "isError": bool(res.is_error), "text": text, "structured": sc}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
