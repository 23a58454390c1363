# Shared by the benchmark scripts (sourced). Set BENCH (the log prefix) and
# QUIET_WAIT (seconds) before calling.

log() { printf '[%s %(%H:%M:%S)T] %s\n' "${BENCH:-bench}" -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Waits until no compiler or linker has run for 15 s (another build on 2
# cores doubles every figure), at most QUIET_WAIT s; sets QUIET to yes or a
# note saying it timed anyway.
wait_quiet() {
    local start=$SECONDS calm=0
    while ((calm < 15)); do
        if ps -eo comm= | grep -qxE 'rustc|cargo|cc1|cc1plus|ld|ld\.bfd|ld\.gold|collect2|clippy-driver|cargo-nextest'; then
            calm=0
        else
            calm=$((calm + 1))
        fi
        if ((SECONDS - start > ${QUIET_WAIT:-600})); then
            QUIET="no (compilers still running after ${QUIET_WAIT:-600}s)"
            log "machine not quiet after ${QUIET_WAIT:-600}s; measuring anyway"
            return
        fi
        sleep 1
    done
    QUIET=yes
}

# Makes WORK (a fresh folder under $1) and, on exit, stops DAEMON_PID (when
# set) and removes WORK unless KEEP is set.
bench_workdir() {
    WORK=$(mktemp -d "$1/run.XXXXXX")
    DAEMON_PID=
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
}

bench_cleanup() {
    local rc=$?
    [[ -z $DAEMON_PID ]] || { kill -TERM "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; } || true
    if [[ -z ${KEEP:-} ]]; then rm -rf "$WORK"; else log "kept $WORK"; fi
    exit "$rc"
}

# Exits with a message naming the first of the given programs not on PATH.
need() {
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null || die "$t not found"
    done
}

# Writes plocate's database DB of TREE with nothing pruned, so that it
# lists what fsindex indexes.
plocate_db() {
    updatedb -l 0 -U "$1" -o "$2" --prunepaths= --prunenames= --prunefs= --prune-bind-mounts=no
}

# Waits until the daemon that `FSCTL [ARGS...] status --json` reaches says
# it is ready (polled every 0.2 s).
wait_ready() {
    local s
    [[ -x $1 ]] || die "$1: no such program"
    until s=$("$@" status --json 2>/dev/null) && [[ $s == *'"state":"ready"'* ]]; do sleep 0.2; done
}

# Two daemon builds side by side (A/B scripts): makes W (a fresh folder),
# copies INDEX's database into W/old and W/new, starts OLD/fsindexd and
# NEW/fsindexd on TREE there and waits until FSCTL finds both ready. Both
# are stopped and W removed on exit. Export FSINDEX_LOG etc. before.
side_by_side() {
    local side
    W=$(mktemp -d "/tmp/fsindex-$BENCH.XXXX")
    pids=()
    trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$W"' EXIT
    export FSINDEX_NO_SPAWN=1
    for side in old new; do
        mkdir "$W/$side"
        cp "$INDEX"/index.db* "$W/$side/"
    done
    FSINDEX_HOME=$W/old "$OLD/fsindexd" --root "$TREE" >/dev/null 2>&1 &
    pids+=($!)
    FSINDEX_HOME=$W/new "$NEW/fsindexd" --root "$TREE" >/dev/null 2>&1 &
    pids+=($!)
    for side in old new; do
        wait_ready "$FSCTL" --socket "$W/$side/fsindexd.sock"
    done
}
