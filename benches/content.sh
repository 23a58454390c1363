#!/usr/bin/env bash
# Content search on real trees: how fast the daemon reads them into its
# full-text index, what that costs, and how `fsctl search content:` compares
# with ripgrep over the same files.
#
#   benches/content.sh > benches/RESULTS-content.md
#   benches/content.sh /usr/share/doc ~/src     # other trees
#
# Trees (every one a --root of one daemon started with --content): by
# default /usr/share/doc and the Debian linux-source tree, extracted from
# /usr/src/linux-source-*.tar.xz to $BASE/linux-source-* when it is there
# (apt-get install linux-source); without it, /usr/share/doc alone.
# A third, small root ($WORK/edits) holds the file edited for latency.
#
# Measured, with a release build:
#   - initial extraction: from the daemon's start until status shows every
#     content folder with nothing queued: text MB/s (status text_bytes) and
#     files/s (indexed + failed);
#   - the daemon's CPU time (user+sys, /proc/PID/stat, plus its `--extract`
#     children) and peak RSS (VmHWM) over that run;
#   - FTS size (status fts_bytes) against the text indexed (text_bytes);
#   - `fsctl search --limit 0 content:WORD` as a whole process against
#     `rg -l -i -w -F --no-ignore --hidden WORD TREES` with `hyperfine -N`,
#     for a rare word, a common word and a phrase, page cache warm;
#   - change to findable: a file in a content root is rewritten with a new
#     word, then `fsctl search content:WORD` is run until it lists the file;
#     REPS times, median and max.
#
# Environment:
#   BASE        working folder (default /tmp/content-bench)
#   RARE COMMON PHRASE   the queries (defaults suit linux-source + /usr/share/doc)
#   REPS        latency repetitions (default 15)
#   MIN_RUNS    hyperfine --min-runs (default 10)
#   QUIET_WAIT  seconds to wait for no compiler running before timing (default 120)
#   NO_BUILD=1  skip `cargo build --release -p fsindexd -p fsctl --bins`; KEEP=1 keep the work folder
set -euo pipefail

BASE=${BASE:-/tmp/content-bench}
REPS=${REPS:-15}
MIN_RUNS=${MIN_RUNS:-10}
QUIET_WAIT=${QUIET_WAIT:-120}
RARE=${RARE:-xyzzy}
COMMON=${COMMON:-license}
PHRASE=${PHRASE:-memory barrier}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
FSINDEXD=$CARGO_TARGET_DIR/release/fsindexd
FSCTL=$CARGO_TARGET_DIR/release/fsctl

BENCH=content-bench
# shellcheck source=benches/lib.sh
. "$HERE/lib.sh"
for t in hyperfine rg python3; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install hyperfine ripgrep)"
done
if [[ -z ${NO_BUILD:-} ]]; then
    log "cargo build --release -p fsindexd -p fsctl --bins"
    (cd "$REPO" && cargo build --release -p fsindexd -p fsctl --bins >&2) || die "build failed"
fi
[[ -x $FSINDEXD && -x $FSCTL ]] || die "no release binaries in $CARGO_TARGET_DIR"

mkdir -p "$BASE"
TREES=("$@")
if ((${#TREES[@]} == 0)); then
    TREES=(/usr/share/doc)
    src=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | head -1 || true)
    if [[ -n $src ]]; then
        name=$(basename "$src" .tar.xz)
        if [[ ! -d $BASE/$name ]]; then
            log "extracting $src to $BASE"
            tar -xJf "$src" -C "$BASE"
        fi
        TREES+=("$BASE/$name")
    else
        log "no /usr/src/linux-source-*.tar.xz: /usr/share/doc only"
    fi
fi

bench_workdir "$BASE"

EDITS=$WORK/edits
mkdir -p "$EDITS" "$WORK/home"
echo "a note that will be edited" >"$EDITS/note.txt"
export FSINDEX_HOME=$WORK/home FSINDEX_NO_SPAWN=1
unset FSINDEX_SOCKET

log "warming the page cache"
for t in "${TREES[@]}"; do find "$t" -type f -print0 | xargs -0 cat >/dev/null 2>&1 || true; done
wait_quiet
echo "$QUIET" >"$WORK/quiet"
cut -d' ' -f1-3 /proc/loadavg >"$WORK/load"

# CPU ticks (user+sys) of a process, its reaped children and its live ones.
ticks() {
    local pid=$1 sum c
    # utime stime cutime cstime: fields 14-17, i.e. 12-15 after the ")".
    sum=$(sed 's/.*) //' /proc/"$pid"/stat | awk '{print $12 + $13 + $14 + $15}')
    for c in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
        [[ -r /proc/$c/stat ]] || continue
        sum=$((sum + $(sed 's/.*) //' /proc/"$c"/stat | awk '{print $12 + $13}')))
    done
    echo "$sum"
}
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
hwm_kib() { sed -n 's/^VmHWM:\s*\([0-9]*\) kB/\1/p' /proc/"$1"/status 2>/dev/null || echo 0; }

args=()
for t in "${TREES[@]}" "$EDITS"; do args+=(--root "$t"); done
log "fsindexd ${args[*]} --content"
t0=$(date +%s.%N)
"$FSINDEXD" "${args[@]}" --content 2>"$WORK/fsindexd.stderr" &
DAEMON_PID=$!
ready_at=
child_hwm=0
n_roots=$((${#TREES[@]} + 1))
while :; do
    sleep 0.5
    kill -0 "$DAEMON_PID" 2>/dev/null || die "fsindexd exited: $(cat "$WORK/fsindexd.stderr")"
    for c in $(cat /proc/"$DAEMON_PID"/task/*/children 2>/dev/null); do
        h=$(hwm_kib "$c")
        ((h > child_hwm)) && child_hwm=$h
    done
    s=$("$FSCTL" status --json 2>/dev/null) || continue
    if [[ -z $ready_at && $s == *'"state":"ready"'* ]]; then
        ready_at=$(date +%s.%N)
        ready_ticks=$(ticks "$DAEMON_PID")
        log "ready (names indexed) after $(elapsed "$t0" "$ready_at") s"
    fi
    [[ -n $ready_at ]] || continue
    if python3 -c '
import json, sys
c = json.loads(sys.argv[1])["content"]
f = c["folders"]
# Done: nothing queued, and every file counted was read in this run (the
# figures of a pass made before the first read show nothing queued too).
n = sum(x["indexed"] + sum(x["failed"].values()) for x in f)
ok = len(f) >= int(sys.argv[2]) and all(x["queued"] == 0 for x in f) and n > 0 and c["extracted"] >= n
sys.exit(0 if ok else 1)' "$s" "$n_roots"; then
        break
    fi
done
t1=$(date +%s.%N)
done_ticks=$(ticks "$DAEMON_PID")
daemon_hwm=$(hwm_kib "$DAEMON_PID")
echo "$s" >"$WORK/status-extracted.json"
log "extraction done after $(elapsed "$t0" "$t1") s"
cat >"$WORK/extract.env" <<EOF
t0=$t0
ready_at=$ready_at
t1=$t1
ready_ticks=$ready_ticks
done_ticks=$done_ticks
hz=$(getconf CLK_TCK)
daemon_hwm_kib=$daemon_hwm
child_hwm_kib=$child_hwm
EOF

# Tree sizes, for the report.
for t in "${TREES[@]}"; do
    printf '%s\t%s\t%s\n' "$t" "$(find "$t" -type f | wc -l)" "$(du -sb "$t" | cut -f1)"
done >"$WORK/trees.tsv"

# Search: fsctl (whole process) vs rg -l over the same trees.
k=0
for q in "$RARE" "$COMMON" "$PHRASE"; do
    fq="content:\"$q\""
    n_fs=$("$FSCTL" search --limit 0 "$fq" | wc -l) || true
    n_rg=$(rg -l -i -w -F --no-ignore --hidden -- "$q" "${TREES[@]}" | wc -l) || true
    log "'$q': fsctl $n_fs files, rg $n_rg files"
    hyperfine -N -i --warmup 2 --min-runs "$MIN_RUNS" --style none --export-json "$WORK/hf-$k.json" \
        -n fsctl "$FSCTL search --limit 0 '$fq'" \
        -n rg "rg -l -i -w -F --no-ignore --hidden -- '$q' ${TREES[*]}" >&2
    printf '%s\t%s\t%s\n' "$q" "$n_fs" "$n_rg" >>"$WORK/queries.tsv"
    k=$((k + 1))
done

# Change to findable: rewrite the note with a new word, poll until found.
for ((r = 0; r < REPS; r++)); do
    word="edited${RANDOM}x${r}y"
    a=$(date +%s%N)
    printf 'the note now says %s\n' "$word" >"$EDITS/note.txt"
    until [[ -n $("$FSCTL" search --limit 1 "content:$word" 2>/dev/null) ]]; do
        (($(date +%s%N) - a < 30000000000)) || die "edit $r not findable in 30 s"
    done
    b=$(date +%s%N)
    echo $(((b - a) / 1000000)) >>"$WORK/latency-ms"
    sleep 0.3
done
cut -d' ' -f1-3 /proc/loadavg >>"$WORK/load"
"$FSCTL" status --json >"$WORK/status-end.json"
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" || true
DAEMON_PID=

GIT_REV=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
python3 - "$WORK" "$GIT_REV" "$REPS" "$MIN_RUNS" <<'PYEOF'
import json, statistics, sys, datetime, platform
work, rev, reps, min_runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
env = dict(l.strip().split("=", 1) for l in open(f"{work}/extract.env"))
t0, ready, t1 = float(env["t0"]), float(env["ready_at"]), float(env["t1"])
hz = int(env["hz"])
st = json.load(open(f"{work}/status-extracted.json"))
c = st["content"]
folders = c["folders"]
text = sum(f["text_bytes"] for f in folders)
indexed = sum(f["indexed"] for f in folders)
failed = {}
for f in folders:
    for k, v in f["failed"].items():
        failed[k] = failed.get(k, 0) + v
nfailed = sum(failed.values())
secs = t1 - t0
cpu = int(env["done_ticks"]) / hz
cpu_ready = int(env["ready_ticks"]) / hz
mib = 1 << 20
quiet = open(f"{work}/quiet").read().strip()
load = open(f"{work}/load").read().split("\n")
print("# Content search benchmark\n")
print(f"`benches/content.sh` at {rev}, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, "
      f"{platform.node()}, release build, page cache warm. Machine quiet: {quiet}; "
      f"load before / after: {load[0]} / {load[1] if len(load) > 1 else '?'}.\n")
print("Trees (each a `--root`, daemon started with `--content`):\n")
print("| tree | files | bytes |\n|---|---:|---:|")
for line in open(f"{work}/trees.tsv"):
    t, n, b = line.rstrip("\n").split("\t")
    print(f"| `{t}` | {int(n):,} | {int(b) / mib:,.0f} MiB |")
print("\n## Initial extraction\n")
print("| figure | value |\n|---|---:|")
print(f"| start to names indexed (status ready) | {ready - t0:.1f} s |")
print(f"| start to nothing queued (content done) | {secs:.1f} s |")
print(f"| files indexed / failed | {indexed:,} / {nfailed:,} {json.dumps(failed)} |")
print(f"| text indexed (status text_bytes) | {text / mib:,.1f} MiB |")
print(f"| throughput, whole run | {text / mib / secs:.1f} MB/s of text, {(indexed + nfailed) / secs:,.0f} files/s |")
print(f"| throughput, after names were indexed | {text / mib / max(t1 - ready, 1e-9):.1f} MB/s of text |")
print(f"| daemon CPU (user+sys, with its extract child) | {cpu:.1f} s ({cpu / secs * 100:.0f}% of one core); {cpu_ready:.1f} s of it by ready |")
print(f"| peak RSS (VmHWM): daemon / extract child | {int(env['daemon_hwm_kib']) / 1024:.0f} MiB / {int(env['child_hwm_kib']) / 1024:.0f} MiB |")
print(f"| FTS size (status fts_bytes) | {c['fts_bytes'] / mib:,.1f} MiB = {c['fts_bytes'] / max(text, 1):.2f}x the text |")
print(f"| index.db after extraction (status db_bytes) | {st['db_bytes'] / mib:,.1f} MiB |")
print("\n## `fsctl search --limit 0 content:Q` vs `rg -l -i -w -F --no-ignore --hidden Q TREES`\n")
print(f"Whole processes, `hyperfine -N --warmup 2 --min-runs {min_runs}`; goal: fsctl under 5% of rg's time.\n")
print("| query | files: fsctl / rg | fsctl mean | rg mean | fsctl / rg | goal met |\n|---|---:|---:|---:|---:|---|")
for k, line in enumerate(open(f"{work}/queries.tsv")):
    q, nf, nr = line.rstrip("\n").split("\t")
    hf = {r["command"]: r for r in json.load(open(f"{work}/hf-{k}.json"))["results"]}
    f, r = hf["fsctl"]["mean"], hf["rg"]["mean"]
    ratio = f / r
    print(f"| `{q}` | {int(nf):,} / {int(nr):,} | {f * 1000:.1f} ms | {r * 1000:.0f} ms | {ratio * 100:.1f}% | {'yes' if ratio < 0.05 else '**no**'} |")
lat = [int(x) for x in open(f"{work}/latency-ms")]
print("\n## Change to findable\n")
print(f"A file in a content root rewritten with a new word, then `fsctl search content:WORD` run "
      f"in a loop until it lists the file ({reps} edits, 0.3 s apart):\n")
print(f"median {statistics.median(lat)} ms, min {min(lat)} ms, max {max(lat)} ms "
      f"(all: {', '.join(map(str, lat))}).")
end = json.load(open(f"{work}/status-end.json"))["content"]
print(f"\nFiles read since start, at the end: {end['extracted']:,} "
      f"(the initial {indexed + nfailed:,} plus the {reps} edits).")
PYEOF
