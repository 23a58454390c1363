#!/usr/bin/env bash
# Issue 36, "searchable sooner", A/B: a first index of one tree by several
# builds, interleaved round by round, with `updatedb` and `fd -HI` in the
# same rounds. For each build: seconds from the daemon's start until
# `status` says ready, until `fsctl du TREE --top 20` has answered (asked
# as soon as ready: whether it answered before persisted is printed), and
# until persisted; the daemon's CPU seconds at ready and at persisted; RSS
# at ready, 10 s and 30 s after ready (and where it goes at +10 s:
# `status --json`'s memory, MiB).
#
#   BUILDS="main=/work/speed-release-bin/main branch=/work/speed-release-bin/branch" \
#     ROUNDS=3 benches/held-ab.sh            # TREE=/tmp/fsbench/t (mktree.py --entries 1000000 --seed 1)
#
# Each build's folder holds fsindexd, fsctl and fsindex-extract-child. CPUSET
# (e.g. 0-1) pins the daemon with taskset. WAITING=1 keeps an `fsctl status
# --wait` running until ready, as a user waiting on the first start does (the
# daemon then scans at normal CPU and I/O priority; without it, at its
# background priority). Prints one line per build and round.
set -euo pipefail
TREE=${TREE:-/tmp/fsbench/t}
ROUNDS=${ROUNDS:-3}
BUILDS=${BUILDS:?BUILDS="name=dir ..."}
pin=()
[[ -n ${CPUSET:-} ]] && pin=(taskset -c "$CPUSET")
U=$(command -v updatedb.plocate || command -v updatedb)
FD=$(command -v fdfind || command -v fd)
W=$(mktemp -d /tmp/fsindex-held.XXXX)
P=
trap '[[ -n $P ]] && kill $P 2>/dev/null; rm -rf "$W"' EXIT
now() { date +%s.%N; }
rss() { awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$1/status"; }
cpu() { awk '{print ($14 + $15) / 100}' "/proc/$1/stat"; }
load() { cut -d' ' -f1 /proc/loadavg; }
secs() { local t0; t0=$(now); "$@" >/dev/null 2>&1; echo "$(now) - $t0" | bc; }
"$FD" -HI . "$TREE" >/dev/null # warm the cache
for round in $(seq "$ROUNDS"); do
  printf 'round %s: updatedb %.2f s, fd -HI %.2f s, load %s\n' "$round" \
    "$(secs "$U" -U "$TREE" -o "$W/u.db" --require-visibility no --prunefs "" --prunepaths "" --prunenames "" --prune-bind-mounts no)" \
    "$(secs "$FD" -HI . "$TREE")" "$(load)"
  for b in $BUILDS; do
    name=${b%%=*} B=${b#*=}
    H=$W/$name.$round
    mkdir -p "$H"
    export FSINDEX_HOME=$H FSINDEX_NO_SPAWN=1
    l0=$(load)
    t0=$(now)
    "${pin[@]}" "$B/fsindexd" --root "$TREE" &
    P=$!
    if [[ -n ${WAITING:-} ]]; then
      (until "$B/fsctl" status --wait >/dev/null 2>&1; do sleep 0.02; done) &
    fi
    until s=$("$B/fsctl" status --json 2>/dev/null) && [[ $s == *'"state":"ready"'* ]]; do sleep 0.02; done
    t1=$(now) r1=$(rss $P) c1=$(cpu $P)
    "$B/fsctl" du "$TREE" --top 20 >/dev/null
    t2=$(now)
    s=$("$B/fsctl" status --json)
    early=yes
    [[ $s == *'"persisted":false'* ]] || early=no
    until s=$("$B/fsctl" status --json 2>/dev/null) && [[ $s != *'"persisted":false'* ]]; do sleep 0.05; done
    t3=$(now) c3=$(cpu $P)
    sleep "$(echo "$t1 + 10 - $(now)" | bc | awk '{print ($1 > 0) ? $1 : 0}')"
    r10=$(rss $P)
    m10=$("$B/fsctl" status --json | python3 -c '
import json, sys
m = json.load(sys.stdin).get("memory") or {}
print(", ".join("{} {:.1f}".format(k.replace("_bytes", ""), v / 2**20) for k, v in m.items()))')
    sleep "$(echo "$t1 + 30 - $(now)" | bc | awk '{print ($1 > 0) ? $1 : 0}')"
    r30=$(rss $P)
    printf '%-7s ready %.2f s (CPU %s s, RSS %s MiB), du %.2f s (before persisted: %s), persisted %.2f s (CPU %s s); RSS +10 s %s MiB, +30 s %s MiB; load %s-%s\n' \
      "$name" "$(echo "$t1 - $t0" | bc)" "$c1" "$r1" "$(echo "$t2 - $t0" | bc)" "$early" "$(echo "$t3 - $t0" | bc)" "$c3" "$r10" "$r30" "$l0" "$(load)"
    printf '        at +10 s: %s\n' "$m10"
    kill $P
    wait $P || true
    P=
    rm -rf "$H"
  done
done
