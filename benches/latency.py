#!/usr/bin/env python3
"""Change-to-searchable latency of fsindexd, on this machine.

  benches/latency.py [--entries N] [--singles 300] [--burst 100000]

Builds release binaries, makes (or reuses) a synthetic tree with
benches/mktree.py, starts fsindexd on it with a fresh FSINDEX_HOME and waits
until it is ready. Then:

* single changes: creates files one at a time (at random folders) and
  measures from just before the write to the moment `fsctl watch --json`
  prints the file's `created` event. The daemon emits that event right after
  the change is committed and applied to the search index, so it is the
  moment the file becomes searchable. Reports p50 / p99 / max.
* a burst: untars N small files (1,000 per folder) into the root, then
  measures until `fsctl search` counts all N, and the daemon's peak RSS
  (VmHWM) over the whole run.
"""

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BIN = os.path.join(REPO, "target", "release")


def sh(*args, **kw):
    return subprocess.run(args, check=True, **kw)


def status(env):
    out = subprocess.run([f"{BIN}/fsctl", "status", "--json"], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        return None
    import json

    return json.loads(out.stdout)


def vm(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_secs(pid):
    """User + system CPU seconds of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--singles", type=int, default=300)
    ap.add_argument("--burst", type=int, default=100_000)
    ap.add_argument("--tree", default="/tmp/fsbench/lat")
    a = ap.parse_args()

    if not os.environ.get("NO_BUILD"):
        sh("cargo", "build", "--release", "-q", "-p", "fsindexd", "-p", "fsctl", cwd=REPO)
    tree = a.tree
    stamp = os.path.join(tree, ".mktree-entries")
    if not (os.path.exists(stamp) and open(stamp).read().strip() == str(a.entries)):
        shutil.rmtree(tree, ignore_errors=True)
        sh(sys.executable, os.path.join(HERE, "mktree.py"), "--entries", str(a.entries), "--out", tree, stdout=subprocess.DEVNULL)
        with open(stamp, "w") as f:
            f.write(str(a.entries))
    for leftover in ("latency-singles", "latency-burst"):
        shutil.rmtree(os.path.join(tree, leftover), ignore_errors=True)
    dirs = [os.path.join(tree, d) for d in sorted(os.listdir(tree)) if os.path.isdir(os.path.join(tree, d))]

    home = tempfile.mkdtemp(prefix="fsindex-lat-")
    env = dict(os.environ, FSINDEX_HOME=home, FSINDEX_NO_SPAWN="1")
    daemon = subprocess.Popen([f"{BIN}/fsindexd", "--root", tree], env=env)
    try:
        t0 = time.monotonic()
        while True:
            s = status(env)
            if s and s["state"] == "ready":
                break
            time.sleep(0.02)
        ready = time.monotonic() - t0

        # Single changes, seen through the subscription stream.
        watch = subprocess.Popen([f"{BIN}/fsctl", "watch", tree, "--json"], env=env, stdout=subprocess.PIPE, text=True, bufsize=1)
        seen = {}
        subscribed = threading.Event()

        def reader():
            import json

            for line in watch.stdout:
                ev = json.loads(line)
                if ev["kind"] == "subscribed":
                    subscribed.set()
                elif ev["kind"] == "created":
                    seen.setdefault(ev["path"], time.monotonic())

        threading.Thread(target=reader, daemon=True).start()
        subscribed.wait(10)
        rng = random.Random(7)
        singles_dir = os.path.join(tree, "latency-singles")
        os.mkdir(singles_dir)
        time.sleep(0.3)
        lat = []
        for i in range(a.singles):
            d = rng.choice(dirs + [singles_dir])
            p = os.path.join(d, f"latency-probe-{i}.txt")
            start = time.monotonic()
            with open(p, "w") as f:
                f.write("probe")
            while p not in seen:
                if time.monotonic() - start > 5:
                    break
                time.sleep(0.0005)
            lat.append((seen.get(p, time.monotonic()) - start) * 1000)
            os.unlink(p)
            time.sleep(0.01 + rng.random() * 0.05)
        watch.kill()
        lat.sort()
        pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]

        # A burst: untar an archive of N small files into the root (made
        # once, outside the root), as a user unpacking a source tree would.
        archive = os.path.join(os.path.dirname(tree), f"burst-{a.burst}.tar")
        if not os.path.exists(archive):
            src = tempfile.mkdtemp(prefix="burst-src-")
            os.mkdir(os.path.join(src, "latency-burst"))
            for i in range(a.burst):
                sub = os.path.join(src, "latency-burst", f"part{i // 1000:03d}")
                if i % 1000 == 0:
                    os.mkdir(sub)
                with open(os.path.join(sub, f"burstfile-{i}.dat"), "w") as f:
                    f.write("b")
            sh("tar", "-cf", archive, "-C", src, "latency-burst")
            shutil.rmtree(src)
        cpu0 = cpu_secs(daemon.pid)
        b0 = time.monotonic()
        sh("tar", "-xf", archive, "-C", tree)
        written = time.monotonic() - b0
        count = 0
        while time.monotonic() - b0 < 300:
            out = subprocess.run([f"{BIN}/fsctl", "search", "burstfile-", "--limit", "1"], env=env, capture_output=True, text=True)
            m = re.search(r"\((\d+) of (\d+) matches", out.stderr)
            count = int(m.group(2)) if m else len(out.stdout.splitlines())
            if count >= a.burst:
                break
            time.sleep(0.05)
        searchable = time.monotonic() - b0
        cpu = cpu_secs(daemon.pid) - cpu0
        s = status(env)
        peak = vm(daemon.pid, "VmHWM")
        rss = vm(daemon.pid, "VmRSS")
        w = s.get("watch") or {}

        print(f"# change-to-searchable, {s['entries']:,} entries indexed, fsindexd {s['version']}")
        print()
        print(f"- command: `benches/latency.py --entries {a.entries} --singles {a.singles} --burst {a.burst}`")
        print(f"- initial index ready in {ready:.2f} s; {w.get('watches', 0):,} folders watched (OS limit {w.get('os_limit', 0):,})")
        print()
        print("| figure | value | target |")
        print("|---|---|---|")
        print(f"| single change to searchable, p50 | {pct(0.5):.1f} ms | |")
        print(f"| single change to searchable, p99 | {pct(0.99):.1f} ms | < 500 ms |")
        print(f"| single change to searchable, max | {lat[-1]:.1f} ms | |")
        print(f"| burst: `tar -x` of {a.burst:,} files took | {written:.2f} s | |")
        print(f"| burst: all {a.burst:,} searchable after | {searchable:.2f} s ({a.burst / searchable:,.0f} files/s, bound by the file system here) | |")
        print(f"| burst: found by search | {count:,} of {a.burst:,} | all |")
        print(f"| burst: daemon CPU for it (user+sys) | {cpu:.2f} s = {cpu * 1e6 / a.burst:.0f} us per new file, i.e. {a.burst / max(cpu, 1e-9):,.0f} files/s on one core | >= 20k changes/s |")
        print(f"| lost-event rescans during the run | {w.get('recrawls', 0)} (overflows {w.get('overflows', 0)}) | |")
        print(f"| daemon peak RSS (VmHWM) / RSS after | {peak / 2**20:.0f} MiB / {rss / 2**20:.0f} MiB | |")
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(30)
        shutil.rmtree(os.path.join(tree, "latency-singles"), ignore_errors=True)
        shutil.rmtree(os.path.join(tree, "latency-burst"), ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
