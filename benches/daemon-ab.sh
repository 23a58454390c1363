#!/usr/bin/env bash
# Two fsindexd builds side by side, each on its own copy of one kept index,
# answering the same fsctl, with plocate on the same tree: whole-process
# searches, the three commands taken in turn run by run
# (benches/interleave.py), so that the machine's drift and its CPU steal
# fall on all of them alike.
#
#   INDEX=/tmp/sth OLD=DIR NEW=DIR benches/daemon-ab.sh   # TREE=/tmp/fsbench/t
#
# INDEX is a kept FSINDEX_HOME of TREE (copied twice, so neither daemon
# writes to it); OLD and NEW hold an fsindexd each; FSCTL is the client
# (default NEW/fsctl). RUNS (300) and QUERIES (one per line) as in
# fsctl-ab.sh. Each daemon is left 25 s after ready for its start-up work;
# then a machine with no compiler running is waited for (benches/lib.sh).
set -euo pipefail
TREE=${TREE:-/tmp/fsbench/t}
INDEX=${INDEX:?INDEX=a kept FSINDEX_HOME of TREE}
OLD=${OLD:?OLD=dir with an fsindexd}
NEW=${NEW:?NEW=dir with an fsindexd}
FSCTL=${FSCTL:-$NEW/fsctl}
RUNS=${RUNS:-300}
QUERIES=${QUERIES:-$'qqxjnomatch\nzanzibar\nquokka\ntax 2025'}
here=$(cd "$(dirname "$0")" && pwd)
BENCH=daemon-ab
# shellcheck source=benches/lib.sh
. "$here/lib.sh"
need plocate updatedb python3
side_by_side
plocate_db "$TREE" "$W/plocate.db"
sleep 25
wait_quiet
echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), quiet: $QUIET; old $OLD, new $NEW, fsctl $FSCTL"
while IFS= read -r q; do
    echo "$q:"
    "$here/interleave.py" --runs "$RUNS" \
        "old=$FSCTL --socket $W/old/fsindexd.sock search --limit 0 $q" \
        "new=$FSCTL --socket $W/new/fsindexd.sock search --limit 0 $q" \
        "plocate=plocate -i -d $W/plocate.db $q"
done <<<"$QUERIES"
