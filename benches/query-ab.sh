#!/usr/bin/env bash
# Search and disk usage of two fsindexd builds (A, B) on one tree, in one
# run: each build's daemon indexes the tree, then hyperfine times whole
# `fsctl` processes (search --limit 0 for a rare, a common, a multi-term and
# a no-match query, a filter, and du --top 20). Made to show that the daemon's
# re-layout (issue 11) made nothing slower:
#
#   A=/tmp/bin-before B=target/release benches/query-ab.sh
#
# Environment: A, B (folders holding fsindexd and fsctl), TREE (default
# /tmp/fsbench/t, made by mktree.py with ENTRIES entries if missing), RUNS
# (hyperfine runs per command, default 30). Markdown on stdout.
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

QUERIES=("tax 2025" "report" "zanzibar" "qqxjnomatch" "ext:pdf")
declare -A MS

for side in A B; do
    dir=${!side}
    export FSINDEX_HOME=$WORK/$side
    mkdir -p "$FSINDEX_HOME"
    "$dir/fsindexd" --root "$TREE" >"$WORK/$side.log" 2>&1 &
    P=$!
    t0=$SECONDS
    until s=$("$dir/fsctl" status --json 2>/dev/null) && [[ $s == *'"state":"ready"'* ]]; do
        ((SECONDS - t0 < 600)) || die "$side did not get ready"
        sleep 0.1
    done
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
done

echo "| command (whole process, median of $RUNS) | A | B | B/A |"
echo "|---|---|---|---|"
labels=()
for q in "${QUERIES[@]}"; do labels+=("fsctl search --limit 0 $q"); done
labels+=("fsctl du TREE --top 20")
for i in "${!labels[@]}"; do
    a=${MS[A,$i]} b=${MS[B,$i]}
    printf '| `%s` | %s ms | %s ms | %.2fx |\n' "${labels[$i]}" "$a" "$b" "$(python3 -c "print($b/$a)")"
done
