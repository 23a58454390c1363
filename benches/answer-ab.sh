#!/usr/bin/env bash
# The daemon's CPU and the whole process's wall time per whole answer
# (`fsctl search --limit 0 Q`: every path of a large answer), for one or
# more builds on copies of one kept index (persisted, media metadata read),
# all daemons up at once and taken in turns, so a busy machine weighs on
# each alike, started afresh each round in the round's order (the order
# turned every other round). A daemon's CPU is read from /proc around each query's REPS
# runs, after its start-up work has settled (its media pass done, then
# under 30 ms of CPU in 2 s).
#
#   BINS="A=/tmp/main-rel B=target/release" benches/answer-ab.sh
#   BINS="A=/tmp/a B=/tmp/b" QUERIES='ar;kind:image;IMG;report' ROUNDS=3 REPS=10 benches/answer-ab.sh
#
# Environment: BINS (label=folder of fsindexd and fsctl, space-separated;
# the first label's build makes the index), TREE (default /tmp/fsbench/t,
# made with mktree.py --entries 1000000 --seed 1 when missing), QUERIES
# (separated by `;`), ROUNDS (default 3), REPS (default 10).
# Prints, per query and build, the CPU and wall time per answer of each
# round, then the median of the rounds.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH=answer-ab
source "$HERE/lib.sh"
TREE=${TREE:-/tmp/fsbench/t}
QUERIES=${QUERIES:-ar;kind:image;IMG;report}
ROUNDS=${ROUNDS:-3}
REPS=${REPS:-10}
read -ra BUILDS <<<"${BINS:?BINS=\"label=dir ...\" (folders of fsindexd and fsctl)}"
for b in "${BUILDS[@]}"; do
    for p in fsindexd fsctl; do [[ -x ${b#*=}/$p ]] || die "${b#*=}/$p missing"; done
done
[[ -d $TREE ]] || { log "making $TREE"; python3 "$HERE/mktree.py" --entries 1000000 --seed 1 --out "$TREE" >/dev/null; }
WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
export FSINDEX_NO_SPAWN=1
ticks=$(getconf CLK_TCK)
# utime + stime of a process, in ms.
cpu_ms() { awk -v t="$ticks" '{ print ($14 + $15) * 1000 / t }' "/proc/$1/stat"; }
# The first index on disk and its media pass done.
done_with_index() { FSINDEX_HOME=$1 "$2/fsctl" status --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d.get("persisted") and not (d.get("media") or {}).get("busy") else 1)'; }

first=${BUILDS[0]#*=}
log "indexing $TREE with ${BUILDS[0]%%=*}"
mkdir -p "$WORK/base"
FSINDEX_HOME=$WORK/base "$first/fsindexd" --root "$TREE" 2>/dev/null &
P=$!
until FSINDEX_HOME=$WORK/base "$first/fsctl" status --wait >/dev/null 2>&1; do sleep 0.5; done
until done_with_index "$WORK/base" "$first"; do sleep 1; done
kill "$P"
wait "$P" 2>/dev/null || true

# Copies of the index, one per build.
for b in "${BUILDS[@]}"; do
    label=${b%%=*}
    cp -a "$WORK/base" "$WORK/$label"
done
declare -A PID
# Starts the daemons in the order given and waits for their start-up work
# to settle.
start_all() {
    PIDS=()
    for b in "$@"; do
        label=${b%%=*} dir=${b#*=}
        FSINDEX_HOME=$WORK/$label "$dir/fsindexd" --root "$TREE" 2>/dev/null &
        PID[$label]=$!
        PIDS+=("$!")
        until FSINDEX_HOME=$WORK/$label "$dir/fsctl" status --wait >/dev/null 2>&1; do sleep 0.5; done
    done
    for b in "$@"; do
        label=${b%%=*} dir=${b#*=}
        until done_with_index "$WORK/$label" "$dir"; do sleep 1; done
        for _ in $(seq 120); do
            a=$(cpu_ms "${PID[$label]}")
            sleep 2
            z=$(cpu_ms "${PID[$label]}")
            awk -v a="$a" -v z="$z" 'BEGIN { exit !(z - a < 30) }' && break
        done
    done
}
stop_all() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    PIDS=()
}
IFS=';' read -ra QS <<<"$QUERIES"
out=$WORK/figures.tsv
for round in $(seq "$ROUNDS"); do
    # Every other round the other way round, the daemons started afresh in
    # that order: whichever daemon is started second reads 20-30% more CPU
    # per answer with the very same binary (seen in an A/A run), and the
    # one measured second pays for what the first left behind.
    order=("${BUILDS[@]}")
    if ((round % 2 == 0)); then
        order=()
        for ((k = ${#BUILDS[@]} - 1; k >= 0; k--)); do order+=("${BUILDS[k]}"); done
    fi
    start_all "${order[@]}"
    log "round $round ($(for b in "${order[@]}"; do printf '%s ' "${b%%=*}"; done)), load $(cut -d' ' -f1-3 /proc/loadavg)"
    for q in "${QS[@]}"; do
        for b in "${order[@]}"; do
            label=${b%%=*} dir=${b#*=}
            pid=${PID[$label]}
            a=$(cpu_ms "$pid")
            t0=$(date +%s%N)
            for _ in $(seq "$REPS"); do
                # shellcheck disable=SC2086 # a query's words are separate terms
                FSINDEX_HOME=$WORK/$label "$dir/fsctl" search --limit 0 $q >/dev/null
            done
            t1=$(date +%s%N)
            z=$(cpu_ms "$pid")
            printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$q" "$label" \
                "$(awk -v a="$a" -v z="$z" -v n="$REPS" 'BEGIN { printf "%.1f", (z - a) / n }')" \
                "$(awk -v a="$t0" -v z="$t1" -v n="$REPS" 'BEGIN { printf "%.1f", (z - a) / 1e6 / n }')" >>"$out"
        done
    done
    stop_all
done
python3 - "$out" <<'PY'
import sys, statistics, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
by = collections.OrderedDict()
for r, q, label, cpu, wall in rows:
    by.setdefault((q, label), []).append((float(cpu), float(wall)))
print("query\tbuild\tdaemon CPU per answer (ms), each round\twall per answer (ms), each round\tmedian CPU / wall")
for (q, label), xs in by.items():
    cpu = [c for c, _ in xs]
    wall = [w for _, w in xs]
    print(f"{q}\t{label}\t{' / '.join(f'{c:.0f}' for c in cpu)}\t{' / '.join(f'{w:.0f}' for w in wall)}\t"
          f"{statistics.median(cpu):.0f} / {statistics.median(wall):.0f}")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
