#!/usr/bin/env bash
# Two fsindexd builds side by side, each on its own copy of one kept index:
# the daemon's own time for each query (`search us=` in its debug log, the
# median of N), exact and with accents ignored, the two daemons asked in
# turn so that the machine's drift falls on both alike.
#
#   INDEX=/tmp/sth OLD=DIR NEW=DIR benches/accents-ab.sh   # TREE=/tmp/fsbench/t
#
# OLD and NEW hold an fsindexd each; FSCTL is the client (default
# NEW/fsctl). N (7) searches per query, mode and daemon, each for the first
# 400 results as fsgui asks; QUERIES one per line. Each daemon is left 25 s
# after ready for its start-up work.
set -euo pipefail
TREE=${TREE:-/tmp/fsbench/t}
INDEX=${INDEX:?INDEX=a kept FSINDEX_HOME of TREE}
OLD=${OLD:?OLD=dir with an fsindexd}
NEW=${NEW:?NEW=dir with an fsindexd}
FSCTL=${FSCTL:-$NEW/fsctl}
N=${N:-7}
QUERIES=${QUERIES:-$'tax\ntax 2\ntax 202\ntax 2025\nphoto 2\nphoto 2019\nrep\nreport\ncafe\nzanzibar'}
here=$(cd "$(dirname "$0")" && pwd)
BENCH=accents-ab
# shellcheck source=benches/lib.sh
. "$here/lib.sh"
export FSINDEX_LOG='info,fsindexd::engine::read=debug'
side_by_side
sleep 25
wait_quiet
# The median of the last N searches a daemon logged, in µs.
median() {
    grep -h 'search us=' "$W/$1"/logs/* | tail -"$N" | sed 's/.*us=\([0-9]*\).*/\1/' |
        sort -n | sed -n "$(((N + 1) / 2))p"
}
echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), quiet: $QUIET; old $OLD, new $NEW"
echo "query | old exact | new exact | old accents:ignore | new accents:ignore (µs)"
while IFS= read -r q; do
    line=$q
    for mode in "" " accents:ignore"; do
        for _ in $(seq "$N"); do
            for side in old new; do
                "$FSCTL" --socket "$W/$side/fsindexd.sock" search --limit 400 "$q$mode" >/dev/null 2>&1
            done
        done
        line+=" | $(median old) | $(median new)"
    done
    echo "$line"
done <<<"$QUERIES"
