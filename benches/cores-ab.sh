#!/usr/bin/env bash
# Does a daemon sized for more cores answer slower (issue 36)? The same release daemon with
# FSINDEX_CORES=2, 16 and 64 (threads, query turns, malloc arenas) on one index, rounds
# interleaved; hyperfine medians of whole `fsctl search` processes. H: an FSINDEX_HOME holding
# an index of TREE (benches/memory-disk.sh or index-restart.sh KEEP=... make one).
#
#   H=/tmp/fh-md B=target/release benches/cores-ab.sh
set -euo pipefail
B=${B:-$(cd "$(dirname "$0")/.." && pwd)/target/release}; export FSINDEX_HOME=${H:?an FSINDEX_HOME with an index} FSINDEX_NO_SPAWN=1
qs=("tax 2025" "IMG_1" "zzzznotfound" "node_modules" "report")
for round in 1 2; do
  for c in 2 16 64; do
    FSINDEX_CORES=$c "$B/fsindexd" --root "${TREE:-/tmp/fsbench/t}" & P=$!
    until "$B/fsctl" status --json 2>/dev/null | grep -q '"state":"ready"'; do sleep 0.1; done
    line="round $round cores $c:"
    for q in "${qs[@]}"; do
      m=$(hyperfine -N -i --warmup 5 --runs 40 --export-json /tmp/hf.json "$B/fsctl search $q" >/dev/null 2>&1; python3 -c 'import json; r=json.load(open("/tmp/hf.json"))["results"][0]; print("%.1f" % (r["median"]*1000))')
      line="$line  $q=$m"
    done
    echo "$line ms  (load $(cut -d' ' -f1 /proc/loadavg))"
    kill $P; wait $P || true
  done
done
