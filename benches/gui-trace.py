#!/usr/bin/env python3
"""A keystroke's latency split into its parts (benches/gui-latency.sh runs it).

    gui-trace.py WORK ROUNDS

Joins xlatency's keys (round-N.tsv: query so far, settled ms, changes, first
change ms, the key's CLOCK_MONOTONIC ms) with fsgui's FSGUI_TRACE lines in
WORK/gui.log (the same clock): for each key, the frame that read it, the query
sent, the daemon's answer (with its own time inside), the answer applied, the
frame that drew the rows, and the change on screen. Prints p50/p99/max of each
part, and the slowest keys part by part.
"""
import re
import statistics
import sys

work, rounds = sys.argv[1], int(sys.argv[2])
events = []
for line in open(f"{work}/gui.log", errors="replace"):
    m = re.match(r"fsgui-trace (\S+) (\S+)(.*)", line)
    if m:
        kv = dict(re.findall(r"(\w+)=(\S+)", m.group(3)))
        events.append((float(m.group(1)), m.group(2), kv))
keys = []
for r in range(1, rounds + 1):
    for line in open(f"{work}/round-{r}.tsv"):
        x = line.rstrip("\n").split("\t")
        if len(x) >= 5 and x[1] != "-":
            keys.append((x[0], float(x[1]), float(x[3]), float(x[4])))
if not events or not keys:
    sys.exit("no trace (fsgui without FSGUI_TRACE?) or no keys")


def after(t, kind, pred=lambda kv: True):
    return next(((at, kv) for at, k, kv in events if at >= t and k == kind and pred(kv)), (None, None))


parts = {k: [] for k in ("key>frame", "frame>send", "send>answer", "daemon", "answer>applied", "applied>painted", "painted>ui-end", "ui-end>screen", "settled", "first", "window")}
rows = []
for q, settled, first, t0 in keys:
    fr, _ = after(t0, "frame", lambda kv: int(kv.get("keys", 0)) > 0)
    if fr is None:
        continue
    sent, skv = after(fr, "send", lambda kv: kv.get("offset") == "0")
    if sent is None or sent > t0 + settled:
        continue
    gen = skv["gen"]
    ans, akv = after(sent, "answer", lambda kv: kv.get("gen") == gen and kv.get("offset") == "0")
    app, _ = after(sent, "applied", lambda kv: kv.get("gen") == gen and kv.get("offset") == "0")
    pnt, _ = after(sent, "painted", lambda kv: kv.get("gen") == gen)
    if None in (ans, app, pnt):
        continue
    end, _ = after(pnt, "ui-end")
    screen = t0 + settled
    d = {
        "key>frame": fr - t0,
        "frame>send": sent - fr,
        "send>answer": ans - sent,
        "daemon": int(akv["daemon_us"]) / 1000,
        "answer>applied": app - ans,
        "applied>painted": pnt - app,
        "painted>ui-end": end - pnt,
        "ui-end>screen": screen - end,
        "settled": settled,
        "first": first,
        # What the window itself adds: all but the daemon's round trip.
        "window": settled - (ans - sent),
    }
    for k, v in d.items():
        parts[k].append(v)
    rows.append((q, d))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


print(f"keystroke split into parts ({len(rows)} keys joined with fsgui's trace), ms: p50 / p99 / max")
for k, v in parts.items():
    if v:
        print(f"  {k:16} {statistics.median(v):7.1f} {pct(v, .99):7.1f} {max(v):7.1f}")
print("slowest keys (settled), part by part:")
for q, d in sorted(rows, key=lambda r: -r[1]["settled"])[:6]:
    print(f"  {q!r:14} " + ", ".join(f"{k} {v:.1f}" for k, v in d.items()))
