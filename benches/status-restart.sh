#!/usr/bin/env bash
# Issue 36: what `status` costs the daemon, and an unchanged restart timed as
# clients time it (`fsctl status --json` every 20 ms until ready), on a kept
# index whose media pass is done (its failures counted by `status`). Several
# builds, interleaved round by round; `fd -HI` in each round.
#
#   KEEP=/tmp/fh benches/index-restart.sh        # or any FSINDEX_HOME of a finished index
#   INDEX=/tmp/fh BUILDS="old=DIR new=DIR" ROUNDS=2 benches/status-restart.sh
#
# Each build's folder holds fsindexd and fsctl. Each start gets a fresh copy
# of INDEX. Prints, per build and round: the daemon's CPU for 100 status
# calls on the idle daemon (after the restart), the restart until ready, its
# CPU and the polls it took.
set -euo pipefail
TREE=${TREE:-/tmp/fsbench/t}
INDEX=${INDEX:?INDEX=FSINDEX_HOME of a finished index of TREE}
BUILDS=${BUILDS:?BUILDS="name=dir ..."}
FD=$(command -v fdfind || command -v fd)
W=$(mktemp -d /tmp/fsindex-sr.XXXX)
P=
trap '[[ -n $P ]] && kill $P 2>/dev/null; rm -rf "$W"' EXIT
now() { date +%s.%N; }
cpu() { awk '{print ($14 + $15) / 100}' "/proc/$1/stat"; }
for round in $(seq "${ROUNDS:-2}"); do
  t0=$(now); "$FD" -HI . "$TREE" >/dev/null; t1=$(now)
  printf 'round %s: fd -HI %.2f s, load %s\n' "$round" "$(echo "$t1 - $t0" | bc)" "$(cut -d' ' -f1 /proc/loadavg)"
  for b in $BUILDS; do
    name=${b%%=*} B=${b#*=}
    rm -rf "$W/h"; cp -a "$INDEX" "$W/h"; rm -f "$W/h"/fsindexd.sock "$W/h"/fsindexd.lock
    export FSINDEX_HOME=$W/h FSINDEX_NO_SPAWN=1
    t0=$(now); "$B/fsindexd" --root "$TREE" >/dev/null 2>&1 & P=$!
    polls=0
    until s=$("$B/fsctl" status --json 2>/dev/null) && [[ $s == *'"state":"ready"'* ]]; do
      sleep 0.02; polls=$((polls + 1))
    done
    t1=$(now) c1=$(cpu $P)
    # Idle: the media pass finds nothing to read on a finished index.
    sleep 10
    c2=$(cpu $P)
    for _ in $(seq 100); do "$B/fsctl" status --json >/dev/null; done
    c3=$(cpu $P)
    printf '%-8s restart ready %.2f s (CPU %s s, %s polls); 100 status calls: %.2f s of daemon CPU\n' \
      "$name" "$(echo "$t1 - $t0" | bc)" "$c1" "$polls" "$(echo "$c3 - $c2" | bc)"
    kill $P; wait $P 2>/dev/null || true; P=
  done
done
