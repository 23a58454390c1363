#!/usr/bin/env bash
# Times fsindexd's initial index and two unchanged-tree restarts on one tree
# (until `fsctl status` says ready, and the daemon's CPU seconds by then, the writer's and the
# name index thread's among them), with RSS and where it goes (`status
# --json`'s memory, SETTLE seconds after persisted) and the daemon's own phase log;
# a first index is timed until ready (searchable) and until persisted (on disk).
# A quicker companion to compare.sh (which also times the peers).
#
#   ENTRIES=1000000 benches/index-restart.sh      # tree made by mktree.py, reused
#
# KEEP=dir keeps the index (FSINDEX_HOME) there afterwards, for INDEX= of
# benches/floor.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ENTRIES=${ENTRIES:-1000000}
TREE=${TREE:-/tmp/fsbench/t}
[[ -n ${NO_BUILD:-} ]] || cargo build --release -q -p fsindexd -p fsctl --manifest-path "$here/../Cargo.toml"
B=${B:-${CARGO_TARGET_DIR:-$here/../target}/release}
if [[ ! -d $TREE ]]; then python3 "$here/mktree.py" --entries "$ENTRIES" --out "$TREE" >/dev/null; fi
H=$(mktemp -d /tmp/fsindex-ir.XXXX)
export FSINDEX_HOME=$H FSINDEX_NO_SPAWN=1
trap 'kill $P 2>/dev/null || true; rm -rf "$H"' EXIT
ready() { while :; do s=$("$B/fsctl" status --json 2>/dev/null) && [[ $s == *'"state":"ready"'* ]] && break; sleep 0.02; done; }
# Read SETTLE seconds after persisted: the writer has gone idle and given back
# what the scan left over; `memory` is where the rest goes.
figures() { sleep "${SETTLE:-3}"; "$B/fsctl" status --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
m = d.get("memory") or {}
parts = ", ".join("{} {:.1f}".format(k.replace("_bytes", ""), v / 2**20) for k, v in m.items())
print("entries {:,}, rows written {:,}, RSS {} MiB ({} MiB)".format(d["entries"], d["rows_written"], d["rss_bytes"] >> 20, parts))'; }
# Until the index is on disk as well (a first index is ready before; a build
# without the field is persisted at ready).
persisted() { while :; do s=$("$B/fsctl" status --json 2>/dev/null) && [[ $s != *'"persisted":false'* ]] && break; sleep 0.02; done; }
for run in initial restart restart; do
  t0=$(date +%s.%N); "$B/fsindexd" --root "$TREE" & P=$!; ready; t1=$(date +%s.%N)
  cpu=$(awk '{print ($14 + $15) / 100}' "/proc/$P/stat")   # the daemon's CPU seconds until ready
  rss_ready=$(awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$P/status")
  persisted; t2=$(date +%s.%N)
  printf '%-8s ready %.2f s (RSS %s MiB), persisted %.2f s (CPU %s s), load %s\n' "$run" "$(echo "$t1 - $t0" | bc)" "$rss_ready" "$(echo "$t2 - $t0" | bc)" "$(awk '{print ($14 + $15) / 100}' "/proc/$P/stat")" "$(cut -d' ' -f1 /proc/loadavg)"
  # The writer thread's share (the walk's threads have ended by then).
  thread_cpu() { for t in /proc/$P/task/*; do [[ $(cat "$t/comm") == "$1" ]] && awk '{print ($14 + $15) / 100}' "$t/stat"; done; true; }
  writer=$(thread_cpu fsindex-writer) mirror=$(thread_cpu fsindex-mirror)
  printf '%-8s %.2f s, CPU %s s (writer %s s, name index %s s)  %s\n' "$run" "$(echo "$t1 - $t0" | bc)" "$cpu" "${writer:-?}" "${mirror:-on the writer}" "$(figures)"
  kill "$P"; wait "$P" || true
done
grep -hE 'snapshot loaded|scan done' "$H"/logs/*.log | sed 's/^.*INFO //'
if [[ -n ${KEEP:-} ]]; then rm -rf "$KEEP"; mv "$H" "$KEEP"; echo "index kept in $KEEP/index.db"; fi
