#!/usr/bin/env bash
# fsctl builds side by side against plocate, whole processes, on one daemon
# and one plocate database of the same tree: `fsctl --version` (the start
# alone) and `fsctl search --limit 0 Q > /dev/null` for queries from
# matching nothing to thousands of results (hyperfine -N, medians). First,
# what loading OpenSSL costs any process: an empty C program with and
# without libssl and libcrypto linked (needs cc and libssl-dev; skipped
# without them).
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
QUERIES=${QUERIES:-$'qqxjnomatch\nzanzibar\ntax 2025\nreport'}
for t in plocate updatedb hyperfine; do
    command -v "$t" >/dev/null || { echo "fsctl-ab.sh: $t not found" >&2; exit 1; }
done
W=$(mktemp -d /tmp/fsindex-fsctl-ab.XXXX)
P=
trap '[[ -n $P ]] && kill $P 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT
export FSINDEX_HOME=${INDEX:-$W/h} FSINDEX_NO_SPAWN=1
mkdir -p "$FSINDEX_HOME"
"$FSINDEXD" --root "$TREE" >/dev/null 2>&1 & P=$!
fsctl=${first#*=}/fsctl
until s=$("$fsctl" status --json 2>/dev/null) && [[ $s == *'"state":"ready"'* ]]; do sleep 0.2; done
sleep 5
updatedb -l 0 -U "$TREE" -o "$W/plocate.db" --prunepaths= --prunenames= --prunefs= --prune-bind-mounts=no
echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); plocate $(plocate --version | head -1)"
printf 'int main(void) { return 0; }\n' >"$W/empty.c"
if cc -O2 -o "$W/plain" "$W/empty.c" 2>/dev/null &&
    cc -O2 -o "$W/tls" "$W/empty.c" -Wl,--no-as-needed -lssl -lcrypto 2>/dev/null; then
    hyperfine -N --warmup 50 --runs 1000 --export-json "$W/c.json" \
        -n "empty C program" "$W/plain" -n "the same linked to libssl and libcrypto" "$W/tls" >/dev/null 2>&1
    python3 -c 'import json,sys; print(", ".join("%s %.2f ms" % (r["command"], r["median"] * 1e3) for r in json.load(open(sys.argv[1]))["results"]))' "$W/c.json"
fi
args=()
for b in $BUILDS; do args+=(-n "${b%%=*}" "${b#*=}/fsctl --version"); done
hyperfine -N -i --warmup 20 --runs "$RUNS" --export-json "$W/v.json" "${args[@]}" >/dev/null 2>&1
python3 -c 'import json,sys; print("fsctl --version:", ", ".join("%s %.2f ms" % (r["command"], r["median"] * 1e3) for r in json.load(open(sys.argv[1]))["results"]))' "$W/v.json"
while IFS= read -r q; do
    args=()
    for b in $BUILDS; do args+=(-n "${b%%=*}" "${b#*=}/fsctl search --limit 0 $q"); done
    # shellcheck disable=SC2086
    args+=(-n plocate "plocate -i -d $W/plocate.db $q")
    hyperfine -N -i --warmup 20 --runs "$RUNS" --export-json "$W/q.json" "${args[@]}" >/dev/null 2>&1
    n=$("${first#*=}/fsctl" search --limit 0 $q | wc -l || true)
    python3 -c 'import json,sys; print("%-12s %7s results:" % (sys.argv[2], sys.argv[3]), ", ".join("%s %.2f ms" % (r["command"], r["median"] * 1e3) for r in json.load(open(sys.argv[1]))["results"]))' "$W/q.json" "$q" "$n"
done <<<"$QUERIES"
