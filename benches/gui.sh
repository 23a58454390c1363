#!/usr/bin/env bash
# fsgui at 1M entries, under Xvfb with Mesa's software OpenGL (llvmpipe, so
# frame times include rasterising on the CPU; a GPU only makes them lower):
#   - keystroke to first rows painted, p50/p99, over scripted queries typed
#     one key at a time through the query box (real key events);
#   - frame times while scrolling through a million matches at 400 px per
#     frame (faster than any fling), and how many frames showed rows still
#     loading;
#   - RSS of fsgui holding a million-match query, and rows held;
#   - start-up to first frame;
#   - the floor: `fsctl search` as a whole process for the same queries,
#     first page (--limit 200) and all results.
#
#   benches/gui.sh            (ENTRIES=1000000 BASE=/tmp/fsbench-gui by default)
#   INDEX=DIR benches/gui.sh  (a restart of a kept index of BASE/t, typed into 40 s after ready)
#
# Needs release binaries (cargo build --release -p fsgui -p fsindexd -p
# fsctl), Xvfb, python3 (benches/mktree.py) and hyperfine for the floor.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH=gui
source "$HERE/lib.sh"
ENTRIES=${ENTRIES:-1000000}
BASE=${BASE:-/tmp/fsbench-gui}
BIN=${BIN:-$HERE/../target/release}
TYPED=${TYPED:-report;tax 2025;zanzibar;photo 2019;ar}
SCROLL=${SCROLL:-!qqqzzz}
for b in fsgui fsindexd fsctl; do [[ -x $BIN/$b ]] || die "$BIN/$b missing: cargo build --release -p fsgui -p fsindexd -p fsctl"; done
for t in Xvfb python3 hyperfine; do command -v "$t" >/dev/null || die "$t not found (apt-get install xvfb hyperfine)"; done
mkdir -p "$BASE"
WORK=$(mktemp -d)
DAEMON_PID= XVFB_PID=
cleanup() {
    [[ -z $DAEMON_PID ]] || { kill -TERM "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; } || true
    [[ -z $XVFB_PID ]] || kill "$XVFB_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

ROOT=$BASE/t
want="entries=$ENTRIES seed=1 mktree=$(sha256sum "$HERE/mktree.py" | cut -c1-16)"
if [[ ! -d $ROOT || $(cat "$BASE/t.stamp" 2>/dev/null) != "$want" ]]; then
    log "making $ROOT ($want)"
    rm -rf "$ROOT" "$BASE/t.stamp"
    python3 "$HERE/mktree.py" --entries "$ENTRIES" --seed 1 --out "$ROOT" >/dev/null
    echo "$want" >"$BASE/t.stamp"
fi

export FSINDEX_HOME=$WORK/home FSINDEX_NO_SPAWN=1
mkdir -p "$FSINDEX_HOME"
# INDEX=DIR: an unchanged restart of a copy of a kept index of the tree
# instead of a first index, typed into SETTLE seconds (default 40) after
# ready.
[[ -z ${INDEX:-} ]] || cp "$INDEX"/index.db* "$FSINDEX_HOME/"
"$BIN/fsindexd" --root "$ROOT" 2>"$WORK/daemon.log" &
DAEMON_PID=$!
log "indexing $ROOT"
until "$BIN/fsctl" status --wait >/dev/null 2>&1; do sleep 0.5; done
[[ -z ${INDEX:-} ]] || sleep "${SETTLE:-40}"
entries=$("$BIN/fsctl" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"])')
log "ready: $entries entries"

Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$WORK/display" 2>/dev/null &
XVFB_PID=$!
for _ in $(seq 100); do [[ -s $WORK/display ]] && break; sleep 0.1; done
export DISPLAY=:$(head -n1 "$WORK/display") LIBGL_ALWAYS_SOFTWARE=1
unset WAYLAND_DISPLAY

QUIET_WAIT=${QUIET_WAIT:-300}
wait_quiet
for run in 1 2 3; do
    log "fsgui --bench, run $run"
    "$BIN/fsgui" --size 1100x700 --bench "$WORK/gui-$run.json" --bench-typed "$TYPED" --bench-scroll "$SCROLL" 2>>"$WORK/gui.log"
    cat "$WORK/gui-$run.json"
done

log "floor: fsctl search, whole process"
IFS=';' read -ra QS <<<"$TYPED"
for q in "${QS[@]}" "$SCROLL"; do
    total=$("$BIN/fsctl" search --count "$q" 2>/dev/null || true)
    hyperfine -N -i --warmup 3 --min-runs 20 --style none --export-json "$WORK/hf.json" \
        "$BIN/fsctl search --limit 200 '$q'" "$BIN/fsctl search '$q'" >/dev/null 2>&1 || true
    python3 - "$WORK/hf.json" "$q" "$total" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
print(f"fsctl {sys.argv[2]!r} ({sys.argv[3]} matches): first 200 {r[0]['median']*1e3:.1f} ms median, all {r[1]['median']*1e3:.1f} ms median")
EOF
done
echo "machine quiet: $QUIET; tree: $entries entries (benches/mktree.py --entries $ENTRIES --seed 1)"
