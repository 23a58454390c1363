#!/usr/bin/env bash
# A restart that resumes unfinished background work (issue 36): a first index of TREE, the
# daemon stopped 10 s after ready (its media pass still queued), then restarted and timed until
# `status` says ready, with the daemon's CPU seconds by then. Builds interleaved, ROUNDS rounds.
#
#   TREE=/tmp/fsbench/t benches/restart-pending.sh /tmp/before-bin /tmp/after-bin
set -euo pipefail
TREE=${TREE:-/tmp/fsbench/t}
(($#)) || { echo "usage: $0 BIN_DIR..." >&2; exit 2; }
ready() { until "$1/fsctl" status --json 2>/dev/null | grep -q '"state":"ready"'; do sleep 0.05; done; }
for round in $(seq "${ROUNDS:-2}"); do
  for B in "$@"; do
    H=$(mktemp -d /tmp/fsindex-rp.XXXX); export FSINDEX_HOME=$H FSINDEX_NO_SPAWN=1
    "$B/fsindexd" --root "$TREE" >/dev/null 2>&1 & P=$!
    ready "$B"; sleep 10
    q=$("$B/fsctl" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["media"]["queued"])')
    kill "$P"; wait "$P" || true
    t0=$(date +%s.%N); "$B/fsindexd" --root "$TREE" >/dev/null 2>&1 & P=$!
    ready "$B"
    t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$P/stat")
    echo "$B round $round: media queued at the stop $q; restart until ready $t s, daemon CPU $cpu s, load $(cut -d' ' -f1 /proc/loadavg)"
    kill "$P"; wait "$P" || true; rm -rf "$H"
  done
done
