#!/usr/bin/env bash
# Search speed: fsctl vs plocate, whole process, plus the daemon's own latency.
#
#   benches/search-bench.sh                        # both trees, Markdown to stdout
#   benches/search-bench.sh synth real > benches/RESULTS-search.md
#   TREES: synth  the reproducible synthetic tree (mktree.py --entries $ENTRIES --seed 1)
#          real   the Debian linux-source tarball extracted beside a copy of /usr
#
# For each tree: start fsindexd (release build, isolated FSINDEX_HOME, search
# timings logged at debug), build a plocate database with updatedb, then for a
# fixed set of queries
#   - count results of both (equal where the semantics are the same),
#   - time `fsctl search --limit 0 Q > /dev/null` against the closest plocate
#     command with `hyperfine -N` (warmup, one run, same tree),
#   - run the fsctl command REPS times and read the daemon's `search us=`
#     lines for p50 / p99 / max of the in-daemon search, and the same for
#     `--limit 100` (the first 100 results, ranked among all matches).
#
# Environment:
#   ENTRIES     synthetic tree size (default 1000000)
#   BASE        working folder (default /tmp/fsbench); trees at $BASE/t and
#               $BASE/real, paths that contain none of the query words
#   REPS        repetitions for the daemon latency (default 200)
#   QUIET_WAIT  seconds to wait for a machine with no compiler running
#               (rustc, cargo, cc1, ld for 15 s) before timing (default 900)
#   MIN_RUNS    hyperfine --min-runs (default 30)
#   NO_BUILD=1  skip `cargo build --release --bins` and packaging/static-fsctl.sh;
#               KEEP=1 keep $BASE/search.*
#   FSCTL_STATIC  a statically linked fsctl to time beside the dynamic one
#               (default: built by packaging/static-fsctl.sh on Linux with glibc,
#               or its earlier output with NO_BUILD=1; none: leave it out)
set -euo pipefail

ENTRIES=${ENTRIES:-1000000}
BASE=${BASE:-/tmp/fsbench}
REPS=${REPS:-200}
QUIET_WAIT=${QUIET_WAIT:-900}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
FSINDEXD=$CARGO_TARGET_DIR/release/fsindexd
FSCTL=$CARGO_TARGET_DIR/release/fsctl
TREES=("$@")
((${#TREES[@]})) || TREES=(synth real)

BENCH=search-bench
# shellcheck source=benches/lib.sh
. "$HERE/lib.sh"
for t in plocate updatedb hyperfine python3; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install plocate hyperfine)"
done
if [[ -z ${NO_BUILD:-} ]]; then
    log "cargo build --release --bins"
    (cd "$REPO" && cargo build --release --bins >&2) || die "build failed"
fi
[[ -x $FSINDEXD && -x $FSCTL ]] || die "no release binaries in $CARGO_TARGET_DIR"
# The fsctl the Debian package ships: linked statically, it starts ~0.3 ms sooner.
if [[ -z ${FSCTL_STATIC+set} ]]; then
    FSCTL_STATIC=$CARGO_TARGET_DIR/static/$(rustc -vV | sed -n 's/^host: //p')/release/fsctl
    if [[ -z ${NO_BUILD:-} && $(uname -s) == Linux ]]; then
        log "packaging/static-fsctl.sh"
        FSCTL_STATIC=$("$REPO/packaging/static-fsctl.sh") || die "static build failed"
    fi
fi
[[ $FSCTL_STATIC == none || -x $FSCTL_STATIC ]] || FSCTL_STATIC=none

WORK=$(mktemp -d "$BASE/search.XXXXXX")
DAEMON_PID=
cleanup() {
    local rc=$?
    [[ -z $DAEMON_PID ]] || { kill -TERM "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; } || true
    if [[ -z ${KEEP:-} ]]; then rm -rf "$WORK"; else log "kept $WORK"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

make_synth() {
    ROOT=$BASE/t
    local want="entries=$ENTRIES seed=1 mktree=$(sha256sum "$HERE/mktree.py" | cut -c1-16)"
    if [[ ! -d $ROOT || $(cat "$BASE/t.stamp" 2>/dev/null) != "$want" ]]; then
        log "making $ROOT ($want)"
        rm -rf "$ROOT" "$BASE/t.stamp"
        python3 "$HERE/mktree.py" --entries "$ENTRIES" --seed 1 --out "$ROOT" >/dev/null
        echo "$want" >"$BASE/t.stamp"
    fi
    TREE_DESC="\`benches/mktree.py --entries $ENTRIES --seed 1 --out $ROOT\`"
    # query @ plocate arguments (after -i -d DB) @ how the semantics compare
    QUERIES=(
        'report@report@same'
        '2025@2025@same'
        'IMG@IMG@same'
        'zanzibar@zanzibar@same'
        'quokka@quokka@same'
        'z@z@same'
        'ar@ar@same'
        'tax 2025@tax 2025@same'
        'café jpg@café jpg@same'
        'ärger@ärger@same'
        '.tar.gz@.tar.gz@same'
        'qqxjnomatch@qqxjnomatch@same'
        'ext:pdf@--regex \.pdf$@same unless a folder name ends in .pdf (ext: is files only)'
        'ext:jpg size:>1mb@--regex \.jpg$@plocate cannot filter by size: it lists every .jpg'
        'kind:image@--regex \.(jpe?g|png|gif|bmp|tiff?|webp|svg|ico|heic|xpm|xbm|pbm|pgm|ppm|pnm|tga|avif|jxl)$@kind: uses mime_guess (more extensions) and skips folders'
    )
}

make_real() {
    ROOT=$BASE/real
    local src
    src=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | head -1)
    [[ -n $src ]] || die "no /usr/src/linux-source-*.tar.xz (apt-get install linux-source)"
    local want="src=$(basename "$src") usr=copy"
    if [[ ! -d $ROOT || $(cat "$BASE/real.stamp" 2>/dev/null) != "$want" ]]; then
        log "making $ROOT: $src extracted, /usr copied (cp -a)"
        rm -rf "$ROOT" "$BASE/real.stamp"
        mkdir -p "$ROOT"
        tar -xJf "$src" -C "$ROOT"
        cp -a /usr "$ROOT/usr"
        echo "$want" >"$BASE/real.stamp"
    fi
    TREE_DESC="\`tar -xJf $src -C $ROOT && cp -a /usr $ROOT/usr\`"
    QUERIES=(
        'driver@driver@same'
        'usb@usb@same'
        'include@include@same'
        'x@x@same'
        'io@io@same'
        'net ipv4@net ipv4@same'
        'Kconfig arm64@Kconfig arm64@same'
        'sja1105@sja1105@same'
        'nf_conntrack_sip@nf_conntrack_sip@same'
        'qqxjnomatch@qqxjnomatch@same'
        'ext:c@--regex \.c$@same unless a folder name ends in .c (ext: is files only)'
        'ext:so size:>1mb@--regex \.so$@plocate cannot filter by size: it lists every .so'
        'kind:image@--regex \.(jpe?g|png|gif|bmp|tiff?|webp|svg|ico|heic|xpm|xbm|pbm|pgm|ppm|pnm|tga|avif|jxl)$@kind: uses mime_guess (more extensions) and skips folders'
    )
}

# The daemon's `search us=` values logged since line $1 of its logs.
search_us_since() { cat "$HOME_DIR"/logs/* | tail -n +"$(($1 + 1))" | sed -n 's/.*search us=\([0-9]*\).*/\1/p'; }
log_lines() { cat "$HOME_DIR"/logs/* 2>/dev/null | wc -l; }

bench_tree() {
    local tree=$1 out=$WORK/$1
    mkdir -p "$out"
    "make_$tree"
    log "$tree: warming the page cache"
    find "$ROOT" >/dev/null 2>&1 || true
    HOME_DIR=$out/home
    mkdir -p "$HOME_DIR"
    export FSINDEX_HOME=$HOME_DIR FSINDEX_NO_SPAWN=1
    unset FSINDEX_SOCKET
    FSINDEX_LOG='info,fsindexd::engine=debug' "$FSINDEXD" --root "$ROOT" 2>>"$out/fsindexd.stderr" &
    DAEMON_PID=$!
    local s=
    until [[ $s == *'"state":"ready"'* ]]; do
        sleep 0.2
        kill -0 "$DAEMON_PID" 2>/dev/null || die "fsindexd exited: $(cat "$out/fsindexd.stderr")"
        s=$("$FSCTL" status --json 2>/dev/null) || s=
    done
    sleep 3 # let the post-scan checkpoint and snapshot load settle
    "$FSCTL" status --json >"$out/status.json"
    log "$tree: indexed, $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["entries"])' "$out/status.json") entries"
    local db=$out/plocate.db
    updatedb -l 0 -U "$ROOT" -o "$db" --prunepaths= --prunenames= --prunefs= --prune-bind-mounts=no
    plocate -d "$db" -c / >"$out/plocate-entries"
    stat -c %s "$db" >"$out/plocate-bytes"
    wait_quiet
    echo "$QUIET" >"$out/quiet"
    cut -d' ' -f1-3 /proc/loadavg >"$out/load"
    local k=0 line q pl note
    for line in "${QUERIES[@]}"; do
        IFS='@' read -r q pl note <<<"$line"
        # A regex (and its alternatives) is one plocate argument; terms are several.
        local -a fs_args pl_args
        read -r -a fs_args <<<"$q"
        if [[ $pl == --regex\ * ]]; then pl_args=(--regex "${pl#--regex }"); else read -r -a pl_args <<<"$pl"; fi
        local n_fs n_pl
        n_fs=$("$FSCTL" search --limit 0 "${fs_args[@]}" | wc -l) || true
        n_pl=$(plocate -i -d "$db" "${pl_args[@]}" | wc -l) || true
        log "$tree '$q': fsctl $n_fs, plocate $n_pl"
        # hyperfine splits commands on spaces unless quoted: quote each word.
        local fcmd="$FSCTL search --limit 0" pcmd="plocate -i -d $db" a
        for a in "${fs_args[@]}"; do fcmd+=" '$a'"; done
        for a in "${pl_args[@]}"; do pcmd+=" '$a'"; done
        local -a static=()
        if [[ $FSCTL_STATIC != none ]]; then
            [[ $("$FSCTL_STATIC" search --limit 0 "${fs_args[@]}" | wc -l) == "$n_fs" ]] || die "$FSCTL_STATIC: another count for '$q'"
            static=(-n fsctl-static "${fcmd/#"$FSCTL"/"$FSCTL_STATIC"}")
        fi
        hyperfine -N -i --warmup 5 --min-runs "${MIN_RUNS:-30}" --style none --export-json "$out/hf-$k.json" \
            -n fsctl "$fcmd" "${static[@]}" -n plocate "$pcmd" >&2
        local before r
        before=$(log_lines)
        for ((r = 0; r < REPS; r++)); do "$FSCTL" search --limit 0 "${fs_args[@]}" >/dev/null || true; done
        sleep 1 # the daemon's log writer is non-blocking
        search_us_since "$before" | tail -n "$REPS" >"$out/us-$k.txt"
        # The first 100 results (target: under 10 ms p99 in the daemon, whatever the total).
        before=$(log_lines)
        for ((r = 0; r < REPS; r++)); do "$FSCTL" search --limit 100 "${fs_args[@]}" >/dev/null || true; done
        sleep 1
        search_us_since "$before" | tail -n "$REPS" >"$out/us100-$k.txt"
        printf '%s\t%s\t%s\t%s\t%s\n' "$q" "$pl" "$note" "$n_fs" "$n_pl" >>"$out/queries.tsv"
        k=$((k + 1))
    done
    cut -d' ' -f1-3 /proc/loadavg >>"$out/load"
    "$FSCTL" status --json >"$out/status-end.json"
    kill -TERM "$DAEMON_PID"
    wait "$DAEMON_PID" || true
    DAEMON_PID=
    printf '%s\n' "$TREE_DESC" >"$out/desc"
    printf '%s\n' "$ROOT" >"$out/root"
}

for t in "${TREES[@]}"; do bench_tree "$t"; done

GIT_REV=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
GIT_DIRTY=$(git -C "$REPO" status --porcelain --untracked-files=no 2>/dev/null | wc -l)
SETTINGS="REPS=$REPS MIN_RUNS=${MIN_RUNS:-30} QUIET_WAIT=$QUIET_WAIT"
python3 - "$WORK" "$GIT_REV" "$GIT_DIRTY" "$REPS" "$SETTINGS" "${TREES[@]}" <<'PYEOF'
import json, os, platform, statistics, subprocess, sys, datetime
work, rev, dirty, reps, settings, trees = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6:]
min_runs = settings.split("MIN_RUNS=")[1].split()[0]
def ver(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0].strip()
    except Exception:
        return "?"
def ms(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))]
cpu = "?"
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip()
        break
out = []
p = out.append
p("# Search: fsctl vs plocate")
p("")
p(f"- {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; fsindex at git {rev} (+{dirty} modified tracked files), release build; "
  f"{ver(['plocate', '--version'])}; {ver(['hyperfine', '--version'])}")
p(f"- machine: {os.cpu_count()} × {cpu}, {platform.system()} {platform.release()}, "
  f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB RAM; warm page cache")
p(f"- command: `{settings} benches/search-bench.sh " + " ".join(trees) + " > benches/RESULTS-search.md`")
p(f"- whole process: `hyperfine -N -i --warmup 5 --min-runs {min_runs}`, output to /dev/null, median; "
  f"daemon: the `search us=` debug lines of fsindexd over {reps} runs of the same fsctl command "
  "(parse excluded; match, rank and build every result included; since issue 16's fifth stop the first chunks are sent while the rest are built)")
p("- fsindex matches the path relative to the root, plocate the absolute path; each root's own path holds none of the query words")
for t in trees:
    d = os.path.join(work, t)
    st = json.load(open(os.path.join(d, "status.json")))
    st_end = json.load(open(os.path.join(d, "status-end.json")))
    ent = st["entries"]
    pl_ent = int(open(os.path.join(d, "plocate-entries")).read())
    pl_bytes = int(open(os.path.join(d, "plocate-bytes")).read())
    quiet = open(os.path.join(d, "quiet")).read().strip()
    load = open(os.path.join(d, "load")).read().split("\n")
    p("")
    p(f"## {t}: {ent:,} entries")
    p("")
    p(f"- tree: {open(os.path.join(d, 'desc')).read().strip()}")
    p(f"- index: {st['db_bytes'] / ent:.1f} B/entry on disk ({st['db_bytes'] / 2**20:.1f} MiB, target < 120); "
      f"plocate {pl_bytes / pl_ent:.1f} B/entry ({pl_bytes / 2**20:.1f} MiB, {pl_ent:,} paths); "
      f"daemon RSS {st_end['rss_bytes'] / 2**20:.0f} MiB after the run")
    p(f"- quiet machine (no compiler for 15 s before timing): {quiet}; load average {load[0]} at start, {load[1]} at end")
    p("")
    has_static = "fsctl-static" in {r["command"] for r in json.load(open(os.path.join(d, "hf-0.json")))["results"]}
    p("| query | plocate command | fsctl ms | " + ("static fsctl ms | " if has_static else "") + "plocate ms | fsctl/plocate | "
      + ("static/plocate | " if has_static else "") + "fsctl results | plocate results | daemon p50 / p99 / max ms | first 100: daemon p50 / p99 ms |")
    p("|---|---|---|---|---|---|---|---|---|" + ("---|---|" if has_static else ""))
    notes = []
    wins = swins = 0
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(d, "queries.tsv"))]
    p99s = []
    p99s100 = []
    for k, (q, pl, note, nf, np_) in enumerate(rows):
        hf = {r["command"]: r["median"] * 1000 for r in json.load(open(os.path.join(d, f"hf-{k}.json")))["results"]}
        a, b, c = hf["fsctl"], hf["plocate"], hf.get("fsctl-static")
        wins += a < b
        swins += c is not None and c < b
        us = [int(x) / 1000 for x in open(os.path.join(d, f"us-{k}.txt")).read().split()]
        lat = f"{ms(pct(us, 0.5))} / {ms(pct(us, 0.99))} / {ms(max(us))}" if us else "?"
        if us:
            p99s.append((pct(us, 0.99), q))
        f100 = os.path.join(d, f"us100-{k}.txt")
        us100 = [int(x) / 1000 for x in open(f100).read().split()] if os.path.exists(f100) else []
        lat100 = f"{ms(pct(us100, 0.5))} / {ms(pct(us100, 0.99))}" if us100 else "?"
        if us100:
            p99s100.append((pct(us100, 0.99), q))
        same = "" if nf == np_ else " (**differ**)" if note == "same" else " (differ, see note)"
        if note != "same":
            notes.append(f"`{q}`: {note}; plocate command `plocate -i {pl}`.")
        cell = lambda x: x.replace("|", "\\|")
        st = (f"{ms(c)} | ", f"{c / b:.2f}x | ") if has_static else ("", "")
        p(f"| `{q}` | `plocate -i {cell(pl)}` | {ms(a)} | {st[0]}{ms(b)} | {a / b:.2f}x | {st[1]}{int(nf):,}{same} | {int(np_):,} | {lat} | {lat100} |")
    p("")
    p(f"fsctl faster on {wins} of {len(rows)} queries" +
      (f", the static fsctl (packaging/static-fsctl.sh, as the Debian package ships it) on {swins}. " if has_static else ". ") +
      f"Daemon p99 under 10 ms on {sum(x < 10 for x, _ in p99s)} of {len(p99s)} queries" +
      (f" (over: {', '.join(f'`{q}` {ms(x)} ms' for x, q in p99s if x >= 10)})." if any(x >= 10 for x, _ in p99s) else ".") +
      (f" The first 100 results (`--limit 100`): daemon p99 under 10 ms on {sum(x < 10 for x, _ in p99s100)} of {len(p99s100)} queries" +
       (f" (over: {', '.join(f'`{q}` {ms(x)} ms' for x, q in p99s100 if x >= 10)})." if any(x >= 10 for x, _ in p99s100) else ".") if p99s100 else ""))
    if any(r[3] != r[4] and r[2] == "same" for r in rows):
        notes.append("**differ**: fsctl never lists the `block` and `skip` tiers of sensitive files "
                     "(`*.pem`, `*.key`, `credentials*`, `secrets*`, ...; GUIDE.md, What is indexed), which plocate lists.")
    for n in notes:
        p(f"- {n}")
print("\n".join(out))
PYEOF
