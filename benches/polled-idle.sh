#!/usr/bin/env bash
# An idle daemon that is only polled: its RSS (anonymous / file-backed, MiB,
# from /proc) after an unchanged restart, then around `fsctl status` calls:
# every 2 s for 10 s after ready, right after a call and every 2 s for 8 s
# after it, then right after the last of six calls 5 s apart and 3 s later.
# Several builds in turn, each on its own copy of one kept index.
#
#   INDEX=/tmp/sth BUILDS="old=DIR new=DIR old=DIR new=DIR" benches/polled-idle.sh   # TREE=/tmp/fsbench/t
#
# Each DIR holds fsindexd and fsctl.
set -euo pipefail
TREE=${TREE:-/tmp/fsbench/t}
INDEX=${INDEX:?INDEX=a kept FSINDEX_HOME of TREE}
BUILDS=${BUILDS:?BUILDS="name=dir ..."}
here=$(cd "$(dirname "$0")" && pwd)
BENCH=polled-idle
# shellcheck source=benches/lib.sh
. "$here/lib.sh"
# The daemon (DAEMON_PID) is stopped and W removed on exit (benches/lib.sh).
bench_workdir /tmp
W=$WORK
export FSINDEX_NO_SPAWN=1
wait_quiet
for b in $BUILDS; do
    name=${b%%=*} B=${b#*=}
    [[ -x $B/fsindexd && -x $B/fsctl ]] || die "$B lacks fsindexd or fsctl"
    rm -rf "$W/h" && mkdir "$W/h" && cp "$INDEX"/index.db* "$W/h/"
    export FSINDEX_HOME=$W/h
    "$B/fsindexd" --root "$TREE" >/dev/null 2>&1 & DAEMON_PID=$!
    wait_ready "$B/fsctl"
    rss() { awk '/^RssAnon|^RssFile/ {printf "%.1f ", $2 / 1024}' "/proc/$DAEMON_PID/status"; }
    line="$name: ready $(rss)|"
    for t in 2 4 6 8 10; do sleep 2; line+=" +${t}s $(rss)|"; done
    "$B/fsctl" status >/dev/null
    line+=" status $(rss)|"
    for t in 2 4 6 8; do sleep 2; line+=" +${t}s $(rss)|"; done
    for _ in 1 2 3 4 5 6; do sleep 5; "$B/fsctl" status >/dev/null; done
    line+=" right after the 6th of six calls 5 s apart $(rss)|"
    sleep 3
    line+=" 3 s later $(rss)"
    echo "$line"
    kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=
done
