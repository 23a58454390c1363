#!/usr/bin/env python3
"""Load: many concurrent clients for a while, a mix of search, du, stat,
ls and tree, on a tree that churns meanwhile; prints throughput, p50/p99
per call and overall, and errors.

    benches/load.py [--tree DIR | --entries N] [--clients 50] [--secs 60]
                    [--churn 200] [--procs 5] [--bins DIR] [--seed 1]

Makes a tree with benches/mktree.py (200,000 entries by default) unless
--tree names one, starts fsindexd on it in a fresh FSINDEX_HOME and waits
until it is ready. Then --clients threads, each with its own connection
(grpcio over the unix socket, requests encoded by hand so the client costs
little), spread over --procs processes (5: one Python process runs one
thread at a time), call in a loop for --secs seconds, each call picked at random:

    search 40%   a word or two from the tree's names, --limit 100
    du     20%   a random folder, --top 20
    stat   15%   a random file or folder
    ls     15%   a random folder
    tree   10%   a random folder, depth 2, 20 children

while one more thread churns the tree at --churn changes per second
(create, rename, write, delete under churn/; 0: no churn). Every answer
but OK counts as an error, and is printed by code. The machine's cores are
shared by the clients, the churn and the daemon: say so with the figures.
"""

import argparse
import json
import multiprocessing
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


def fb(n, b):
    return varint(n << 3 | 2) + varint(len(b)) + b


def fi(n, v):
    return varint(n << 3) + varint(v)


def elapsed_us(msg):
    """SearchResponse.elapsed_us (field 3) from an encoded message."""
    i = 0
    while i < len(msg):
        key, i = read_varint(msg, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = read_varint(msg, i)
            if field == 3:
                return v
        elif wire == 2:
            n, i = read_varint(msg, i)
            i += n
        else:
            return None
    return None


def read_varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def request(rng, only, words, folders, files):
    kind = only or rng.choices(["search", "du", "stat", "ls", "tree"], [40, 20, 15, 15, 10])[0]
    if kind == "search":
        q = " ".join(rng.sample(words, rng.choice([1, 1, 2]))).encode()
        return kind, "Search", fb(1, q) + fi(2, 100), True
    if kind == "du":
        return kind, "DiskUsage", fb(1, rng.choice(folders)) + fi(2, 20), False
    if kind == "stat":
        p = rng.choice(files) if rng.random() < 0.7 else rng.choice(folders)
        return kind, "Stat", fb(1, p), False
    if kind == "ls":
        return kind, "List", fb(1, rng.choice(folders)), False
    return kind, "Tree", fb(1, rng.choice(folders)) + fi(2, 2) + fi(3, 20), False


def clients(first, count, sock, only, words, folders, files, seed, until):
    """`count` client threads in this process, each with its own connection,
    calling until the clock reads `until`; returns (times by kind, errors by
    (kind, code), each search's own time in the daemon)."""
    lock = threading.Lock()
    times, errors, daemon_us = {}, {}, []

    def client(i):
        rng = random.Random(seed * 1000 + i)
        ch = grpc.insecure_channel(f"unix://{sock}", options=[
            ("grpc.max_receive_message_length", -1)])
        mine, errs, inside = {}, {}, []
        while time.time() < until:
            kind, method, body, streaming = request(rng, only, words, folders, files)
            path = f"/fsindex.v1.Index/{method}"
            t = time.perf_counter()
            try:
                if streaming:
                    first_message = True
                    for m in ch.unary_stream(path)(body, timeout=30):
                        if first_message:
                            inside.append(elapsed_us(m) or 0)
                            first_message = False
                else:
                    ch.unary_unary(path)(body, timeout=30)
                mine.setdefault(kind, []).append(time.perf_counter() - t)
            except grpc.RpcError as e:
                # A path the churn removed meanwhile is an answer, not an error.
                if e.code() == grpc.StatusCode.NOT_FOUND and b"churn" in body:
                    mine.setdefault(kind, []).append(time.perf_counter() - t)
                else:
                    errs[(kind, e.code().name)] = errs.get((kind, e.code().name), 0) + 1
        ch.close()
        with lock:
            daemon_us.extend(inside)
            for k, v in mine.items():
                times.setdefault(k, []).extend(v)
            for k, v in errs.items():
                errors[k] = errors.get(k, 0) + v

    threads = [threading.Thread(target=client, args=(first + i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times, errors, daemon_us


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree")
    ap.add_argument("--entries", type=int, default=200_000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--secs", type=float, default=60)
    ap.add_argument("--churn", type=float, default=200, help="changes per second (0: none)")
    ap.add_argument("--bins", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", help="one call kind only: search, du, stat, ls or tree")
    ap.add_argument("--procs", type=int, default=5,
                    help="client processes the clients are spread over (default 5)")
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="fsindex-load-")
    tree = a.tree
    if not tree:
        tree = os.path.join(work, "tree")
        subprocess.run([sys.executable, os.path.join(HERE, "mktree.py"), "--entries",
                        str(a.entries), "--out", tree, "--seed", str(a.seed)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree = os.path.abspath(tree)
    churn_dir = os.path.join(tree, "churn")
    os.makedirs(churn_dir, exist_ok=True)

    folders, files, words = [], [], set()
    for d, ds, fs in os.walk(tree):
        folders.append(d.encode())
        for f in fs:
            files.append(os.path.join(d, f).encode())
            for w in f.replace("-", " ").replace("_", " ").replace(".", " ").split():
                if len(w) >= 3 and w.isalpha():
                    words.add(w.lower())
    words = sorted(words)

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
        entries = s["entries"]
        sock = os.path.join(home, "fsindexd.sock")
        stop = threading.Event()
        churned = [0]

        def churn():
            rng = random.Random(a.seed)
            live = []
            n = 0
            interval = 1.0 / a.churn
            nxt = time.perf_counter()
            while not stop.is_set():
                op = rng.random()
                try:
                    if op < 0.4 or len(live) < 10:
                        p = os.path.join(churn_dir, f"load-{n}.txt")
                        with open(p, "w") as f:
                            f.write("x" * rng.randrange(100))
                        live.append(p)
                    elif op < 0.6:
                        i = rng.randrange(len(live))
                        q = os.path.join(churn_dir, f"renamed-{n}.log")
                        os.rename(live[i], q)
                        live[i] = q
                    elif op < 0.8:
                        with open(rng.choice(live), "a") as f:
                            f.write("more")
                    else:
                        os.remove(live.pop(rng.randrange(len(live))))
                    n += 1
                except OSError:
                    pass
                churned[0] = n
                nxt += interval
                d = nxt - time.perf_counter()
                if d > 0:
                    time.sleep(d)

        # The clients run in --procs processes (Python runs one thread at a
        # time per process: 50 threads in one would measure its lock).
        procs = max(1, min(a.procs, a.clients))
        per = [a.clients // procs + (1 if k < a.clients % procs else 0) for k in range(procs)]
        firsts = [sum(per[:k]) for k in range(procs)]
        churner = threading.Thread(target=churn) if a.churn > 0 else None
        cpu0 = os.times()
        t0 = time.time()
        until = t0 + a.secs
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(procs) as pool:
            jobs = [pool.apply_async(clients, (firsts[k], per[k], sock, a.only, words, folders,
                                               files, a.seed, until)) for k in range(procs)]
            if churner:
                churner.start()
            results = [j.get() for j in jobs]
        stop.set()
        if churner:
            churner.join()
        wall = time.time() - t0
        times, errors, daemon_us = {}, {}, []
        for ts, es, ds in results:
            daemon_us.extend(ds)
            for k, v in ts.items():
                times.setdefault(k, []).extend(v)
            for k, v in es.items():
                errors[k] = errors.get(k, 0) + v
        s = status()
        alive = s is not None and s["pid"] == daemon.pid

        total = sum(len(v) for v in times.values())
        nerr = sum(errors.values())
        print(f"tree {entries} entries; {a.clients} clients in {procs} processes for {wall:.0f} s; "
              f"churn {churned[0] / wall:.0f} changes/s; {os.cpu_count()} cores shared")
        print(f"{total} answers, {total / wall:.0f}/s; {nerr} errors {dict(errors) if errors else ''}")
        allt = [x for v in times.values() for x in v]
        print(f"{'call':8} {'count':>7} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        for k in ["search", "du", "stat", "ls", "tree"]:
            v = times.get(k, [])
            if v:
                print(f"{k:8} {len(v):7d} {pct(v, 50) * 1e3:8.1f} {pct(v, 90) * 1e3:8.1f} "
                      f"{pct(v, 99) * 1e3:8.1f} {max(v) * 1e3:8.1f}")
        print(f"{'all':8} {len(allt):7d} {pct(allt, 50) * 1e3:8.1f} {pct(allt, 90) * 1e3:8.1f} "
              f"{pct(allt, 99) * 1e3:8.1f} {max(allt) * 1e3:8.1f}")
        if daemon_us:
            print(f"search inside the daemon (elapsed_us: matching and ordering): "
                  f"p50 {pct(daemon_us, 50) / 1e3:.1f} ms, p99 {pct(daemon_us, 99) / 1e3:.1f} ms, "
                  f"max {max(daemon_us) / 1e3:.1f} ms")
        cpu1 = os.times()
        print(f"client CPU {cpu1.children_user - cpu0.children_user + cpu1.children_system - cpu0.children_system:.0f} s "
              f"in {procs} processes, "
              f"daemon CPU {s['cpu_time_ms'] / 1e3 if s else float('nan'):.0f} s since start; "
              f"same daemon answers: {alive}")
        sys.exit(0 if alive and nerr == 0 else 1)
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
