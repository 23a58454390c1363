#!/usr/bin/env bash
# The daemon's own time for what fsgui asks at each keystroke: every prefix
# of each query typed letter by letter (`t`, `ta`, `tax`, `tax 2`, ...), as
# `fsctl search --limit 400` (fsgui's first request: two pages), REPS times
# each, on a kept index of TREE. Prints the p50 and p99 of the daemon's
# `search us=` debug lines per prefix, then over every prefix.
#
#   FSINDEX_HOME=/tmp/fh-1m B=/tmp/rel REPS=10 benches/keystrokes.sh 'tax 2025' IMG_1234 'report final' node_modules café
#
# Environment: FSINDEX_HOME (a home holding an index of TREE), TREE (default
# /tmp/fsbench/t), B (folder of fsindexd and fsctl; default target/release),
# REPS (default 10), BARE=1 (append `accents:ignore`, as fsgui does unless
# its accents toggle is on). Arguments: the queries; with none, the list
# above plus a lone letter and a lone digit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
TREE=${TREE:-/tmp/fsbench/t}
B=${B:-${CARGO_TARGET_DIR:-$here/../target}/release}
REPS=${REPS:-10}
: "${FSINDEX_HOME:?set FSINDEX_HOME to a home holding an index of TREE}"
(($#)) || set -- 'tax 2025' IMG_1234 'report final' node_modules café a 7
export FSINDEX_HOME FSINDEX_NO_SPAWN=1
FSINDEX_LOG='info,fsindexd::engine::read=debug' "$B/fsindexd" --root "$TREE" >/dev/null 2>&1 &
P=$!
trap 'kill $P 2>/dev/null || true' EXIT
until "$B/fsctl" status --json 2>/dev/null | grep -q '"state":"ready"'; do sleep 0.2; done
sleep 2
suffix=
[[ ${BARE:-0} == 1 ]] && suffix=' accents:ignore'
log_lines() { cat "$FSINDEX_HOME"/logs/* | wc -l; }
all=$(mktemp)
trap 'kill $P 2>/dev/null || true; rm -f "$all"' EXIT
for q in "$@"; do
    # Each prefix that ends on a character (a trailing space asks nothing new).
    for ((k = 1; k <= ${#q}; k++)); do
        p=${q:0:k}
        [[ ${p: -1} == ' ' ]] && continue
        n=$(log_lines)
        # shellcheck disable=SC2086 # a query's words are separate terms
        for _ in $(seq "$REPS"); do "$B/fsctl" search --limit 400 $p$suffix >/dev/null 2>&1 || true; done
        sleep 0.3
        cat "$FSINDEX_HOME"/logs/* | tail -n +$((n + 1)) | sed -n 's/.*search us=\([0-9]*\).*/\1/p' | tee -a "$all" | sort -n |
            awk -v q="$p" '{ a[NR] = $1 } END { printf "%-16s p50 %6.1f  max %6.1f ms (%d runs)\n", q, a[int(NR / 2) + 1] / 1000, a[NR] / 1000, NR }'
    done
done
sort -n "$all" | awk '{ a[NR] = $1 } END { printf "every prefix: p50 %.1f p99 %.1f max %.1f ms (%d runs)\n", a[int(NR / 2) + 1] / 1000, a[int(NR * 0.99)] / 1000, a[NR] / 1000, NR }'
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
