#!/usr/bin/env python3
"""A minimal MCP stdio client that times tool calls.

    benches/mcp_client.py --calls CALLS.json [--repeat 3] [--timeout 600] -- SERVER_CMD...

CALLS.json is a list of {"label": ..., "name": TOOL, "arguments": {...}}.
Starts the server, sends initialize and notifications/initialized, then each
call `repeat` times in turn, and prints one JSON object per call:
label, tool, seconds (every run), median, response_bytes (the whole JSON-RPC
line the client receives), text_bytes (the text content, what a model reads),
structured_bytes, is_error, and count (paths or results in the answer, when
it can tell). No dependencies beyond the standard library.
"""

import argparse
import json
import queue
import statistics
import subprocess
import sys
import threading
import time


def reader(stream, q):
    for line in iter(stream.readline, b""):
        q.put(line)
    q.put(None)


def count_of(result):
    sc = result.get("structuredContent") or {}
    for key in ("total", "entries"):
        if isinstance(sc.get(key), int):
            return sc[key]
    text = "".join(c.get("text", "") for c in result.get("content", []))
    if isinstance(sc.get("content"), str):  # the reference server
        text = sc["content"]
    if text.lstrip().startswith("["):
        try:
            tree = json.loads(text)
        except ValueError:
            return None

        def n(nodes):
            return sum(1 + n(x.get("children") or []) for x in nodes)

        return n(tree)
    if text.strip() == "No matches found":
        return 0
    return len([l for l in text.splitlines() if l.strip()])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    calls = json.load(open(a.calls))
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    q = queue.Queue()
    threading.Thread(target=reader, args=(p.stdout, q), daemon=True).start()
    next_id = [0]

    def send(msg):
        p.stdin.write(json.dumps(msg).encode() + b"\n")
        p.stdin.flush()

    def request(method, params):
        next_id[0] += 1
        rid = next_id[0]
        send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + a.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{method}: no answer in {a.timeout} s")
            line = q.get(timeout=left)
            if line is None:
                raise EOFError(f"{method}: the server closed stdout")
            msg = json.loads(line)
            if "method" in msg and "id" in msg:  # a request to us: decline
                send({"jsonrpc": "2.0", "id": msg["id"],
                      "error": {"code": -32601, "message": "not supported"}})
                continue
            if msg.get("id") == rid:
                return msg, len(line)

    request("initialize", {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "fsindex-bench", "version": "0"},
    })
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for c in calls:
        secs = []
        last = None
        size = 0
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            try:
                msg, size = request("tools/call", {"name": c["name"], "arguments": c["arguments"]})
            except (TimeoutError, queue.Empty) as e:
                print(json.dumps({"label": c["label"], "tool": c["name"], "error": str(e)}), flush=True)
                p.kill()
                return
            secs.append(time.perf_counter() - t0)
            last = msg
        result = last.get("result") or {}
        text = "".join(x.get("text", "") for x in result.get("content", []))
        sc = result.get("structuredContent")
        print(json.dumps({
            "label": c["label"],
            "tool": c["name"],
            "seconds": secs,
            "median": statistics.median(secs),
            "response_bytes": size,
            "text_bytes": len(text.encode()),
            "structured_bytes": len(json.dumps(sc, separators=(",", ":")).encode()) if sc is not None else 0,
            "is_error": bool(result.get("isError")) or "error" in last,
            "count": count_of(result),
        }), flush=True)
    p.stdin.close()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()


if __name__ == "__main__":
    sys.exit(main())
