#!/usr/bin/env bash
# Search and disk usage of two fsindexd builds (A, B) on one tree, in one
# run: each build's daemon indexes the tree, then hyperfine times whole
# `fsctl` processes (search --limit 0 for a rare, a common, a multi-term and
# a no-match query, a filter, and du --top 20). Made to show that the daemon's
# re-layout (issue 11) made nothing slower:
#
#   A=/tmp/bin-before B=target/release benches/query-ab.sh
#   A=... B=... TREE=/tmp/fsbench/real ROUNDS=2 benches/query-ab.sh driver include
#
# Environment: A, B (folders holding fsindexd and fsctl), TREE (default
# /tmp/fsbench/t, made by mktree.py with ENTRIES entries if missing), RUNS
# (hyperfine runs per command, default 30), ROUNDS (A then B, this many
# times, default 1; a column each), SETTLE (seconds between ready and
# timing, default 3). Arguments: the queries, if not the
# default set. Markdown on stdout.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=query-ab
# shellcheck source=benches/lib.sh
source "$HERE/lib.sh"
A=${A:?A=folder of the first fsindexd/fsctl build}
B=${B:?B=folder of the second fsindexd/fsctl build}
TREE=${TREE:-/tmp/fsbench/t}
ENTRIES=${ENTRIES:-1000000}
RUNS=${RUNS:-30}
command -v hyperfine >/dev/null || die "hyperfine not found (apt-get install hyperfine)"
[[ -d $TREE ]] || { log "making $TREE ($ENTRIES entries)"; python3 "$HERE/mktree.py" --entries "$ENTRIES" --out "$TREE" >/dev/null; }
WORK=$(mktemp -d /tmp/query-ab.XXXX)
P=
trap '[[ -n $P ]] && kill "$P" 2>/dev/null; rm -rf "$WORK"' EXIT

ROUNDS=${ROUNDS:-1}
QUERIES=("tax 2025" "report" "zanzibar" "qqxjnomatch" "ext:pdf")
(($#)) && QUERIES=("$@")
declare -A MS

for ((round = 1; round <= ROUNDS; round++)); do for ab in A B; do
    side=$ab$round
    dir=${!ab}
    export FSINDEX_HOME=$WORK/$side
    mkdir -p "$FSINDEX_HOME"
    "$dir/fsindexd" --root "$TREE" >"$WORK/$side.log" 2>&1 &
    P=$!
    t0=$SECONDS
    until s=$("$dir/fsctl" status --json 2>/dev/null) && [[ $s == *'"state":"ready"'* ]]; do
        ((SECONDS - t0 < 600)) || die "$side did not get ready"
        sleep 0.1
    done
    # As search-bench.sh does: let the writer go idle (its checkpoint and
    # the snapshot's compaction) before timing.
    sleep "${SETTLE:-3}"
    log "$side ready; timing"
    cmds=()
    for q in "${QUERIES[@]}"; do cmds+=("$dir/fsctl search --limit 0 $q"); done
    cmds+=("$dir/fsctl du $TREE --top 20")
    hyperfine -N -i --warmup 3 --runs "$RUNS" --export-json "$WORK/$side.json" --output=null "${cmds[@]}" >&2
    i=0
    while read -r ms; do MS[$side,$i]=$ms; i=$((i + 1)); done < <(python3 -c '
import json,sys
for r in json.load(open(sys.argv[1]))["results"]: print("%.2f" % (r["median"]*1000))' "$WORK/$side.json")
    kill "$P"; wait "$P" 2>/dev/null || true; P=
done; done

head="| command (whole process, median of $RUNS) |" rule="|---|"
for ((round = 1; round <= ROUNDS; round++)); do head+=" A | B | B/A |"; rule+="---|---|---|"; done
echo "$head"; echo "$rule"
labels=()
for q in "${QUERIES[@]}"; do labels+=("fsctl search --limit 0 $q"); done
labels+=("fsctl du TREE --top 20")
for i in "${!labels[@]}"; do
    row="| \`${labels[$i]}\` |"
    for ((round = 1; round <= ROUNDS; round++)); do
        a=${MS[A$round,$i]} b=${MS[B$round,$i]}
        row+=$(printf ' %s ms | %s ms | %.2fx |' "$a" "$b" "$(python3 -c "print($b/$a)")")
    done
    echo "$row"
done
