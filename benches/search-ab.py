#!/usr/bin/env python3
"""Search and du of two fsindexd builds (A, B) on one tree, in one run, each
query's commands interleaved A, B, B, A, ... so that the machine's drift and
load hit both alike. Two daemons run at once, and the one started first is
measured faster (up to 1.2x with the same binaries on 2 busy cores), so the
run is done twice, A started first and then B started first, and the ratio
given is the geometric mean of the two.

    A=/tmp/bin-before B=target/release benches/search-ab.py [QUERY ...]

Environment: A, B (folders holding fsindexd and fsctl), TREE (default
/tmp/fsbench/t, made by mktree.py with ENTRIES entries if missing), N (runs
per command and order, default 30). Markdown on stdout.
"""
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.environ.get("TREE", "/tmp/fsbench/t")
N = int(os.environ.get("N", "30"))
BINS = {"A": os.environ["A"], "B": os.environ["B"]}
QUERIES = sys.argv[1:] or ["tax 2025", "report", "zanzibar", "qqxjnomatch", "ext:pdf", "IMG_1", "kind:image 2019"]

if not os.path.isdir(TREE):
    entries = os.environ.get("ENTRIES", "1000000")
    subprocess.run([sys.executable, f"{HERE}/mktree.py", "--entries", entries, "--out", TREE],
                   check=True, stdout=subprocess.DEVNULL)


def env(home):
    return dict(os.environ, FSINDEX_HOME=home, FSINDEX_NO_SPAWN="1")


def start(order):
    homes, procs = {}, {}
    for k in order:
        homes[k] = tempfile.mkdtemp(prefix=f"search-ab-{k}-")
        procs[k] = subprocess.Popen([f"{BINS[k]}/fsindexd", "--root", TREE], env=env(homes[k]),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while True:
            o = subprocess.run([f"{BINS[k]}/fsctl", "status", "--json"], env=env(homes[k]),
                               capture_output=True, text=True)
            if '"state":"ready"' in o.stdout:
                break
            if procs[k].poll() is not None:
                sys.exit(f"fsindexd of {k} exited")
            time.sleep(0.05)
    time.sleep(3)  # the writer goes idle and gives back what the scan left
    return homes, procs


def commands():
    for q in QUERIES:
        yield f"search --limit 0 {q}", ["search", "--limit", "0", *q.split()]
    yield "du TREE --top 20", ["du", TREE, "--top", "20"]


def measure(order):
    homes, procs = start(order)
    ms = {}
    try:
        for label, args in commands():
            for k in BINS:
                ms[k, label] = []
            for i in range(N):
                for k in (("A", "B") if i % 2 == 0 else ("B", "A")):
                    t = time.perf_counter()
                    subprocess.run([f"{BINS[k]}/fsctl", *args], env=env(homes[k]),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    ms[k, label].append((time.perf_counter() - t) * 1000)
    finally:
        for p in procs.values():
            p.terminate()
            p.wait()
        for h in homes.values():
            shutil.rmtree(h, ignore_errors=True)
    return {key: statistics.median(v) for key, v in ms.items()}


first_a = measure(["A", "B"])
first_b = measure(["B", "A"])
print(f"Tree: {TREE}; whole `fsctl` processes, median of {N} interleaved runs per command and start order; "
      f"A = {BINS['A']}, B = {BINS['B']}.\n")
print("| command | A, A first | B, A first | A, B first | B, B first | B/A (geometric mean of both orders) |")
print("|---|---|---|---|---|---|")
for label, _ in commands():
    r = math.sqrt((first_a["B", label] / first_a["A", label]) * (first_b["B", label] / first_b["A", label]))
    print(f"| `fsctl {label}` | {first_a['A', label]:.2f} ms | {first_a['B', label]:.2f} ms "
          f"| {first_b['A', label]:.2f} ms | {first_b['B', label]:.2f} ms | {r:.2f}x |")
