#!/usr/bin/env bash
# The initial index and the unchanged restart of two fsindexd builds (A, B)
# side by side with plocate's updatedb and a bare `fd -HI` walk, on one tree,
# in one run, runs interleaved so that the machine's drift hits all alike.
# Made to measure the openat walk against the jwalk one it replaced:
#
#   git worktree add /tmp/fsindex-old 64d75ae && (cd /tmp/fsindex-old && cargo build --release -p fsindexd -p fsctl)
#   cargo build --release -p fsindexd -p fsctl
#   A=/tmp/fsindex-old/target/release B=target/release benches/walk-ab.sh
#
# Environment: A, B (folders holding fsindexd and fsctl), TREE (default
# /tmp/fsbench/t, made by mktree.py with ENTRIES entries if missing), RUNS
# (default 3), QUIET_WAIT (seconds to wait for compilers to stop, default 600).
# Markdown on stdout, progress on stderr.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=walk-ab
# shellcheck source=benches/lib.sh
source "$HERE/lib.sh"
A=${A:?A=folder of the first fsindexd/fsctl build}
B=${B:?B=folder of the second fsindexd/fsctl build}
TREE=${TREE:-/tmp/fsbench/t}
ENTRIES=${ENTRIES:-1000000}
RUNS=${RUNS:-3}
for t in updatedb fdfind python3; do command -v "$t" >/dev/null || die "$t not found (apt-get install plocate fd-find)"; done
[[ -d $TREE ]] || { log "making $TREE ($ENTRIES entries)"; python3 "$HERE/mktree.py" --entries "$ENTRIES" --out "$TREE" >/dev/null; }
WORK=$(mktemp -d /tmp/walk-ab.XXXX)
P=
trap '[[ -n $P ]] && kill "$P" 2>/dev/null; rm -rf "$WORK"' EXIT

now_ns() { date +%s%N; }
ms_since() { echo $(( ($(now_ns) - $1) / 1000000 )); }
ready() {
    local ctl=$1 err=$2 t0=$SECONDS
    while :; do
        s=$("$ctl" status --json 2>/dev/null) && [[ $s == *'"state":"ready"'* ]] && return
        if ! kill -0 "$P" 2>/dev/null || ((SECONDS - t0 > 300)); then
            die "fsindexd did not get ready: $(tail -n 5 "$err")"
        fi
        sleep 0.02
    done
}
# Until the index is on disk too (issue 36: a first index is ready before its
# rows are in SQLite); a build without the field is persisted at ready.
persisted() {
    local ctl=$1 t0=$SECONDS
    while :; do
        s=$("$ctl" status --json 2>/dev/null) && [[ $s != *'"persisted":false'* ]] && return
        ((SECONDS - t0 > 300)) && die "fsindexd did not persist"
        sleep 0.02
    done
}
rows() { "$1" status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["entries"], d["rows_written"], d["rss_bytes"] >> 20)'; }
cpu_s() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$1/stat"; }
rss_mib() { awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$1/status"; }

# One daemon start on an instance until ready: prints "ms entries rows rss
# persisted-ms cpu-at-ready cpu-at-persisted rss-at-ready load".
start() {
    local bin=$1 home=$2
    export FSINDEX_HOME=$home FSINDEX_NO_SPAWN=1
    local t0; t0=$(now_ns)
    "$bin/fsindexd" --root "$TREE" >/dev/null 2>"$home.stderr" & P=$!
    ready "$bin/fsctl" "$home.stderr"
    local ms; ms=$(ms_since "$t0")
    local cpu_ready rss_ready; cpu_ready=$(cpu_s "$P"); rss_ready=$(rss_mib "$P")
    persisted "$bin/fsctl"
    local pms; pms=$(ms_since "$t0")
    local cpu_persisted; cpu_persisted=$(cpu_s "$P")
    local load; load=$(cut -d' ' -f1 /proc/loadavg)
    local figures; figures="$(rows "$bin/fsctl") $pms $cpu_ready $cpu_persisted $rss_ready $load"
    kill "$P"; wait "$P" 2>/dev/null || true; P=
    # Until no daemon of this run is left (the next start needs the lock);
    # only then the answer, which the caller waits for.
    while pgrep -f "fsindexd --root $TREE" >/dev/null; do sleep 0.1; done
    echo "$ms $figures"
}

wait_quiet
log "warming the page cache"
fdfind -HI . "$TREE" >/dev/null
declare -A T
for run in $(seq "$RUNS"); do
    for v in A B; do
        bin=${!v}
        rm -rf "$WORK/$v"; mkdir -p "$WORK/$v"
        read -r ms n w rss pms cr cp rr load < <(start "$bin" "$WORK/$v")
        T[$v,init]+="$ms "; T[$v,entries]=$n; T[$v,rss_init]+="$rss "
        T[$v,persisted]+="$pms "; T[$v,cpu_ready]+="$cr "; T[$v,cpu_persisted]+="$cp "
        T[$v,rss_ready]+="$rr "; T[load]+="$load "
        read -r ms n w rss _ < <(start "$bin" "$WORK/$v")
        T[$v,restart]+="$ms "; T[$v,written]+="$w "; T[$v,rss_restart]+="$rss "
        log "run $run $v: restart $ms ms (initial index: ${T[$v,init]})"
    done
    t0=$(now_ns); updatedb -l 0 -U "$TREE" -o "$WORK/plocate.db"; T[updatedb]+="$(ms_since "$t0") "
    t0=$(now_ns); fdfind -HI . "$TREE" >/dev/null; T[fd]+="$(ms_since "$t0") "
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
m() { echo "${T[$1]}" | median; }
ratio() { python3 -c "print(f'{$1/$2:.2f}x')"; }
cat <<EOF
# Initial index and unchanged restart: A ($A) vs B ($B)

Tree: $TREE, ${T[B,entries]} entries; $RUNS runs, medians in ms; machine quiet: $QUIET.
Peers in the same runs: \`updatedb -l 0\` $(m updatedb) ms, \`fd -HI\` walk $(m fd) ms.

| figure | A | B | B / A | B vs peer |
|---|---|---|---|---|
| initial index until ready | $(m A,init) | $(m B,init) | $(ratio "$(m B,init)" "$(m A,init)") | $(ratio "$(m B,init)" "$(m updatedb)") of updatedb |
| initial index until persisted (on disk) | $(m A,persisted) | $(m B,persisted) | $(ratio "$(m B,persisted)" "$(m A,persisted)") | $(ratio "$(m B,persisted)" "$(m updatedb)") of updatedb |
| daemon CPU s at ready / at persisted | $(m A,cpu_ready) / $(m A,cpu_persisted) | $(m B,cpu_ready) / $(m B,cpu_persisted) | | |
| RSS at ready (MiB) | $(m A,rss_ready) | $(m B,rss_ready) | | |
| unchanged restart until ready | $(m A,restart) | $(m B,restart) | $(ratio "$(m B,restart)" "$(m A,restart)") | $(ratio "$(m B,restart)" "$(m fd)") of the fd walk |
| rows written by the restart | ${T[A,written]} | ${T[B,written]} | | |
| RSS after initial index / restart (MiB) | $(m A,rss_init) / $(m A,rss_restart) | $(m B,rss_init) / $(m B,rss_restart) | | |

All runs (ms): A initial ${T[A,init]}(persisted ${T[A,persisted]}), restart ${T[A,restart]}; B initial ${T[B,init]}(persisted ${T[B,persisted]}), restart ${T[B,restart]}; updatedb ${T[updatedb]}; fd ${T[fd]}. Load average (1 min) at each initial index's persisted: ${T[load]}.
EOF
