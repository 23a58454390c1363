#!/usr/bin/env bash
# RSS of one build over time after a first index (at ready, +5 ... +60 s),
# then after an unchanged restart of the same index (+0, +10, +20 s), each
# with `status --json`'s memory breakdown (MiB) and whether persisted.
#
#   benches/held-memory.sh /work/speed-release-bin/branch    # TREE=/tmp/fsbench/t
set -u
B=${1:?build folder (fsindexd, fsctl)} TREE=${TREE:-/tmp/fsbench/t}
H=$(mktemp -d /tmp/fsindex-mem.XXXX)
export FSINDEX_HOME=$H FSINDEX_NO_SPAWN=1
P=
trap '[[ -n $P ]] && kill $P 2>/dev/null; rm -rf "$H"' EXIT
rss() { awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$1/status"; }
mem() { "$B/fsctl" status --json | python3 -c '
import json, sys
d = json.load(sys.stdin); m = d.get("memory") or {}
print("persisted", d.get("persisted"), ", ".join("{} {:.1f}".format(k.replace("_bytes", ""), v / 2**20) for k, v in m.items()))'; }
ready() { until s=$("$B/fsctl" status --json 2>/dev/null) && [[ $s == *'"state":"ready"'* ]]; do sleep 0.05; done; }
at() { while (( $(date +%s) < T0 + $1 )); do sleep 0.2; done; }
"$B/fsindexd" --root "$TREE" 2>/dev/null & P=$!
ready; T0=$(date +%s)
for t in 0 5 10 15 20 30 45 60; do at $t; echo "first index +$t s: RSS $(rss $P) MiB; $(mem); load $(cut -d' ' -f1 /proc/loadavg)"; done
kill $P; wait $P
"$B/fsindexd" --root "$TREE" 2>/dev/null & P=$!
ready; T0=$(date +%s)
for t in 0 10 20; do at $t; echo "restart +$t s: RSS $(rss $P) MiB; $(mem); load $(cut -d' ' -f1 /proc/loadavg)"; done
kill $P; wait $P; P=
