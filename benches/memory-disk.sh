#!/usr/bin/env bash
# Memory and disk at 1M entries (issue 36): a fresh index of TREE, RSS and where it goes 10 s
# after ready, again once the media pass has settled, the index size by table; then an
# unchanged restart and its RSS 10 s after ready.
#
#   B=target/release TREE=/tmp/fsbench/t benches/memory-disk.sh
set -euo pipefail
B=${B:-$(cd "$(dirname "$0")/.." && pwd)/target/release}; TREE=${TREE:-/tmp/fsbench/t}
H=${H:-$(mktemp -d /tmp/fsindex-md.XXXX)}; rm -rf "$H"; mkdir -p "$H"
export FSINDEX_HOME=$H FSINDEX_NO_SPAWN=1
ready() { while :; do s=$("$B/fsctl" status --json 2>/dev/null) && [[ $s == *'"state":"ready"'* ]] && break; sleep 0.05; done; }
mem() { "$B/fsctl" status --json | python3 -c '
import json,sys; d=json.load(sys.stdin); m=d.get("memory") or {}; md=d.get("media") or {}
print("RSS", d["rss_bytes"]>>20, "MiB", ", ".join("{} {:.1f}".format(k.replace("_bytes",""), v/2**20) for k,v in m.items()), "| media queued", md.get("queued"), "busy", md.get("busy"), "rows", md.get("rows"))'; }
for run in initial restart; do
  t0=$(date +%s.%N); "$B/fsindexd" --root "$TREE" & P=$!; ready; t1=$(date +%s.%N)
  echo "$run: ready after $(echo "$t1 - $t0" | bc) s"
  sleep 10; echo -n "  +10 s: "; mem
  if [[ $run == initial ]]; then
    while :; do s=$("$B/fsctl" status --json); [[ $s == *'"queued":0'* && $s == *'"busy":false'* ]] && break; sleep 2; done
    echo -n "  media settled after $(echo "$(date +%s.%N) - $t1" | bc) s: "; mem
  fi
  kill $P; wait $P || true
  sqlite3 "$H/index.db" "select printf('  %s %.1f B/entry', name, sum(pgsize)*1.0/(select count(*) from entries)) from dbstat group by name order by sum(pgsize) desc limit 6; select printf('  whole file %.1f B/entry', (select page_count*page_size from pragma_page_count, pragma_page_size)*1.0/(select count(*) from entries));"
done
