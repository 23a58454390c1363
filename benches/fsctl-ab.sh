#!/usr/bin/env bash
# fsctl builds side by side against plocate, whole processes, on one daemon
# and one plocate database of the same tree: `fsctl --version` (the start
# alone) and `fsctl search --limit 0 Q > /dev/null` for queries from
# matching nothing to thousands of results, each build and plocate taken in
# turn, run by run (benches/interleave.py: medians, p10, p90, the ratio to
# plocate), so that the VM's drift falls on all of them alike. First,
# what loading libraries costs any process: an empty C program alone, with
# libgcc_s and libm (what fsctl links besides libc), and with libssl and
# libcrypto (what it linked before the fleet's helper), taken in turn the
# same way (needs cc and libssl-dev; skipped without them). Waits for a
# machine with no compiler running first (benches/lib.sh, QUIET_WAIT).
#
#   BUILDS="before=DIR after=DIR" benches/fsctl-ab.sh   # TREE=/tmp/fsbench/t
#
# Each DIR holds an fsctl; the daemon is the first build's fsindexd unless
# FSINDEXD is given. INDEX=DIR reuses a kept FSINDEX_HOME (its restart is
# waited for); otherwise a fresh one is indexed. QUERIES overrides the list
# (one per line).
set -euo pipefail
TREE=${TREE:-/tmp/fsbench/t}
BUILDS=${BUILDS:?BUILDS="name=dir ..."}
RUNS=${RUNS:-200}
first=${BUILDS%% *}
FSINDEXD=${FSINDEXD:-${first#*=}/fsindexd}
QUERIES=${QUERIES:-$'qqxjnomatch\nzanzibar\ntax 2025\nIMG_1\nnode_modules\nreport'}
here=$(cd "$(dirname "$0")" && pwd)
BENCH=fsctl-ab
# shellcheck source=benches/lib.sh
. "$here/lib.sh"
need plocate updatedb python3
# The daemon (DAEMON_PID) is stopped and W removed on exit (benches/lib.sh).
bench_workdir /tmp
W=$WORK
export FSINDEX_HOME=${INDEX:-$W/h} FSINDEX_NO_SPAWN=1
mkdir -p "$FSINDEX_HOME"
"$FSINDEXD" --root "$TREE" >/dev/null 2>&1 & DAEMON_PID=$!
fsctl=${first#*=}/fsctl
wait_ready "$fsctl"
sleep 5
plocate_db "$TREE" "$W/plocate.db"
wait_quiet
echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), quiet: $QUIET; plocate $(plocate --version | head -1)"
printf 'int main(void) { return 0; }\n' >"$W/empty.c"
if cc -O2 -o "$W/plain" "$W/empty.c" 2>/dev/null &&
    cc -O2 -o "$W/libm" "$W/empty.c" -Wl,--no-as-needed -lgcc_s -lm 2>/dev/null &&
    cc -O2 -o "$W/tls" "$W/empty.c" -Wl,--no-as-needed -lssl -lcrypto 2>/dev/null; then
    echo "an empty C program; with libgcc_s and libm; with libssl and libcrypto:"
    "$here/interleave.py" --runs 1000 --warmup 50 "plain=$W/plain" "gcc_s+m=$W/libm" "tls=$W/tls"
fi
args=()
for b in $BUILDS; do args+=("${b%%=*}=${b#*=}/fsctl --version"); done
echo "fsctl --version:"
"$here/interleave.py" --runs "$RUNS" "${args[@]}"
while IFS= read -r q; do
    args=()
    for b in $BUILDS; do args+=("${b%%=*}=${b#*=}/fsctl search --limit 0 $q"); done
    args+=("plocate=plocate -i -d $W/plocate.db $q")
    n=$("${first#*=}/fsctl" search --limit 0 $q | wc -l || true)
    echo "$q ($n results):"
    "$here/interleave.py" --runs "$RUNS" "${args[@]}"
done <<<"$QUERIES"
