#!/usr/bin/env bash
# Side-by-side benchmark of fsindex against plocate and fd on one synthetic tree.
#
#   benches/compare.sh                      # 1,000,000 entries (~15 min on 2 cores)
#   ENTRIES=100000 benches/compare.sh       # quick run
#   benches/compare.sh > benches/RESULTS-latest.md
#
# Environment:
#   ENTRIES   entries in the tree (default 1000000)
#   SEED      mktree seed (default 1)
#   BASE      working folder (default /tmp/fsbench); the tree is $BASE/t, a path
#             that contains none of the query words
#   RUNS      repetitions of the index / restart / walk timings (default 3)
#   KEEP=1    keep $BASE/run.* (index, plocate db, hyperfine JSON, logs)
#   NO_BUILD=1, NO_INSTALL=1   skip cargo build / apt-get install
#   QUIET_WAIT  seconds to wait for an idle machine (>= 90% CPU idle over 2 s)
#               before timing anything (default 600; 0: do not wait)
#
# The Markdown report goes to stdout, progress to stderr. Timings are with a
# warm page cache (the tree is walked once before anything is timed); the
# machine is not otherwise quiet-checked.
set -euo pipefail

ENTRIES=${ENTRIES:-1000000}
SEED=${SEED:-1}
BASE=${BASE:-/tmp/fsbench}
RUNS=${RUNS:-3}
TREE=$BASE/t
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
export CARGO_TARGET_DIR=$REPO/target
FSINDEXD=$CARGO_TARGET_DIR/release/fsindexd
FSCTL=$CARGO_TARGET_DIR/release/fsctl
PY=${PYTHON:-python3}
POLL=0.02 # seconds between readiness polls: the resolution of the index timings

log() { printf '[compare %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now_ns() { date +%s%N; }
ms_since() { echo $(( ($(now_ns) - $1) / 1000000 )); }

# ---------------------------------------------------------------- peers, build
if [[ -z ${NO_INSTALL:-} ]]; then
    missing=()
    command -v plocate >/dev/null && command -v updatedb >/dev/null || missing+=(plocate)
    command -v fdfind >/dev/null || missing+=(fd-find)
    command -v hyperfine >/dev/null || missing+=(hyperfine)
    if ((${#missing[@]})); then
        log "installing ${missing[*]}"
        SUDO=; [[ $(id -u) == 0 ]] || SUDO=sudo
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 ||
            { $SUDO apt-get update -qq >&2 && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2; }
    fi
fi
for t in plocate updatedb fdfind hyperfine "$PY"; do command -v "$t" >/dev/null || die "$t not found"; done

if [[ -z ${NO_BUILD:-} ]]; then
    log "cargo build --release -p fsindexd -p fsctl"
    t0=$(now_ns)
    (cd "$REPO" && cargo build --release -p fsindexd -p fsctl >&2) || die "build failed"
    log "built in $(ms_since "$t0") ms"
fi
[[ -x $FSINDEXD && -x $FSCTL ]] || die "no binaries in $CARGO_TARGET_DIR/release"

# ---------------------------------------------------------------------- tree
mkdir -p "$BASE"
STAMP="$BASE/t.stamp"
want_stamp="entries=$ENTRIES seed=$SEED mktree=$(sha256sum "$HERE/mktree.py" | cut -c1-16)"
if [[ -d $TREE && -f $STAMP && $(cat "$STAMP") == "$want_stamp" ]]; then
    log "reusing $TREE ($want_stamp)"
else
    log "making $TREE ($want_stamp)"
    rm -f "$STAMP"
    rm -rf "$TREE"
    t0=$(now_ns)
    "$PY" "$HERE/mktree.py" --entries "$ENTRIES" --seed "$SEED" --out "$TREE" >/dev/null
    log "tree made in $(ms_since "$t0") ms"
    sync
    echo "$want_stamp" >"$STAMP"
fi
# Warm the page cache and count what a walker sees (the root itself excluded).
fdfind -HI --no-ignore . "$TREE" >/dev/null
TREE_ENTRIES=$(fdfind -HI --no-ignore . "$TREE" | wc -l)
log "tree: $TREE_ENTRIES entries below $TREE"

# Other work on a 2-core machine skews every figure: wait for a quiet moment.
cpu_idle_pct() { # CPU idle over 2 s, in percent
    local a b
    read -r -a a < <(grep '^cpu ' /proc/stat)
    sleep 2
    read -r -a b < <(grep '^cpu ' /proc/stat)
    local total=0 i
    for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
    echo $(( total > 0 ? 100 * (b[4] - a[4] + b[5] - a[5]) / total : 100 ))
}
QUIET_WAIT=${QUIET_WAIT:-600}
t0=$(now_ns)
while :; do
    IDLE_PCT=$(cpu_idle_pct)
    ((IDLE_PCT >= 90)) && break
    if (( ($(now_ns) - t0) / 1000000000 >= QUIET_WAIT )); then
        log "machine still busy (${IDLE_PCT}% idle) after ${QUIET_WAIT}s; measuring anyway"
        break
    fi
    log "machine busy (${IDLE_PCT}% idle), waiting"
done
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
log "CPU ${IDLE_PCT}% idle, load $LOAD_START: starting"

WORK=$(mktemp -d "$BASE/run.XXXXXX")
PLOCATE_DB=$WORK/plocate.db
export FSINDEX_NO_SPAWN=1 # never let fsctl start a daemon of its own
unset FSINDEX_SOCKET
DAEMON_PID=

stop_daemon() { # SIGTERM, wait for exit; sets SHUT_MS (not in a subshell: wait needs the parent)
    local pid=$DAEMON_PID t0
    SHUT_MS=0
    [[ -n $pid ]] || return 0
    t0=$(now_ns)
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    DAEMON_PID=
    SHUT_MS=$(ms_since "$t0")
}
cleanup() {
    local rc=$?
    if [[ -n $DAEMON_PID ]]; then
        kill -TERM "$DAEMON_PID" 2>/dev/null || true
        wait "$DAEMON_PID" 2>/dev/null || true
    fi
    if [[ -z ${KEEP:-} ]]; then rm -rf "$WORK"; else log "kept $WORK"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

status() { FSINDEX_HOME=$1 "$FSCTL" --no-spawn status --json 2>/dev/null; }
jget() { "$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); print(d[sys.argv[2]])' "$1" "$2"; }

# start_and_wait HOME LOGNAME: starts fsindexd on $TREE, waits for "ready";
# sets DAEMON_PID, READY_MS (start to ready), READY_STATUS (status JSON).
start_and_wait() {
    local home=$1 t0 s
    mkdir -p "$home"
    t0=$(now_ns)
    FSINDEX_HOME=$home "$FSINDEXD" --root "$TREE" 2>>"$WORK/$2.stderr" &
    DAEMON_PID=$!
    while :; do
        s=$(status "$home") || s=
        if [[ $s == *'"state":"ready"'* ]]; then break; fi
        kill -0 "$DAEMON_PID" 2>/dev/null || die "fsindexd exited: $(cat "$WORK/$2.stderr")"
        (( $(now_ns) - t0 < 1800 * 1000000000 )) || die "fsindexd not ready after 30 min"
        sleep "$POLL"
    done
    READY_MS=$(ms_since "$t0")
    READY_STATUS=$s
    READY_CPU_MS=$(cpu_ms "$DAEMON_PID")
}
CLK_TCK=$(getconf CLK_TCK)
cpu_ms() { awk -v t="$CLK_TCK" '{ print int(($14 + $15) * 1000 / t) }' "/proc/$1/stat"; } # user+sys so far

# wait_idle HOME: polls status once a second until db_bytes and rss_bytes stay
# unchanged for 3 polls (at most 60 s); sets IDLE_STATUS.
wait_idle() {
    local home=$1 prev= cur s same=0 i
    for ((i = 0; i < 60; i++)); do
        sleep 1
        s=$(status "$home") || die "status failed"
        cur=$("$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["db_bytes"], d["rss_bytes"])' "$s")
        if [[ $cur == "$prev" ]]; then same=$((same + 1)); else same=0; fi
        prev=$cur
        ((same >= 2)) && break
    done
    IDLE_STATUS=$s
    IDLE_RSS_ANON=$(awk '/RssAnon/ { print $2 * 1024 }' "/proc/$DAEMON_PID/status")
}

# The daemon log lines that time the phases (scan walk+write, snapshot load).
phase_lines() { grep -hE 'scan done|snapshot loaded|listening|starting' "$1"/logs/* 2>/dev/null | sed 's/^/    /' || true; }

# --------------------------------------------------------------- initial index
log "initial index: fsindexd x$RUNS (fresh FSINDEX_HOME each)"
INIT_MS=()
INIT_CPU=()
for ((r = 1; r <= RUNS; r++)); do
    HOME_DIR=$WORK/home$r
    start_and_wait "$HOME_DIR" "init$r"
    INIT_MS+=("$READY_MS")
    INIT_CPU+=("$READY_CPU_MS")
    log "  run $r: ready in $READY_MS ms, entries $(jget "$READY_STATUS" entries), rows_written $(jget "$READY_STATUS" rows_written)"
    INIT_STATUS=$READY_STATUS
    if ((r < RUNS)); then
        stop_daemon
        rm -rf "$HOME_DIR"
    fi
done
INIT_PHASES=$(phase_lines "$HOME_DIR")
HWM_INIT=$(awk '/VmHWM/ {print $2 * 1024}' "/proc/$DAEMON_PID/status")
wait_idle "$HOME_DIR"
IDLE1=$IDLE_STATUS
ANON1=$IDLE_RSS_ANON
log "  idle: $IDLE1"

log "initial index: updatedb x$RUNS (database removed before each run)"
UPDATEDB=(updatedb -l 0 -U "$TREE" -o "$PLOCATE_DB" --prunepaths= --prunenames= --prunefs= --prune-bind-mounts=no)
hyperfine -N --runs "$RUNS" --prepare "rm -f $PLOCATE_DB" --export-json "$WORK/updatedb.json" \
    -n updatedb "${UPDATEDB[*]}" >&2
hyperfine -N --runs "$RUNS" --export-json "$WORK/updatedb-incr.json" \
    -n "updatedb (existing db)" "${UPDATEDB[*]}" >&2
PLOCATE_DB_BYTES=$(stat -c %s "$PLOCATE_DB")
PLOCATE_ENTRIES=$(plocate -d "$PLOCATE_DB" -c /)

# --------------------------------------------------------------------- search
QUERIES=(
    "report"        # common word
    "2025"          # common year
    "IMG"           # common camera prefix, upper case
    "zanzibar"      # rare word
    "quokka"        # rare word
    "z"             # one letter
    "ar"            # two letters, very common
    "tax 2025"      # AND of two terms
    "café jpg"      # AND, unicode
    "ärger"         # unicode, matches Ärger too
    ".tar.gz"       # extension
    "qqxjnomatch"   # no match
)
export FSINDEX_HOME=$HOME_DIR
SEARCH_ROWS=()
for q in "${QUERIES[@]}"; do
    slug=$(printf '%s' "$q" | tr -c 'A-Za-z0-9' '_')
    read -r -a terms <<<"$q"
    n_fs=$("$FSCTL" search --limit 0 "${terms[@]}" | wc -l) || true
    n_pl=$(plocate -i -c -d "$PLOCATE_DB" "${terms[@]}") || true
    log "search '$q': fsctl $n_fs, plocate $n_pl results"
    hyperfine -N -i --warmup 3 --style basic --export-json "$WORK/search-$slug.json" \
        -n fsctl "$FSCTL search --limit 0 $q" \
        -n plocate "plocate -i -d $PLOCATE_DB $q" >&2
    SEARCH_ROWS+=("$q|$n_fs|$n_pl|$WORK/search-$slug.json")
done

# ---------------------------------------------------------------- restart
log "unchanged-tree restart: fsindexd x$RUNS"
RESTART_MS=()
RESTART_CPU=()
RESTART_ROWS=()
SHUTDOWN_MS=()
for ((r = 1; r <= RUNS; r++)); do
    stop_daemon
    SHUTDOWN_MS+=("$SHUT_MS")
    start_and_wait "$HOME_DIR" "restart$r"
    RESTART_MS+=("$READY_MS")
    RESTART_CPU+=("$READY_CPU_MS")
    RESTART_ROWS+=("$(jget "$READY_STATUS" rows_written)")
    log "  run $r: shutdown ${SHUTDOWN_MS[-1]} ms, ready in $READY_MS ms, rows_written ${RESTART_ROWS[-1]}"
done
# The last restart's session: from the last "fsindexd starting" line on.
RESTART_PHASES=$(cat "$HOME_DIR"/logs/* | awk '/fsindexd starting/ { buf = "" } { buf = buf "    " $0 "\n" } END { printf "%s", buf }' | grep -E 'scan done|snapshot loaded|listening|starting' || true)
wait_idle "$HOME_DIR"
IDLE2=$IDLE_STATUS
ANON2=$IDLE_RSS_ANON
log "  idle: $IDLE2"

log "rescan of a running, idle daemon: fsctl scan --wait x$RUNS"
hyperfine -N --runs "$RUNS" --export-json "$WORK/rescan.json" -n "fsctl scan --wait" "$FSCTL scan --wait" >&2

log "bare walk: fdfind -HI --no-ignore x$((RUNS + 2))"
hyperfine -N --warmup 1 --runs $((RUNS + 2)) --export-json "$WORK/fd.json" \
    -n "fdfind -HI" "fdfind -HI --no-ignore . $TREE" >&2
stop_daemon

# ------------------------------------------------------------------- report
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
GIT_REV=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
GIT_DIRTY=$(cd "$REPO" && git status --porcelain --untracked-files=no 2>/dev/null | wc -l)
log "writing the report"
printf '%s\n' "$INIT_STATUS" >"$WORK/init-status.json"
printf '%s\n' "$IDLE1" >"$WORK/idle1.json"
printf '%s\n' "$IDLE2" >"$WORK/idle2.json"
printf '%s\n' "$INIT_PHASES" >"$WORK/init-phases.txt"
printf '%s\n' "$RESTART_PHASES" >"$WORK/restart-phases.txt"
printf '%s\n' "${SEARCH_ROWS[@]}" >"$WORK/search-rows.txt"
"$PY" - "$WORK" <<PYEOF
import json, statistics, sys, os, subprocess
work = sys.argv[1]
def hf(name, i=0):
    return json.load(open(os.path.join(work, name)))["results"][i]
def med_ms(res):
    return res["median"] * 1000
def fmt_ms(x):
    return f"{x:,.0f} ms" if x >= 100 else f"{x:.1f} ms"
def mib(b):
    return f"{b / 2**20:.1f} MiB"
def ver(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0].strip()
    except Exception:
        return "?"

entries_tree = int("$TREE_ENTRIES")
init_ms = [int(x) for x in "${INIT_MS[*]}".split()]
init_cpu = [int(x) for x in "${INIT_CPU[*]}".split()]
restart_cpu = [int(x) for x in "${RESTART_CPU[*]}".split()]
restart_ms = [int(x) for x in "${RESTART_MS[*]}".split()]
restart_rows = [int(x) for x in "${RESTART_ROWS[*]}".split()]
shutdown_ms = [int(x) for x in "${SHUTDOWN_MS[*]}".split()]
rd = lambda name: open(os.path.join(work, name), encoding="utf-8").read()
idle1 = json.loads(rd("idle1.json"))
idle2 = json.loads(rd("idle2.json"))
hwm_init = int("$HWM_INIT" or 0)
upd = med_ms(hf("updatedb.json"))
upd_incr = med_ms(hf("updatedb-incr.json"))
fd = med_ms(hf("fd.json"))
rescan = med_ms(hf("rescan.json"))
init = statistics.median(init_ms)
restart = statistics.median(restart_ms)
ent = idle1["entries"]
pl_db = int("$PLOCATE_DB_BYTES")

out = []
p = out.append
p(f"# fsindex vs plocate / fd: {entries_tree:,} entries")
p("")
p(f"- tree: \`benches/mktree.py --entries $ENTRIES --seed $SEED --out $TREE\` "
  f"({entries_tree:,} entries below the root; fsindex counts {ent:,} with the root itself)")
p(f"- command: \`ENTRIES=$ENTRIES RUNS=$RUNS benches/compare.sh\`")
p(f"- fsindex {idle1.get('version','?')} at git $GIT_REV (+$GIT_DIRTY modified tracked files), release build; "
  f"{ver(['plocate','--version'])}; {ver(['fdfind','--version'])}; {ver(['hyperfine','--version'])}")
p(f"- machine: {os.cpu_count()} CPUs, {ver(['uname','-sr'])}; warm page cache; "
  f"fsindex ready-times polled every ${POLL}s; medians of $RUNS runs unless noted")
p(f"- machine load: CPU $IDLE_PCT% idle before the first timing; load average $LOAD_START at start, $LOAD_END at end")
p("")
p("## Summary")
p("")
p("| figure | fsindex | peer | ratio fsindex/peer | target | command |")
p("|---|---|---|---|---|---|")
def row(fig, a, b, ratio, target, cmd):
    p(f"| {fig} | {a} | {b} | {ratio} | {target} | {cmd} |")
ok = lambda c: "ok" if c else "**MISSED**"
row("initial index", fmt_ms(init), f"{fmt_ms(upd)} (updatedb, fresh db)", f"{init/upd:.2f}x",
    f"<= 1.0x: {ok(init <= upd)}",
    f"\`fsindexd --root TREE\` (fresh FSINDEX_HOME) until \`fsctl status --json\` says ready; "
    f"\`updatedb -l 0 -U TREE -o DB --prunepaths= --prunenames= --prunefs=\` after \`rm DB\`")
u = hf("updatedb.json")
upd_cpu = (u["user"] + u["system"]) * 1000
row("initial index rate", f"{ent/init*1000:,.0f} entries/s", f"{entries_tree/upd*1000:,.0f} entries/s", "", "", "")
row("initial index CPU (user+sys)", fmt_ms(statistics.median(init_cpu)), f"{fmt_ms(upd_cpu)} (updatedb, mean)",
    f"{statistics.median(init_cpu)/upd_cpu:.2f}x", "", "daemon /proc/PID/stat at ready; hyperfine user+system")
row("unchanged-tree restart", fmt_ms(restart), f"{fmt_ms(fd)} (fd walk)", f"{restart/fd:.2f}x",
    f"<= 1.5x: {ok(restart <= 1.5 * fd)}",
    "SIGTERM, wait, \`fsindexd --root TREE\` until ready; \`fdfind -HI --no-ignore . TREE\`")
row("unchanged-tree restart CPU (user+sys)", fmt_ms(statistics.median(restart_cpu)),
    f"{fmt_ms((hf('fd.json')['user'] + hf('fd.json')['system']) * 1000)} (fd, mean)", "", "", "")
row("restart rows_written", str(max(restart_rows)), "", "", f"0: {ok(max(restart_rows) == 0)}",
    "\`fsctl status --json\` .rows_written after each restart")
row("restart vs incremental updatedb", fmt_ms(restart), f"{fmt_ms(upd_incr)} (updatedb, existing db)",
    f"{restart/upd_incr:.2f}x", "", "same updatedb command, database kept")
row("rescan, daemon running", fmt_ms(rescan), f"{fmt_ms(fd)} (fd walk)", f"{rescan/fd:.2f}x", "",
    "\`fsctl scan --wait\` (hyperfine)")
bpe1 = idle1["db_bytes"] / ent
bpe2 = idle2["db_bytes"] / ent
row("index bytes/entry (idle after initial index)", f"{bpe1:.1f} B ({mib(idle1['db_bytes'])})",
    f"{pl_db/entries_tree:.1f} B (plocate db, {mib(pl_db)})", "", f"< 120: {ok(bpe1 < 120)}",
    "\`fsctl status --json\` db_bytes/entries")
row("index bytes/entry (idle after restart)", f"{bpe2:.1f} B ({mib(idle2['db_bytes'])})", "", "",
    f"< 120: {ok(bpe2 < 120)}", "same")
rss1 = idle1["rss_bytes"]; rss2 = idle2["rss_bytes"]
def rss_target(b):
    if ent < 999_000:
        return "< 64 MiB at 1M (not checked below 1M)"
    return f"< 64 MiB at 1M: {ok(b < 64 * 2**20)}"
anon1, anon2 = int("$ANON1" or 0), int("$ANON2" or 0)
row("daemon RSS, idle after initial index", f"{mib(rss1)} ({mib(anon1)} anonymous)", "", "", rss_target(rss1),
    "\`fsctl status --json\` rss_bytes; RssAnon in /proc/PID/status")
row("daemon RSS, idle after restart", f"{mib(rss2)} ({mib(anon2)} anonymous)", "", "", rss_target(rss2), "same")
row("daemon peak RSS during initial index", mib(hwm_init), "", "", "", "VmHWM in /proc/PID/status")
row("daemon shutdown (SIGTERM to exit)", fmt_ms(statistics.median(shutdown_ms)), "", "", "", "")
p("")
p(f"Individual runs (ms): initial index {init_ms}; updatedb {[round(t*1000) for t in hf('updatedb.json')['times']]}; "
  f"restart {restart_ms} (rows_written {restart_rows}); daemon CPU at ready: initial {init_cpu}, restart {restart_cpu}; fd {[round(t*1000) for t in hf('fd.json')['times']]}.")
p("")
p("## Search (whole process, \`hyperfine -N --warmup 3\`, output to /dev/null)")
p("")
p("\`fsctl search --limit 0 TERMS...\` vs \`plocate -i -d DB TERMS...\` (both case-insensitive, all terms must match).")
p("")
p("| query | fsctl median | plocate median | ratio fsctl/plocate | fsctl results | plocate results | counts |")
p("|---|---|---|---|---|---|---|")
rows = rd("search-rows.txt").strip().splitlines()
faster = 0
mism = 0
ratios = []
for line in rows:
    q, nf, np_, js = line.split("|")
    d = json.load(open(js))["results"]
    a, b = med_ms(d[0]), med_ms(d[1])
    ratios.append(a / b)
    faster += a < b
    same = nf == np_
    mism += not same
    p(f"| \`{q}\` | {fmt_ms(a)} | {fmt_ms(b)} | {a/b:.2f}x | {int(nf):,} | {int(np_):,} | {'equal' if same else '**differ**'} |")
p("")
p(f"fsctl faster on {faster} of {len(rows)} queries (target: all); geometric-mean ratio "
  f"{statistics.geometric_mean(ratios):.2f}x; result counts differ on {mism} of {len(rows)}.")
p("")
p("## Daemon phases (from its log)")
p("")
p("Initial index (last run):")
p("")
p(rd("init-phases.txt").rstrip())
p("")
p("Last restart:")
p("")
p(rd("restart-phases.txt").rstrip())
p("")
p("Status JSON, idle after initial index:")
p("")
p("    " + json.dumps(idle1))
p("")
p("Status JSON, idle after restart:")
p("")
p("    " + json.dumps(idle2))
print("\n".join(out))
PYEOF
