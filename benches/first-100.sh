#!/usr/bin/env bash
# The daemon's own time for the first 100 results: restarts fsindexd on a
# kept index of TREE, runs `fsctl search --limit 100 Q` REPS times per query,
# and prints the p50 and p99 of the daemon's `search us=` debug lines. The
# figures of issue 16's sixth stop were taken with it, two builds
# interleaved:
#
#   benches/index-restart.sh     # once, to make the index in $FSINDEX_HOME
#   for b in /tmp/old /tmp/new; do FSINDEX_HOME=/tmp/fh-1m B=$b benches/first-100.sh ar IMG ext:pdf; done
#
# Environment: FSINDEX_HOME (a home holding an index of TREE), TREE (default
# /tmp/fsbench/t), B (folder of fsindexd and fsctl; default target/release),
# REPS (default 40). Arguments: the queries (one argument each; spaces
# split it into terms).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
TREE=${TREE:-/tmp/fsbench/t}
B=${B:-${CARGO_TARGET_DIR:-$here/../target}/release}
REPS=${REPS:-40}
: "${FSINDEX_HOME:?set FSINDEX_HOME to a home holding an index of TREE}"
(($#)) || { echo "usage: $0 QUERY..." >&2; exit 2; }
export FSINDEX_HOME FSINDEX_NO_SPAWN=1
FSINDEX_LOG='info,fsindexd::engine=debug' "$B/fsindexd" --root "$TREE" >/dev/null 2>&1 &
P=$!
trap 'kill $P 2>/dev/null || true' EXIT
until "$B/fsctl" status --json 2>/dev/null | grep -q '"state":"ready"'; do sleep 0.1; done
sleep 2
log_lines() { cat "$FSINDEX_HOME"/logs/* | wc -l; }
for q in "$@"; do
    n=$(log_lines)
    # shellcheck disable=SC2086 # a query's words are separate terms
    for _ in $(seq "$REPS"); do "$B/fsctl" search --limit 100 $q >/dev/null 2>&1 || true; done
    sleep 1
    cat "$FSINDEX_HOME"/logs/* | tail -n +$((n + 1)) | sed -n 's/.*search us=\([0-9]*\).*/\1/p' | sort -n |
        awk -v q="$q" -v b="$B" '{ a[NR] = $1 } END { printf "%s %-20s p50 %.1f p99 %.1f ms (%d runs)\n", b, q, a[int(NR / 2) + 1] / 1000, a[int(NR * 0.99)] / 1000, NR }'
done
