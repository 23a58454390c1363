#!/usr/bin/env bash
# Resident memory of an idle fsindexd, then after large searches: restarts
# the daemon on a kept index of TREE, reads its VmRSS 3 s after ready, runs
# five rounds of whole-answer searches, and reads VmRSS again 4 s later (the
# trimmer gives memory back 2-4 s after queries stop).
#
#   benches/index-restart.sh                 # once, to make the index in $FSINDEX_HOME
#   FSINDEX_HOME=/tmp/fh-1m benches/memory-after-queries.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
TREE=${TREE:-/tmp/fsbench/t}
B=${B:-${CARGO_TARGET_DIR:-$here/../target}/release}
: "${FSINDEX_HOME:?set FSINDEX_HOME to a home holding an index of TREE}"
export FSINDEX_HOME FSINDEX_NO_SPAWN=1
rss() { awk '/VmRSS/ { print int($2 / 1024) }' "/proc/$1/status"; }
"$B/fsindexd" --root "$TREE" >/dev/null 2>&1 & P=$!
trap 'kill $P 2>/dev/null || true' EXIT
until "$B/fsctl" status --json 2>/dev/null | grep -q '"state":"ready"'; do sleep 0.05; done
sleep 3
idle=$(rss $P)
t0=$(date +%s.%N)
for _ in 1 2 3 4 5; do
  for q in ar IMG kind:image report 'tax 2025'; do "$B/fsctl" search --limit 0 "$q" >/dev/null; done
done
t1=$(date +%s.%N)
sleep 4
printf 'idle %d MiB -> 4 s after 25 searches %d MiB (searches took %.2f s)\n' \
  "$idle" "$(rss $P)" "$(echo "$t1 - $t0" | bc)"
