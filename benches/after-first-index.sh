#!/usr/bin/env bash
# Issue 36: the daemon's RSS in the minute after a first index (its media pass
# runs then), with `fsctl status --json` every 5 s as a polling client does
# (RSS read just before each call and right after it),
# and where the memory is 50 s after ready (`status --json`'s memory). Several
# builds, one after another, each on a fresh index.
#
#   BUILDS="old=DIR new=DIR old=DIR new=DIR" benches/after-first-index.sh   # TREE=/tmp/fsbench/t
#
# Each build's folder holds fsindexd, fsctl and fsindex-extract-child.
set -euo pipefail
TREE=${TREE:-/tmp/fsbench/t}
BUILDS=${BUILDS:?BUILDS="name=dir ..."}
W=$(mktemp -d /tmp/fsindex-afi.XXXX)
P=
trap '[[ -n $P ]] && kill $P 2>/dev/null; rm -rf "$W"' EXIT
for b in $BUILDS; do
  name=${b%%=*} B=${b#*=}
  rm -rf "$W/h"; mkdir "$W/h"
  export FSINDEX_HOME=$W/h FSINDEX_NO_SPAWN=1
  "$B/fsindexd" --root "$TREE" >/dev/null 2>&1 & P=$!
  until s=$("$B/fsctl" status --json 2>/dev/null) && [[ $s == *'"state":"ready"'* ]]; do sleep 0.1; done
  t1=$(date +%s)
  line="$name RSS MiB after ready, before / right after each status call:"
  rss() { awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$P/status"; }
  for t in 5 10 15 20 25 30 35 40 50; do
    sleep $((t1 + t - $(date +%s)))
    before=$(rss)
    "$B/fsctl" status --json >/dev/null
    line="$line +${t}s $before/$(rss)"
  done
  echo "$line"
  "$B/fsctl" status --json | python3 -c '
import json, sys
d = json.load(sys.stdin); m = d.get("memory") or {}
print("   at +50 s (MiB):", ", ".join("{} {:.1f}".format(k.replace("_bytes", ""), v / 2**20) for k, v in m.items()), "| media", d["media"])'
  kill $P; wait $P 2>/dev/null || true; P=
done
