#!/usr/bin/env bash
# Issue 36 on a many-core machine, in one command: the first index, an unchanged restart, RSS
# and search, with the daemon on every core and pinned (`taskset`) to fewer, against
# `updatedb`, `fd -HI` and `plocate -i` on the same tree in the same run. Prints Markdown.
#
#   B=target/release TREE=/tmp/fsbench/t benches/manycore.sh
#
# B: a folder holding fsindexd, fsctl and fsindex-extract-child (and fsctl-static, if there,
# timed beside fsctl). P: where updatedb.plocate, plocate, fdfind and hyperfine are (default:
# PATH). TREE: the tree; with TARBALL (a .tar.zst of it, made by `tar -C DIR -cf - t | zstd`),
# it is unpacked there first. CPUSETS: the daemon's CPU sets, `all` for none (default
# "all 0-3 0-1"); each also runs the daemon unpinned with FSINDEX_CORES=2 when CORES2=1
# (threads sized for 2 cores on every core: tells thread counts from scheduling apart).
# RUNS: hyperfine runs per query (default 12). OUT: where the report is copied (optional).
# BINS: several builds in one run, "LABEL=DIR LABEL=DIR" (default "this=$B"); SEARCHES: the
# labels whose searches are timed (default all).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
B=${B:-$here/../target/release}
BINS=${BINS:-this=$B}
SEARCHES=${SEARCHES:-$(for b in $BINS; do echo -n "${b%%=*} "; done)}
TREE=${TREE:-/tmp/fsbench/t}
RUNS=${RUNS:-12}
CPUSETS=${CPUSETS:-all 0-3 0-1}
[[ -n ${P:-} ]] && export PATH=$P:$PATH
W=$(mktemp -d /tmp/manycore.XXXX)
report=$W/report.md
trap 'pkill -x fsindexd 2>/dev/null || true; rm -rf "$W/h"' EXIT
say() { echo "$*" | tee -a "$report"; }
log() { echo "[$(date +%T)] $*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

if [[ ! -d $TREE ]]; then
    [[ -n ${TARBALL:-} ]] || { echo "no $TREE and no TARBALL" >&2; exit 2; }
    mkdir -p "$(dirname "$TREE")"
    t0=$(now); zstd -dc "$TARBALL" | tar -C "$(dirname "$TREE")" -xf -; log "unpacked in $(since "$t0") s"
fi
for t in updatedb.plocate plocate fdfind hyperfine; do command -v $t >/dev/null || { echo "$t not found" >&2; exit 2; }; done
entries=$(fdfind -HI --no-ignore . "$TREE" | wc -l)
say "# Many cores: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(uname -r)"
say ""
say "Tree: $TREE, $((entries + 1)) entries with the root. Builds: $BINS. Load at start: $(cut -d' ' -f1-3 /proc/loadavg)."
say ""

# Peers, twice each after a warm-up walk.
fdfind -HI . "$TREE" >/dev/null
secs() { local t0; t0=$(now); "$@" >/dev/null 2>&1; since "$t0"; }
db=$W/plocate.db
u=(); f=()
for _ in 1 2; do
    u+=("$(secs updatedb.plocate -U "$TREE" -o "$db" --require-visibility no --prunefs "" --prunepaths "" --prunenames "" --prune-bind-mounts no)")
    f+=("$(secs fdfind -HI . "$TREE")")
done
say "| peer | wall s |"
say "|---|---|"
say "| \`updatedb\` (one thread; $(plocate -d "$db" -c /) paths) | $(printf '%.2f ' "${u[@]}")|"
say "| \`fd -HI\` ($(nproc) threads) | $(printf '%.2f ' "${f[@]}")|"
say ""

export FSINDEX_NO_SPAWN=1
queries=("report" "IMG_1" "tax 2025" "zzzznotfound" "node_modules" "z" "ar" "café jpg")

rss_mib() { "$B/fsctl" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["rss_bytes"] >> 20)'; }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
# Starts the daemon (pinned to $1 unless "all") on $FSINDEX_HOME: its pid in D, the seconds
# until ready in T (CPU seconds and RSS then in CPU and RSS), until persisted in PT.
start() {
    local pin=() t0
    [[ $1 == all ]] || pin=(taskset -c "$1")
    t0=$(now)
    "${pin[@]}" "$B/fsindexd" --root "$TREE" >/dev/null 2>&1 &
    D=$!
    until "$B/fsctl" status --json 2>/dev/null | grep -q '"state":"ready"'; do sleep 0.02; done
    T=$(since "$t0"); CPU=$(cpu_s "$D"); RSS=$(rss_mib)
    # RSS 10 s after ready; a build that answers before the index is on disk says
    # "persisted": false until it is.
    local tr persisted=""
    tr=$(now)
    PT=$T
    "$B/fsctl" status --json | grep -q '"persisted":false' && persisted=no
    while :; do
        if [[ $persisted == no ]] && "$B/fsctl" status --json | grep -q '"persisted":true'; then
            PT=$(since "$t0"); persisted=yes
        fi
        if [[ -z ${RSS10:-} ]] && (( $(since "$tr" | cut -d. -f1) >= 10 )); then RSS10=$(rss_mib); fi
        [[ -n ${RSS10:-} && $persisted != no ]] && break
        sleep 0.05
    done
}
stop() { kill "$D"; wait "$D" 2>/dev/null || true; }
# hyperfine median in ms of a whole process.
hf() { hyperfine -N -i --warmup 3 --runs "$RUNS" --export-json "$W/hf.json" "$1" >/dev/null 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.1f" % (r["median"]*1000))' "$W/hf.json"; }
# The daemon's own p50 for the search lines logged since line $1.
inner() { cat "$FSINDEX_HOME"/logs/* | tail -n +$(($1 + 1)) | sed -n 's/.*search us=\([0-9]*\).*/\1/p' | sort -n |
    awk '{ a[NR] = $1 } END { if (NR) printf "%.1f", a[int(NR / 2) + 1] / 1000; else printf "-" }'; }

say "| build, daemon on | first index until ready s | until persisted s | CPU s at ready | RSS at ready / +10 s MiB | unchanged restart until ready s | CPU s | RSS +10 s MiB |"
say "|---|---|---|---|---|---|---|---|"
declare -A search
cpus=()
for cs in $CPUSETS; do cpus+=("$cs"); done
[[ -n ${CORES2:-} ]] && cpus+=("all/cores2")
configs=()
for b in $BINS; do for cs in "${cpus[@]}"; do configs+=("${b%%=*}:$cs"); done; done
for c in "${configs[@]}"; do
    label=${c%%:*}
    for b in $BINS; do [[ ${b%%=*} == "$label" ]] && B=${b#*=}; done
    c=${c#*:}
    [[ $c == all/cores2 ]] && cs=all || cs=$c
    if [[ $c == */cores2 ]]; then export FSINDEX_CORES=2; else unset FSINDEX_CORES; fi
    export FSINDEX_HOME=$W/h
    rm -rf "$W/h"; mkdir -p "$W/h"
    log "$c: first index"
    RSS10=; start "$cs"; r1=$T; c1=$CPU; m1=$RSS; p1=$PT; m1b=$RSS10; stop
    log "$c: restart"
    RSS10=; start "$cs"; r2=$T; c2=$CPU; m2=$RSS10; stop
    say "| $label, $c | $r1 | $p1 | $c1 | $m1 / $m1b | $r2 | $c2 | $m2 |"
    [[ " $SEARCHES " == *" $label "* ]] || continue
    # Searches on a third start, with the daemon's own timings logged.
    log "$c: searches"
    RSS10=x FSINDEX_LOG='info,fsindexd::engine::read=debug' start "$cs"
    sleep 1
    for q in "${queries[@]}"; do
        n=$(cat "$FSINDEX_HOME"/logs/* | wc -l)
        s="$(hf "$B/fsctl search --limit 0 $q")"
        [[ -x $B/fsctl-static ]] && s="$s / $(hf "$B/fsctl-static search --limit 0 $q")"
        sleep 0.2
        search[$label:$c/$q]="$s ($(inner "$n"))"
    done
    stop
done
say ""
say "Search, whole processes, hyperfine medians in ms (fsctl, then the static fsctl where the build has one; the daemon's own p50 in brackets); \`plocate -i\` unpinned:"
say ""
hdr="| query | plocate -i |"; sep="|---|---|"
shown=()
for c in "${configs[@]}"; do [[ " $SEARCHES " == *" ${c%%:*} "* ]] && shown+=("$c"); done
for c in "${shown[@]}"; do hdr="$hdr ${c%%:*}, daemon on ${c#*:} |"; sep="$sep---|"; done
say "$hdr"; say "$sep"
for q in "${queries[@]}"; do
    # shellcheck disable=SC2086 # a query's words are plocate's patterns
    row="| \`$q\` | $(hf "plocate -i -d $db $q") |"
    for c in "${shown[@]}"; do row="$row ${search[$c/$q]} |"; done
    say "$row"
done
say ""
say "Load at end: $(cut -d' ' -f1-3 /proc/loadavg)."
[[ -n ${OUT:-} ]] && cp "$report" "$OUT/manycore.md"
exit 0
