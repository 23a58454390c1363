#!/usr/bin/env bash
# Keystroke to rows settled on screen, measured from outside fsgui, as a
# user sees it: fsgui under Xvfb with Mesa's software OpenGL, keys typed
# through XTEST one at a time, the table's part of the screen grabbed
# through MIT-SHM about every millisecond (benches/xlatency.c); a key's
# latency is the time to the last change of that region, once it has been
# still for 400 ms (the region grabbed when the X server's DAMAGE extension
# reports a drawing into the window: POLL=1 grabs it every millisecond
# instead, as before, which keeps a core busy on this machine). The same queries as `benches/gui.sh` types through
# `fsgui --bench` (which times itself from inside), ROUNDS times each.
#
#   benches/gui-latency.sh          (ENTRIES=1000000 BASE=/tmp/fsbench-gui by default)
#   BIN=/tmp/gui-rel TREE=/tmp/fsbench/t ROUNDS=3 benches/gui-latency.sh
#
# Environment: BIN (folder of fsgui, fsindexd, fsctl; release builds),
# TREE (default $BASE/t, made with mktree.py --seed 1 when missing), TYPED
# (queries separated by `;`), ROUNDS (default 3), QUIET_MS (default 400),
# MATCH_ACCENTS=1 (fsgui's ä=a toggle off: plain queries, as an fsindexd
# without `accents:ignore` takes them), KEEP=DIR (copies the raw figures and
# fsgui's FSGUI_TRACE log there), FSGUI_ENV (variables for fsgui, e.g.
# `LP_NUM_THREADS=1`), SETTLE=1 (type once the daemon's work after the
# first index is done: persisted, media metadata read; by default the keys
# come a few seconds after ready, while that work runs).
# Prints each round's p50/p99/max and the pooled figures, settled and
# first rows (the region's first change after the key), then each key's
# way split into its parts from fsgui's trace (FSGUI_TRACE=1, the same
# clock as xlatency's): key to the frame that read it, that frame to the
# query sent, the daemon's answer (and its own time inside), the answer to
# the frame that applied it, that frame's drawing, and the frame's end to
# the change on screen (tessellation, llvmpipe, the swap, the X server).
#
# Then, unless SCROLL=0, scrolling measured the same way: SCROLL_QUERY
# (default `e`: most names of the 1M tree match) typed, then the wheel
# turned a notch every 1000/60 ms, then PageDown pressed 30 times a second
# (a held key's repeat), SCROLL_SECS (default 5) each; each distinct grab
# of the table is a frame: frames per second, the longest gap between two.
# Needs Xvfb, xdotool, a C compiler with libX11/libXext headers, libXtst and
# libXdamage.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH=gui-latency
source "$HERE/lib.sh"
ENTRIES=${ENTRIES:-1000000}
BASE=${BASE:-/tmp/fsbench-gui}
BIN=${BIN:-$HERE/../target/release}
TREE=${TREE:-$BASE/t}
TYPED=${TYPED:-report;tax 2025;zanzibar;photo 2019;ar}
ROUNDS=${ROUNDS:-3}
for b in fsgui fsindexd fsctl; do [[ -x $BIN/$b ]] || die "$BIN/$b missing: cargo build --release -p fsgui -p fsindexd -p fsctl"; done
for t in Xvfb xdotool cc python3; do command -v "$t" >/dev/null || die "$t not found (apt-get install xvfb xdotool gcc libx11-dev libxext-dev libxtst6 libxdamage1)"; done
WORK=$(mktemp -d)
DAEMON_PID= XVFB_PID= GUI_PID=
cleanup() {
    [[ -z $GUI_PID ]] || kill "$GUI_PID" 2>/dev/null || true
    [[ -z $DAEMON_PID ]] || { kill -TERM "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; } || true
    [[ -z $XVFB_PID ]] || kill "$XVFB_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
cc -O2 -o "$WORK/xlatency" "$HERE/xlatency.c" -lX11 -lXext -l:libXtst.so.6 -l:libXdamage.so.1 || die "could not build xlatency.c"
[[ -d $TREE ]] || { log "making $TREE"; python3 "$HERE/mktree.py" --entries "$ENTRIES" --seed 1 --out "$TREE" >/dev/null; }

export FSINDEX_HOME=$WORK/home FSINDEX_NO_SPAWN=1
mkdir -p "$FSINDEX_HOME"
[[ ${MATCH_ACCENTS:-0} == 1 ]] && echo 'match_accents = true' >"$FSINDEX_HOME/fsgui.toml"
"$BIN/fsindexd" --root "$TREE" 2>"$WORK/daemon.log" &
DAEMON_PID=$!
log "indexing $TREE"
# Waited on, so the scan runs at normal priority (a scan nobody waits on
# runs at nice 19 and idle I/O: minutes on a busy machine).
until "$BIN/fsctl" status --wait >/dev/null 2>&1; do sleep 0.5; done
entries=$("$BIN/fsctl" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"])')
log "ready: $entries entries"
if [[ ${SETTLE:-0} == 1 ]]; then
    # A daemon in its steady state: the first index persisted and the
    # background work after it (media metadata, the lone characters) done.
    settled=0
    for _ in $(seq 600); do
        if "$BIN/fsctl" status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["persisted"] and not d["media"]["busy"] else 1)'; then
            settled=$((settled + 1))
            ((settled >= 5)) && break
        else
            settled=0
        fi
        sleep 1
    done
    log "background work done"
fi

Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$WORK/display" 2>/dev/null &
XVFB_PID=$!
for _ in $(seq 100); do [[ -s $WORK/display ]] && break; sleep 0.1; done
export DISPLAY=:$(head -n1 "$WORK/display") LIBGL_ALWAYS_SOFTWARE=1
unset WAYLAND_DISPLAY
# shellcheck disable=SC2086
env FSGUI_TRACE=1 ${FSGUI_ENV:-} "$BIN/fsgui" --size 1100x700 2>"$WORK/gui.log" &
GUI_PID=$!
for _ in $(seq 100); do W=$(xdotool search --name fsgui 2>/dev/null | head -1) && [[ -n $W ]] && break; sleep 0.1; done
sleep 2
# No window manager: give the window the keyboard, and the query box a click.
xdotool windowfocus --sync "$W"
xdotool mousemove 400 39 click 1
QUIET_WAIT=${QUIET_WAIT:-300}
wait_quiet
[[ ${POLL:-0} == 1 ]] || export WINDOW=$W
IFS=';' read -ra QS <<<"$TYPED"
for round in $(seq "$ROUNDS"); do
    log "round $round"
    # The table and the match count, below the query box (its cursor blinks).
    "$WORK/xlatency" 0 52 1100 615 "${QS[@]}" >"$WORK/round-$round.tsv"
done
if [[ ${SCROLL:-1} != 0 ]]; then
    # The query typed whole (xdotool), then the pointer over the table.
    xdotool key Escape
    xdotool type --delay 20 "${SCROLL_QUERY:-e}"
    sleep 3
    for how in wheel pagedown; do
        log "scrolling: $how"
        "$WORK/xlatency" 0 52 1100 615 --scroll "${SCROLL_SECS:-5}" "$how" >"$WORK/scroll-$how.tsv"
        # Back to the top for the next.
        xdotool key ctrl+Home
        sleep 1
    done
fi
python3 - "$WORK" "$ROUNDS" "$entries" "$QUIET" <<'PY'
import sys, statistics
work, rounds, entries, quiet = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]
pooled = []
print(f"keystroke to rows settled on screen, {entries} entries (machine quiet: {quiet})")
for r in range(1, rounds + 1):
    rows = [l.rstrip("\n").split("\t") for l in open(f"{work}/round-{r}.tsv")]
    ms = [float(x[1]) for x in rows if x[1] != "-"]
    pooled += ms
    slow = sorted(rows, key=lambda x: -float(x[1]) if x[1] != "-" else 0)[:3]
    print(f"round {r}: {len(ms)} keys, p50 {statistics.median(ms):.1f} ms, p99 {pct(ms, .99):.1f} ms, max {max(ms):.1f} ms; slowest: "
          + ", ".join(f"{x[0]!r} {x[1]}" for x in slow))
print(f"all rounds: {len(pooled)} keys, p50 {statistics.median(pooled):.1f} ms, p99 {pct(pooled, .99):.1f} ms")
first = []
for r in range(1, rounds + 1):
    first += [float(x.split("\t")[3]) for x in open(f"{work}/round-{r}.tsv") if x.split("\t")[3].strip() != "-"]
if first:
    print(f"first rows (first change after the key): p50 {statistics.median(first):.1f} ms, p99 {pct(first, .99):.1f} ms, max {max(first):.1f} ms")
import os
for how in ("wheel", "pagedown"):
    f = f"{work}/scroll-{how}.tsv"
    if os.path.exists(f):
        rows = [l.rstrip("\n").split("\t") for l in open(f)]
        per = [x[1] for x in rows if x[0] == "second"]
        figs = {x[0]: x[1] for x in rows if x[0] != "second"}
        print(f"scrolling ({how}): {figs['frames/s']} frames/s (per second: {' '.join(per)}), longest gap {figs['longest gap ms']} ms, {figs['inputs']} inputs, region grabbed {figs['grabs/s']} times/s")
PY
python3 "$HERE/gui-trace.py" "$WORK" "$ROUNDS" || true
if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp "$WORK"/*.tsv "$WORK"/*.log "$KEEP"/; fi
