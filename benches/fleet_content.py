#!/usr/bin/env python3
"""The fleet's `content = true` on a real PostgreSQL: how fast a host ships
the text it already extracted, and `fsctl fleet search content:...`.

    benches/fleet_content.py [--bins target/release] [--copies 3] [--runs 7]

1. A tree of real text: every plain-text file of /usr/share/doc (copyright
   files, READMEs, *.txt; not the compressed ones), `--copies` times over,
   plus three files holding a rare word. A PostgreSQL as benches/fleet.py
   starts it, and `fsctl fleet init`.
2. The daemon indexes the tree with content on (`[root] content = true`)
   and ships it with `[fleet] content = false`, until the content worker
   has read every file and the link is current.
3. Restarted with `content = true`: from the daemon's start until
   PostgreSQL holds a row of `fsindex.texts` for every file with text.
   Reported: files, text MB (the content index's own `text_bytes`), the
   time and MB/s (the daemon's start included), and `fsindex.texts`' size
   on disk (table and indexes).
4. `fsctl fleet search` of a selective word, a common word, a form, a
   phrase and a prefix, as whole processes (fsindexd --fleet-query's parse
   included), median and max of --runs after 2.

Prints Markdown.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleet import Daemon, Postgres, free_port, log, search_table  # noqa: E402


def make_tree(tree, copies):
    sources = []
    for d, _, files in os.walk("/usr/share/doc"):
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            if f == "copyright" or f.startswith("README") or f.endswith(".txt"):
                sources.append(p)
    n = 0
    for c in range(copies):
        for i, p in enumerate(sources):
            dest = os.path.join(tree, f"copy{c}", f"{i:05d}-{os.path.basename(p)}.txt")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(p, dest)
            n += 1
    for i in range(3):
        with open(os.path.join(tree, f"rare-{i}.txt"), "w") as f:
            f.write(f"Notes {i}: the zanzibarian expedition left on a Tuesday.\n")
        n += 1
    return n


def texts_in_index(home):
    """Files with extracted text, and its bytes, read from index.db."""
    import sqlite3
    db = sqlite3.connect(f"file:{os.path.join(home, 'index.db')}?mode=ro", uri=True)
    n, b = db.execute("SELECT count(*), coalesce(sum(s.text_bytes), 0) FROM content_state s "
                      "JOIN content_text t ON t.entry_id = s.entry_id WHERE s.status = 'ok'"
                      ).fetchone()
    queued = db.execute("SELECT count(*) FROM content_queue").fetchone()[0]
    db.close()
    return n, b, queued


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bins", default="target/release")
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    bins = os.path.abspath(a.bins)
    work = tempfile.mkdtemp(prefix="fleet-content-bench")
    tree = os.path.join(work, "tree")
    home = os.path.join(work, "home")
    os.makedirs(home)
    files = make_tree(tree, a.copies)
    log(f"{files} files in {tree}")
    pg = Postgres(free_port())
    try:
        def config(content):
            with open(os.path.join(home, "config.toml"), "w") as f:
                f.write(f'[root."{tree}"]\ncontent = true\n\n'
                        f'[fleet]\ndatabase = "{pg.url}"\nhost = "h1"\ncontent = {str(content).lower()}\n')

        config(False)
        d = Daemon(bins, home, tree)
        d.fsctl("fleet", "init")

        seen = []

        def settled(s):
            # The queue empty and the count of texts still for 3 s.
            fl = s.get("fleet") or {}
            if not (s["state"] == "ready" and fl.get("connected") and fl.get("lag_batches") == 0
                    and fl.get("state") in ("current", "hashing")):
                return False
            n, _, queued = texts_in_index(home)
            seen.append((time.time(), n, queued))
            return queued == 0 and any(t0 < time.time() - 3 and n0 == n and q0 == 0
                                       for t0, n0, q0 in seen)

        d.start()
        t = time.time()
        d.wait(settled, limit=1800)
        indexed, text, _ = texts_in_index(home)
        log(f"extracted and shipped without content in {time.time() - t:.1f} s: "
            f"{indexed} files with text, {text / 1e6:.1f} MB")
        assert pg.sql("SELECT count(*) FROM fsindex.texts") == "0"
        d.stop()

        config(True)
        load0 = os.getloadavg()
        t = time.time()
        d.start()
        while int(pg.sql("SELECT count(*) FROM fsindex.texts")) < indexed:
            if time.time() - t > 1800:
                sys.exit("timed out waiting for the texts")
            time.sleep(0.05)
        took = time.time() - t
        load1 = os.getloadavg()
        disk = int(pg.sql("SELECT pg_total_relation_size('fsindex.texts')"))
        print(f"{files:,} files ({a.copies} copies of /usr/share/doc's plain text), "
              f"{indexed:,} with text, {text / 1e6:.1f} MB of it; load average (1 min) "
              f"{load0[0]:.1f} before, {load1[0]:.1f} after.\n")
        print("| content ship (turned on, daemon start to the last text's row) | time | text MB/s | files/s | fsindex.texts on disk |")
        print("|---|---|---|---|---|")
        print(f"| {indexed:,} files, {text / 1e6:.1f} MB | {took:.1f} s | {text / 1e6 / took:.2f} "
              f"| {indexed / took:,.0f} | {disk / 1e6:.1f} MB ({disk / max(text, 1):.2f} x the text) |\n")
        d.wait(lambda s: (s.get("fleet") or {}).get("state") in ("current", "hashing"))
        print("\n".join(search_table(bins, d.env, [
            "content:zanzibarian", "content:copyright", "content:licenses",
            'content:"general public license"', "content:redistrib*",
            "content:warranty copyright",
        ], a.runs)))
        d.stop()
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
