#!/usr/bin/env python3
"""The fleet on a real PostgreSQL: bulk ship, lag under churn, fleet search,
a folder rename, disk per entry.

    benches/fleet.py --tree /tmp/fsbench/t [--bins target/release] [--hosts 3]
                     [--churn-secs 30] [--rate 1000]

1. A PostgreSQL of Debian's (initdb + pg_ctl in a temp folder, 127.0.0.1,
   default settings but for the port; run as `nobody` under root), and
   `fsctl fleet init`.
2. The tree is indexed once without a fleet (plus a folder `fleet-rename/`
   of 100,000 files made for step 5), then the daemon is restarted with
   `[fleet]` once per host name (h1, h2, ...): each start is a new epoch,
   so each ships the whole index by COPY through the reconcile. Reported:
   the reconcile's own time and rows/s (from the daemon's log), and start
   to `current`.
3. Churn: files created in order and deleted 1,250 creations later in one
   folder, --rate changes per second for --churn-secs, while PostgreSQL is
   read every 50 ms (one psql session): each created file's lag from its
   creation to its row in the database, p50/p99/max, and the load average.
4. `fsctl fleet search` over every host's rows: a selective and a common
   term, whole answers to /dev/null, median and max of 7 runs after 2.
5. `mv fleet-rename fleet-renamed`: time until PostgreSQL holds the new
   path of the folder's last file.
6. PostgreSQL's disk per entry (`pg_total_relation_size`, table and
   indexes, over the row count).

Prints Markdown. Needs postgresql (tests/setup.sh installs it).

    benches/fleet.py --search-only URL [--bins DIR] [--runs 9] [TERM ...]

runs only step 4 against a fleet database that holds rows already
(default terms: zanzibar, report), with the load average before and after.
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def pg_bin(name):
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/" + name))
    if not versions:
        sys.exit("PostgreSQL is not installed: run tests/setup.sh")
    return versions[-1]


def as_pg(cmd):
    if os.geteuid() == 0:
        return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] + cmd
    return cmd


class Postgres:
    def __init__(self, port):
        self.dir = tempfile.mkdtemp(prefix="fleet-bench-pg")
        os.chmod(self.dir, 0o755)
        if os.geteuid() == 0:
            shutil.chown(self.dir, "nobody", "nogroup")
        self.data = os.path.join(self.dir, "data")
        self.port = port
        subprocess.run(as_pg([pg_bin("initdb"), "-D", self.data, "-U", "postgres",
                              "-E", "UTF8", "--locale=C.UTF-8", "--auth=trust",
                              "--no-instructions"]), check=True, capture_output=True)
        subprocess.run(as_pg([pg_bin("pg_ctl"), "-D", self.data, "-o",
                              f"-p {port} -k {self.dir} -c listen_addresses=127.0.0.1",
                              "-l", os.path.join(self.dir, "log"), "-w", "start"]),
                       check=True, capture_output=True)
        self.url = f"postgresql://postgres@127.0.0.1:{port}/postgres"

    def sql(self, q):
        out = subprocess.run(["psql", "-X", "-A", "-t", self.url, "-c", q],
                             check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def stop(self):
        subprocess.run(as_pg([pg_bin("pg_ctl"), "-D", self.data, "-m", "fast", "stop"]),
                       capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Daemon:
    def __init__(self, bins, home, tree):
        self.bins, self.home, self.tree = bins, home, tree
        self.env = dict(os.environ, FSINDEX_HOME=home, FSINDEX_NO_SPAWN="1")
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([os.path.join(self.bins, "fsindexd"), "--root", self.tree],
                                     env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)

    def fsctl(self, *args, check=True):
        return subprocess.run([os.path.join(self.bins, "fsctl"), *args], env=self.env,
                              capture_output=True, text=True, check=check)

    def status(self):
        out = self.fsctl("status", "--json", check=False)
        return json.loads(out.stdout) if out.returncode == 0 else None

    def wait(self, cond, limit=900):
        end = time.time() + limit
        while time.time() < end:
            s = self.status()
            if s and cond(s):
                return s
            time.sleep(0.05)
        sys.exit("timed out waiting for the daemon")

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait()
            self.proc = None

    def log_text(self):
        text = ""
        for f in glob.glob(os.path.join(self.home, "logs", "*")):
            with open(f, errors="replace") as fh:
                text += fh.read()
        return text


def current(s):
    """Every batch shipped (hashing for fleet dupes may go on)."""
    f = s.get("fleet") or {}
    return (s["state"] == "ready" and f.get("connected")
            and f.get("state") in ("current", "hashing") and f.get("lag_batches") == 0)


def loadavg():
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def search_table(bins, env, terms, runs):
    """`fsctl fleet search TERM` as a whole process, output to /dev/null:
    median and max of `runs` after 2 warm-up runs."""
    out = ["| fleet search over all hosts | results | median | max |", "|---|---|---|---|"]
    fsctl = os.path.join(bins, "fsctl")
    for term in terms:
        times = []
        n_res = subprocess.run([fsctl, "fleet", "search", "--count", term], env=env,
                               capture_output=True, text=True).stdout.strip()
        for r in range(runs + 2):
            t = time.time()
            subprocess.run([fsctl, "fleet", "search", term], env=env,
                           stdout=subprocess.DEVNULL, check=False)
            if r >= 2:
                times.append(time.time() - t)
        out.append(f"| `{term}` | {int(n_res):,} | {statistics.median(times) * 1000:.0f} ms "
                   f"| {max(times) * 1000:.0f} ms |")
    return out


def search_only(a):
    # fsctl reads the database from an instance's config.toml.
    home = tempfile.mkdtemp(prefix="fleet-bench-home")
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f'[fleet]\ndatabase = "{a.search_only}"\n')
    env = dict(os.environ, FSINDEX_HOME=home, FSINDEX_NO_SPAWN="1")
    bins = os.path.abspath(a.bins)
    n = subprocess.run(["psql", "-X", "-A", "-t", a.search_only, "-c",
                        "SELECT count(*) || ' entries from ' || count(DISTINCT host) || ' hosts' "
                        "FROM fsindex.items"], capture_output=True, text=True, check=True)
    load0 = os.getloadavg()
    table = search_table(bins, env, a.terms or ["zanzibar", "report"], a.runs)
    load1 = os.getloadavg()
    print(f"Over {n.stdout.strip()}; load average (1 min) {load0[0]:.1f} before, "
          f"{load1[0]:.1f} after.\n")
    print("\n".join(table))
    shutil.rmtree(home, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree")
    ap.add_argument("--search-only", metavar="URL")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("terms", nargs="*")
    ap.add_argument("--bins", default="target/release")
    ap.add_argument("--hosts", type=int, default=3)
    ap.add_argument("--churn-secs", type=int, default=30)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--rename-files", type=int, default=100_000)
    a = ap.parse_args()
    if a.search_only:
        return search_only(a)
    if not a.tree:
        sys.exit("give --tree (or --search-only URL)")

    pg = Postgres(free_port())
    home = tempfile.mkdtemp(prefix="fleet-bench-home")
    d = Daemon(os.path.abspath(a.bins), home, a.tree)
    ren = os.path.join(a.tree, "fleet-rename")
    out = []
    try:
        d.fsctl("fleet", "init", "--database", pg.url)
        if not os.path.isdir(ren):
            log(f"making {a.rename_files} files under {ren}")
            for i in range(a.rename_files):
                sub = os.path.join(ren, f"d{i // 1000:03}")
                if i % 1000 == 0:
                    os.makedirs(sub, exist_ok=True)
                open(os.path.join(sub, f"f{i:06}"), "w").close()
        churn_dir = os.path.join(a.tree, "fleet-churn")
        os.makedirs(churn_dir, exist_ok=True)
        log("indexing without a fleet")
        t = time.time()
        d.start()
        s = d.wait(lambda s: s["state"] == "ready")
        entries = s["entries"]
        log(f"  ready in {time.time() - t:.1f} s, {entries} entries")
        d.stop()

        loads = []
        out.append("| host | entries | reconcile | rows/s | start to current | load average after (1/5/15 min) |")
        out.append("|---|---|---|---|---|---|")
        for n in range(1, a.hosts + 1):
            host = f"h{n}"
            with open(os.path.join(home, "config.toml"), "w") as f:
                f.write(f'[fleet]\ndatabase = "{pg.url}"\nhost = "{host}"\n')
            # A host name the database has no row for: the whole index is
            # shipped by the reconcile.
            before = d.log_text().count("fleet: reconciled")
            t = time.time()
            d.start()
            d.wait(current)
            took = time.time() - t
            lines = [l for l in d.log_text().splitlines() if "fleet: reconciled" in l][before:]
            rows = int(re.search(r"rows=(\d+)", lines[-1]).group(1))
            secs = float(re.search(r"secs=([\d.]+)", lines[-1]).group(1))
            log(f"  {host}: {rows} rows in {secs:.1f} s")
            # Schema 5's load, by phase (the daemon's "fleet: loaded" line).
            phases = [l for l in d.log_text().splitlines() if "fleet: loaded" in l]
            if len(phases) > n - 1:
                m = dict(re.findall(r"(\w+_secs)=([\d.]+)", phases[-1]))
                log(f"    {m}")
                loads.append(f"- {host}: " + ", ".join(
                    f"{k.replace('_secs', '')} {float(v):.1f} s" for k, v in m.items()))
            out.append(f"| {host} | {entries:,} | {secs:.1f} s | {rows / secs:,.0f} | {took:.1f} s "
                       f"| {loadavg()} |")
            if n < a.hosts:
                d.stop()
        # Schema 3: entries' rows (fsindex.items) and folders' paths
        # (fsindex.folders), each with its indexes; schema 5: a partition
        # of each per host (sizes summed over the partitions).
        total = int(pg.sql("SELECT count(*) FROM fsindex.items"))
        parts = ("(SELECT relid FROM pg_partition_tree('fsindex.items') UNION ALL "
                 "SELECT relid FROM pg_partition_tree('fsindex.folders'))")
        size = int(pg.sql(f"SELECT sum(pg_total_relation_size(relid)) FROM {parts} p"))
        heap = int(pg.sql(f"SELECT sum(pg_relation_size(relid)) FROM {parts} p"))
        if loads:
            out.append("")
            out.append("The loads by phase (the daemon's log):")
            out.extend(loads)
        out.append("")
        out.append(f"PostgreSQL's disk: {size / total:.0f} bytes per entry with its indexes "
                   f"({heap / total:.0f} for the rows alone), {total:,} rows, "
                   f"{size / 2**20:,.0f} MiB.")
        for idx in pg.sql("SELECT indexrelid::regclass || ' ' || (SELECT sum(pg_relation_size(t.relid)) "
                          "FROM pg_partition_tree(indexrelid) t) "
                          "FROM pg_index WHERE indrelid IN ('fsindex.items'::regclass, "
                          "'fsindex.folders'::regclass) ORDER BY 1").splitlines():
            name, b = idx.split()
            out.append(f"- {name}: {int(b) / total:.0f} bytes per entry")

        # The floor: PostgreSQL's own COPY of one host's rows, from a file
        # on its side (no client, no daemon), into a table with no index,
        # then into one with the items' indexes.
        dump = os.path.join(pg.dir, "h1.copy")
        pg.sql(f"COPY (SELECT * FROM fsindex.items WHERE host = 'h1') TO '{dump}' (FORMAT binary)")
        for label, idx in [("no index", False), ("the items' indexes", True)]:
            pg.sql("DROP TABLE IF EXISTS fsindex.floor; "
                   "CREATE TABLE fsindex.floor (LIKE fsindex.items INCLUDING DEFAULTS"
                   + (" INCLUDING INDEXES" if idx else "") + ")")
            t = time.time()
            pg.sql(f"COPY fsindex.floor FROM '{dump}' (FORMAT binary)")
            secs = time.time() - t
            out.append(f"- floor: PostgreSQL's own COPY of h1's {entries:,} rows into a table with "
                       f"{label}: {secs:.1f} s, {entries / secs:,.0f} rows/s")
        pg.sql("DROP TABLE fsindex.floor")
        os.unlink(dump)

        # 3. Lag under churn, on the last host (its daemon is running):
        # files n00000000, n00000001, ... created in order, and each
        # deleted 1,250 creations later, one change per tick at --rate.
        # A change's lag is from its creation to the first moment the
        # database holds it, read from PostgreSQL itself every 50 ms by one
        # psql session kept open (no answer missed, whatever the daemon's
        # load; `status` took 300 ms per answer under load).
        log(f"churn: {a.rate}/s for {a.churn_secs} s")
        import threading
        # A run cut short leaves its files: gone, and shipped gone, first.
        left = glob.glob(os.path.join(churn_dir, "n*"))
        for n in left:
            os.unlink(n)
        if left:
            time.sleep(1)
            d.wait(current, limit=120)
        host = f"h{a.hosts}"
        seen, stop = [], threading.Event()
        poller = subprocess.Popen(["psql", "-X", "-A", "-t", "-q", pg.url], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        watched = churn_dir.replace("'", "''")
        # By the folder's id, so that the probe is an index look-up whatever
        # the statistics say: right after the bulk loads they are stale,
        # and a join planned on them took longer than the whole churn.
        folder = pg.sql(f"SELECT id FROM fsindex.folders WHERE host = '{host}' "
                        f"AND path = '{watched}'")
        probe = ("SELECT coalesce(max(name), '') FROM fsindex.items "
                 f"WHERE host = '{host}' AND parent_id = {int(folder)} AND name LIKE 'n%';\n")

        def sample():
            nonlocal poller
            while not stop.is_set():
                poller.stdin.write(probe)
                poller.stdin.flush()
                line = poller.stdout.readline()
                if not line:
                    # psql ended (its error is on stderr): a new session.
                    log(f"  psql ended ({poller.wait()}), starting another")
                    poller = subprocess.Popen(["psql", "-X", "-A", "-t", "-q", pg.url],
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              text=True, bufsize=1)
                    continue
                top = line.strip()
                seen.append((time.time(), int(top[1:]) if top else -1))
                time.sleep(0.05)

        th = threading.Thread(target=sample)
        th.start()
        created = []
        load0 = os.getloadavg()[0]
        t0 = time.time()
        i = 0
        while time.time() - t0 < a.churn_secs:
            due = t0 + i / a.rate
            now = time.time()
            if due > now:
                time.sleep(due - now)
            k = i // 2
            if i % 2 == 0:
                open(os.path.join(churn_dir, f"n{k:08}"), "w").close()
                created.append(time.time())
            elif k >= 1250:
                os.unlink(os.path.join(churn_dir, f"n{k - 1250:08}"))
            i += 1
        load1 = os.getloadavg()[0]
        d.wait(current, limit=120)
        time.sleep(0.2)
        stop.set()
        th.join()
        poller.stdin.close()
        poller.wait()
        lags, j = [], 0
        for k, t_made in enumerate(created):
            while j < len(seen) and seen[j][1] < k:
                j += 1
            if j < len(seen):
                lags.append(max(0.0, seen[j][0] - t_made))
        log(f"  {len(seen)} reads, {sum(1 for _, k in seen if k >= 0)} with a file; "
            f"{len(lags)} lags")
        if not lags:
            lags = [float("nan")]
        out.append("")
        out.append(f"Lag while {i / a.churn_secs:,.0f} changes/s were made for {a.churn_secs} s "
                   f"(load average {load0:.1f} before, {load1:.1f} after; {len(seen)} reads of the "
                   f"database, 50 ms apart): from a file's creation to its row in PostgreSQL, "
                   f"over {len(lags):,} of {len(created):,} files created, p50 {pct(lags, 50):.2f} s, "
                   f"p99 {pct(lags, 99):.2f} s, max {max(lags):.2f} s.")
        for n in sorted(glob.glob(os.path.join(churn_dir, "n*"))):
            os.unlink(n)

        # 4. Fleet search.
        out.append("")
        out.extend(search_table(d.bins, d.env, ["zanzibar", "report"], 9))

        # 5. Rename of the 100k folder.
        last = f"d{(a.rename_files - 1) // 1000:03}/f{a.rename_files - 1:06}"
        new_dir, new_name = os.path.split(os.path.join(a.tree, "fleet-renamed", last))
        new_dir = new_dir.replace("'", "''")
        t = time.time()
        os.rename(ren, os.path.join(a.tree, "fleet-renamed"))
        # Through the folders' path index, not the view's computed paths.
        while pg.sql("SELECT count(*) FROM fsindex.items e JOIN fsindex.folders f "
                     "ON f.host = e.host AND f.id = e.parent_id "
                     f"WHERE f.host = 'h{a.hosts}' AND f.path = '{new_dir}' "
                     f"AND e.name = '{new_name}'") != "1":
            time.sleep(0.05)
        took = time.time() - t
        os.rename(os.path.join(a.tree, "fleet-renamed"), ren)
        out.append("")
        out.append(f"Rename of a folder of {a.rename_files + a.rename_files // 1000:,} entries: "
                   f"its last file's new path in PostgreSQL after {took:.1f} s.")
        d.wait(current, limit=300)
    finally:
        d.stop()
        pg.stop()
        shutil.rmtree(home, ignore_errors=True)
    print("\n".join(out))


if __name__ == "__main__":
    main()
