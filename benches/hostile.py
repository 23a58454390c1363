#!/usr/bin/env python3
"""Memory of fsindexd over a hostile run: idle RSS, a run of 232 malformed
and oversized requests, and RSS after (issue 30: "17 MB to 326 MB, and
stayed there").

    benches/hostile.py [--tree DIR] [--entries N] [--bins DIR]

Makes a tree with benches/mktree.py (200,000 entries by default) unless
--tree names one, starts a daemon on it in a fresh FSINDEX_HOME, reads
VmRSS once it is ready and idle, then sends, over raw gRPC (grpcio, bodies
as bytes, so malformed ones go out as they are):

     48 malformed bodies     random bytes, truncated and bit-flipped messages, every method
     40 hostile queries      10,000 negations, 16 KiB terms, 65 terms, nested regexes...
     40 oversized answers    search '*' --limit 0, du --all --top 0, tree depth 64 with
                             no child limit, map with a budget of 4 billion tokens
     40 huge paths           80 KB paths to Stat, List, DiskUsage, Tree, FsMap
     40 readers that never read   search '*' --limit 0 streams left unread
     24 subscriptions        held open through the run
    ---
    232

samples VmRSS every 50 ms (the peak), ends the unread streams and
subscriptions, waits for the rescans the run asked for to end and 6 s more
(the daemon trims freed memory 2-4 s after queries stop) and reads VmRSS
again, and 10 s later (tokio ends idle blocking threads, and their stacks,
10 s after their last job), with `fsctl status`'s memory line.
Exits 1 when the RSS after is over 1.5x the idle RSS.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field_bytes(n, b):
    return varint(n << 3 | 2) + varint(len(b)) + b


def field_int(n, v):
    return varint(n << 3) + varint(v)


def anon_maps(pid, top=8):
    """The largest resident anonymous mappings: [heap] is glibc's main
    arena, unnamed ones of up to 64 MiB its other arenas, small unnamed
    ones thread stacks."""
    maps, cur = [], None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split()
            if "-" in parts[0] and len(parts) >= 5 and ":" not in parts[0]:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                cur = [parts[5] if len(parts) > 5 else "anon", (hi - lo) >> 10, 0]
                maps.append(cur)
            elif parts[0] == "Anonymous:" and cur is not None:
                cur[2] = int(parts[1])
    maps = [m for m in maps if m[2] > 0]
    maps.sort(key=lambda m: -m[2])
    return ", ".join(f"{n} {r >> 10} of {v >> 10} MiB" for n, v, r in maps[:top])


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


METHODS = [
    "Status", "Search", "DiskUsage", "Rescan", "Roots", "Verify", "Subscribe",
    "Stat", "List", "Tree", "Duplicates", "FsMap", "Reload",
]
STREAMING = {"Search", "Rescan", "Verify", "Subscribe", "Duplicates"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree")
    ap.add_argument("--entries", type=int, default=200_000)
    ap.add_argument("--bins", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release"))
    ap.add_argument("--seed", type=int, default=30)
    a = ap.parse_args()
    rng = random.Random(a.seed)

    work = tempfile.mkdtemp(prefix="fsindex-hostile-")
    tree = a.tree
    if not tree:
        tree = os.path.join(work, "tree")
        subprocess.run([sys.executable, os.path.join(HERE, "mktree.py"), "--entries",
                        str(a.entries), "--out", tree], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    tree = os.path.abspath(tree)
    home = os.path.join(work, "home")
    os.makedirs(home)
    env = dict(os.environ, FSINDEX_HOME=home, FSINDEX_NO_SPAWN="1")
    daemon = subprocess.Popen([os.path.join(a.bins, "fsindexd"), "--root", tree], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    fsctl = os.path.join(a.bins, "fsctl")

    def status():
        o = subprocess.run([fsctl, "status", "--json"], env=env, capture_output=True)
        return json.loads(o.stdout) if o.returncode == 0 else None

    try:
        while True:
            s = status()
            if s and s["state"] == "ready":
                break
            if daemon.poll() is not None:
                sys.exit("fsindexd exited")
            time.sleep(0.1)
        time.sleep(5)
        idle = rss_mib(daemon.pid)
        print(f"tree {tree}: {s['entries']} entries; idle RSS {idle:.1f} MiB")

        peak = [idle]
        sampling = [True]

        def sample():
            while sampling[0]:
                peak[0] = max(peak[0], rss_mib(daemon.pid))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample)
        sampler.start()

        sock = os.path.join(home, "fsindexd.sock")
        ch = grpc.insecure_channel(f"unix://{sock}", options=[
            ("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)])
        outcomes = {}

        def call(method, body, read=True):
            path = f"/fsindex.v1.Index/{method}"
            try:
                if method in STREAMING:
                    it = ch.unary_stream(path)(body, timeout=120)
                    if not read:
                        return it
                    for _ in it:
                        if method == "Subscribe":
                            it.cancel()
                            break
                    code = "OK"
                else:
                    ch.unary_unary(path)(body, timeout=120)
                    code = "OK"
            except grpc.RpcError as e:
                code = e.code().name
            outcomes[code] = outcomes.get(code, 0) + 1
            return None

        t0 = time.time()
        sent = 0
        # 48 malformed bodies.
        for i in range(48):
            m = METHODS[i % len(METHODS)]
            kind = i % 4
            if kind == 0:
                body = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 4096)))
            elif kind == 1:
                body = field_bytes(1, b"/" + b"x" * 5000)[: rng.randrange(1, 5000)]
            elif kind == 2:
                b = bytearray(field_bytes(1, tree.encode()) + field_int(2, 2**64 - 1))
                for _ in range(4):
                    j = rng.randrange(len(b))
                    b[j] ^= 1 << rng.randrange(8)
                body = bytes(b)
            else:
                body = field_int(2, 2**64 - 1) + field_int(3, 2**63) + field_bytes(99, b"\xff" * 3000)
            call(m, body)
            sent += 1
        # 40 hostile queries.
        queries = ["!" * 10_000 + "a", "a" * 16_385, " ".join(["x"] * 65), "*a" * 33,
                   "regex:" + "(" * 2000 + "a" + ")" * 2000, "regex:a{1000}{1000}",
                   "size:>99999999999999999999tb", "dm:2025-13-45", "a|" * 5000, "\"" * 3]
        for i in range(40):
            call("Search", field_bytes(1, queries[i % len(queries)].encode()))
            sent += 1
        # 40 oversized answers.
        t = tree.encode()
        big = [
            ("Search", field_bytes(1, b"*")),
            ("DiskUsage", field_bytes(1, t) + field_int(6, 1)),
            ("Tree", field_bytes(1, t) + field_int(2, 64) + field_int(3, 2**32 - 1)),
            ("FsMap", field_bytes(1, t) + field_int(2, 2**32 - 1)),
        ]
        for i in range(40):
            call(*big[i % len(big)])
            sent += 1
        # 40 huge paths.
        huge = t + b"/a" * 40_000
        for i in range(40):
            m = ["Stat", "List", "DiskUsage", "Tree", "FsMap"][i % 5]
            call(m, field_bytes(1, huge))
            sent += 1
        # 40 readers that never read, and 24 subscriptions held open.
        held = []
        for _ in range(40):
            held.append(call("Search", field_bytes(1, b"*"), read=False))
            sent += 1
        for _ in range(24):
            held.append(call("Subscribe", field_bytes(1, t), read=False))
            sent += 1
        time.sleep(3)
        during = rss_mib(daemon.pid)
        for h in held:
            h.cancel()
        ch.close()
        run = time.time() - t0
        # Rescans asked for in the run (an empty path is every root) end
        # first: what a scan holds while it runs is not what stays.
        while (status() or {}).get("state") != "ready":
            time.sleep(0.2)
        time.sleep(6)
        after6 = rss_mib(daemon.pid)
        # Idle blocking threads (one per call that waited on a reader) end
        # 10 s after their last job, with their stacks.
        time.sleep(10)
        sampling[0] = False
        sampler.join()
        after = rss_mib(daemon.pid)
        s = status()
        alive = s is not None and s["pid"] == daemon.pid
        mem = s.get("memory", {}) if s else {}
        print(f"{sent} requests in {run:.1f} s; answers: {outcomes}")
        print(f"RSS idle {idle:.1f} MiB, peak {peak[0]:.1f} MiB, "
              f"with 40 unread streams and 24 subscriptions open {during:.1f} MiB, "
              f"6 s after {after6:.1f} MiB, 16 s after {after:.1f} MiB ({after / idle:.2f}x idle)")
        print(f"status memory: {json.dumps(mem)}")
        print(f"threads {len(os.listdir(f'/proc/{daemon.pid}/task'))}; "
              f"largest anonymous mappings: {anon_maps(daemon.pid)}")
        print(f"same daemon answers: {alive}")
        ok = alive and after <= 1.5 * idle
        sys.exit(0 if ok else 1)
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
