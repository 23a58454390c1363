#!/usr/bin/env bash
# fsgui's CPU when nothing happens and while the daemon scans, as a share of
# one core (utime+stime from /proc over the interval), under Xvfb with
# Mesa's llvmpipe (every frame is rasterised on the CPU, so a frame drawn
# for nothing costs what a user's laptop fan hears):
#   - idle in each view (search with rows, disk usage, duplicates), after
#     the view settled, over IDLE_SECS;
#   - during a daemon's initial scan of ENTRIES entries (from the daemon's
#     start until `fsctl status` says ready), with the window already open
#     and settled on the search view (it calls the daemon until it answers).
#
#   benches/gui-cpu.sh        (FSGUI=path/to/fsgui BIN=dir of fsindexd+fsctl,
#                              ENTRIES=300000 IDLE_SECS=15 BASE=/tmp/fsbench-guicpu)
#
# FSGUI may name another build (before/after a change). Needs Xvfb, xvfb-run
# and python3 (benches/mktree.py).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${BIN:-$HERE/../target/release}
FSGUI=${FSGUI:-$BIN/fsgui}
ENTRIES=${ENTRIES:-300000}
IDLE_SECS=${IDLE_SECS:-15}
BASE=${BASE:-/tmp/fsbench-guicpu}
for b in "$FSGUI" "$BIN/fsindexd" "$BIN/fsctl"; do [[ -x $b ]] || { echo "$b missing" >&2; exit 2; }; done
for t in Xvfb python3; do command -v "$t" >/dev/null || { echo "$t not found" >&2; exit 2; }; done
mkdir -p "$BASE"
ROOT=$BASE/t
if [[ ! -f $BASE/made-$ENTRIES ]]; then
    rm -rf "$ROOT" "$BASE"/made-*
    python3 "$HERE/mktree.py" --entries "$ENTRIES" --seed 1 --out "$ROOT" >/dev/null
    touch "$BASE/made-$ENTRIES"
fi
WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$WORK/display" 2>/dev/null &
PIDS+=($!)
for _ in $(seq 100); do [[ -s $WORK/display ]] && break; sleep 0.1; done
export DISPLAY=:$(head -n1 "$WORK/display") LIBGL_ALWAYS_SOFTWARE=1 FSINDEX_NO_SPAWN=1
unset WAYLAND_DISPLAY
TICK=$(getconf CLK_TCK)

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Share of one core used by PID over SECS seconds, in percent.
cpu_over() {
    local pid=$1 secs=$2 a b
    a=$(ticks "$pid"); sleep "$secs"; b=$(ticks "$pid")
    python3 -c "print(f'{($b - $a) / $TICK / $secs * 100:.2f}')"
}
ready() { "$BIN/fsctl" status --json 2>/dev/null | grep -q '"state":"ready"'; }
start_daemon() {
    export FSINDEX_HOME=$1
    mkdir -p "$FSINDEX_HOME"
    "$BIN/fsindexd" --root "$ROOT" 2>/dev/null &
    DAEMON=$!
    PIDS+=($DAEMON)
    for _ in $(seq 300); do [[ -S $FSINDEX_HOME/fsindexd.sock ]] && break; sleep 0.1; done
}
stop_daemon() { kill -TERM "$DAEMON"; wait "$DAEMON" 2>/dev/null || true; }

# During the initial scan: the window open first (calling a daemon not yet
# there) and settled, then a daemon with a fresh index; measured from the
# daemon's start until it is ready, so the window's own start-up is not in it.
export FSINDEX_HOME=$WORK/scan
mkdir -p "$FSINDEX_HOME"
"$FSGUI" --size 1000x650 --query report 2>"$WORK/fsgui-scan.log" &
GUI=$!
PIDS+=($GUI)
sleep 8
kill -0 "$GUI" 2>/dev/null || { echo "fsgui exited:" >&2; cat "$WORK/fsgui-scan.log" >&2; exit 1; }
t0=$(date +%s.%N); a=$(ticks "$GUI")
start_daemon "$WORK/scan"
until ready; do sleep 0.2; done
t1=$(date +%s.%N); b=$(ticks "$GUI")
echo "scan: $(python3 -c "print(f'{$t1 - $t0:.1f}')") s, fsgui $(python3 -c "print(f'{($b - $a) / $TICK / ($t1 - $t0) * 100:.2f}')")% of a core"
kill -TERM "$GUI"; wait "$GUI" 2>/dev/null || true

# Idle in each view, the index ready.
for view in search du dupes; do
    # Xvfb under load now and then refuses a connection: up to 3 tries.
    for _ in 1 2 3; do
        "$FSGUI" --size 1000x650 --view "$view" --query report 2>"$WORK/fsgui-$view.log" &
        GUI=$!
        PIDS+=($GUI)
        sleep 8
        kill -0 "$GUI" 2>/dev/null && break
    done
    if ! kill -0 "$GUI" 2>/dev/null; then
        echo "fsgui ($view view) exited:" >&2; cat "$WORK/fsgui-$view.log" >&2; continue
    fi
    echo "idle, $view view: $(cpu_over "$GUI" "$IDLE_SECS")% of a core over $IDLE_SECS s"
    kill -TERM "$GUI"; wait "$GUI" 2>/dev/null || true
done
stop_daemon
