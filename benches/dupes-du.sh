#!/usr/bin/env bash
# Duplicates and disk usage, side by side on one tree in one run:
#   fsctl dupes (first run, then again with cached hashes) vs fclones group,
#   jdupes -r and rdfind; fsctl du --top 20 vs du -d1 and gdu -n.
#
#   benches/dupes-du.sh > benches/RESULTS-dupes.md       # 1M entries + 3000 groups
#   TREE=/tmp/fsbench/real MAKE=0 benches/dupes-du.sh   # an existing tree as is
#   ENTRIES=100000 DUPE_GROUPS=300 BIG_GROUPS=2 SMALL_FILES=100000 \
#     TREE=/tmp/fsbench/small benches/dupes-du.sh         # many small same-size files
#
# Environment:
#   ENTRIES   entries of the synthetic tree (default 1000000, mktree.py)
#   DUPE_GROUPS    duplicate groups of random content added by mkdupes.py (3000)
#   BIG_GROUPS     groups of 2-8 MiB files among them (20)
#   SMALL_FILES    small files of random content, sizes shared, few equal (0;
#                  mkdupes.py --small-files), SMALL_GROUPS of them copied (4000)
#   SEED      seed of both generators (1)
#   COLD=1    cold-ish: before each finder, the tree's file contents are
#             evicted from the page cache (posix_fadvise DONTNEED on every
#             file; folders and inodes stay cached, nothing else on the
#             machine is touched). Otherwise every finder runs warm.
#   BASE      working folder (/tmp/fsbench); the tree is $BASE/d unless TREE
#   MAKE=0    use TREE as it is (no generation)
#   RUNS      hyperfine runs for du (10)
#   NO_BUILD=1, NO_INSTALL=1   skip cargo build / installing the peers
#
# The Markdown report goes to stdout, progress to stderr. The page cache is
# warm for everyone (the tree is read once before anything is timed); each
# duplicate finder runs once, fsindex first (its hash cache empty).
set -euo pipefail

ENTRIES=${ENTRIES:-1000000}
DUPE_GROUPS=${DUPE_GROUPS:-3000}
BIG_GROUPS=${BIG_GROUPS:-20}
SMALL_FILES=${SMALL_FILES:-0}
SMALL_GROUPS=${SMALL_GROUPS:-4000}
COLD=${COLD:-0}
SEED=${SEED:-1}
BASE=${BASE:-/tmp/fsbench}
TREE=${TREE:-$BASE/d}
MAKE=${MAKE:-1}
RUNS=${RUNS:-10}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
FSINDEXD=$CARGO_TARGET_DIR/release/fsindexd
FSCTL=$CARGO_TARGET_DIR/release/fsctl

BENCH=dupes-du
# shellcheck source=benches/lib.sh
. "$HERE/lib.sh"
now_ns() { date +%s%N; }
secs_since() { echo "scale=2; ($(now_ns) - $1) / 1000000000" | bc; }

if [[ -z ${NO_INSTALL:-} ]]; then
    missing=()
    for p in jdupes rdfind gdu hyperfine; do command -v "$p" >/dev/null || missing+=("$p"); done
    if ((${#missing[@]})); then
        log "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 ||
            { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2; }
    fi
    command -v fclones >/dev/null || { log "cargo install fclones"; cargo install fclones --locked >&2; }
fi
for t in jdupes rdfind gdu hyperfine fclones python3 bc; do command -v "$t" >/dev/null || die "$t not found"; done
if [[ -z ${NO_BUILD:-} ]]; then
    (cd "$REPO" && cargo build --release -p fsindexd -p fsctl >&2) || die "build failed"
fi

# ---------------------------------------------------------------- the tree
if [[ $MAKE == 1 ]]; then
    stamp="entries=$ENTRIES groups=$DUPE_GROUPS big=$BIG_GROUPS small=$SMALL_FILES/$SMALL_GROUPS seed=$SEED $(cat "$HERE/mktree.py" "$HERE/mkdupes.py" | sha256sum | cut -c1-16)"
    if [[ -f $TREE.stamp && $(cat "$TREE.stamp") == "$stamp" ]]; then
        log "reusing $TREE"
    else
        rm -rf "$TREE" "$TREE.stamp"
        log "making $TREE: mktree.py --entries $ENTRIES, then mkdupes.py --groups $DUPE_GROUPS"
        python3 "$HERE/mktree.py" --entries "$ENTRIES" --seed "$SEED" --out "$TREE" >/dev/null
        python3 "$HERE/mkdupes.py" --out "$TREE/dupes" --groups "$DUPE_GROUPS" --big-groups "$BIG_GROUPS" \
            --small-files "$SMALL_FILES" --small-groups "$SMALL_GROUPS" --seed "$SEED" >&2
        sync
        # Hashes taken within 2 s of a file's last change are not trusted
        # later (racy timestamps): let the newest files age first.
        sleep 3
        echo "$stamp" >"$TREE.stamp"
    fi
fi
[[ -d $TREE ]] || die "no tree at $TREE"
W=$(mktemp -d "$BASE/dupes-run.XXXX")
trap '[[ -n ${P:-} ]] && kill $P 2>/dev/null; rm -rf "$W"' EXIT
log "warming the page cache"
[[ $COLD == 1 ]] || find "$TREE" -type f -print0 | xargs -0 cat >/dev/null 2>&1 || true
entries=$(find "$TREE" -mindepth 1 | wc -l)
bytes=$(du -s -B1 "$TREE" | cut -f1)

# ------------------------------------------------------------- the index
export FSINDEX_HOME=$W/home FSINDEX_NO_SPAWN=1
"$FSINDEXD" --root "$TREE" 2>"$W/daemon.err" &
P=$!
until "$FSCTL" status --json 2>/dev/null | grep -q '"state":"ready"'; do sleep 0.1; done
log "indexed $entries entries"
# Then idle (the media and tag readers done): under 3 ticks of CPU a
# second, three seconds running, so the daemon's CPU below is the search's.
calm=0
while ((calm < 3)); do
    a=$(awk '{print $14 + $15}' "/proc/$P/stat"); sleep 1; b=$(awk '{print $14 + $15}' "/proc/$P/stat")
    if ((b - a < 3)); then calm=$((calm + 1)); else calm=0; fi
done

evict() { # the file contents under $1 out of the page cache
    python3 - "$1" <<'PY'
import os, sys
for d, _, files in os.walk(sys.argv[1]):
    for f in files:
        try:
            fd = os.open(os.path.join(d, f), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
PY
}
daemon_ticks() { awk '{print $14 + $15}' "/proc/$P/stat"; }
timed() { # name, output file, command...: wall seconds, max RSS and CPU seconds to $W/name.time
    local name=$1 out=$2; shift 2
    wait_quiet
    [[ $COLD == 1 ]] && evict "$TREE"
    log "$name: $*"
    local t0
    t0=$(daemon_ticks)
    /usr/bin/time -f "%e %M %U %S" -o "$W/$name.time" "$@" >"$out" 2>"$W/$name.err" || die "$name failed: $(tail -3 "$W/$name.err")"
    # CPU: the command's own (user + system), and for fsctl the daemon's
    # too (on a loaded machine the wall time says more about the load).
    echo "$(daemon_ticks) $t0" >"$W/$name.ticks"
}
timed fsindex1 "$W/fsindex1.json" "$FSCTL" dupes "$TREE" --json
timed fsindex2 "$W/fsindex2.json" "$FSCTL" dupes "$TREE" --json
# One file changed elsewhere in the tree: the previous answer cannot be
# reused, the candidates are listed and checked again, their hashes cached.
echo "changed $(date)" >>"$TREE/fsindex-bench-touched.txt"
sleep 3
timed fsindex3 "$W/fsindex3.json" "$FSCTL" dupes "$TREE" --json
rm -f "$TREE/fsindex-bench-touched.txt"
timed fclones "$W/fclones.json" fclones group --hidden --no-ignore -f json "$TREE"
timed jdupes "$W/jdupes.txt" jdupes -r -q "$TREE"
timed rdfind "$W/rdfind.out" rdfind -dryrun true -outputname "$W/rdfind.txt" "$TREE"
cmp -s "$W/fsindex1.json" "$W/fsindex2.json" || die "the cached run answered differently"

# Groups, files in groups, and reclaimable bytes as each tool reports them.
python3 - "$W" >"$W/counts" <<'EOF'
import json, os, sys
w = sys.argv[1]
def fsindex():
    g = [json.loads(l) for l in open(f"{w}/fsindex1.json") if l.strip()]
    return len(g), sum(len(x["copies"]) for x in g), sum(x["reclaimable_bytes"] for x in g)
def fclones():
    d = json.load(open(f"{w}/fclones.json"))
    g = d["groups"]
    return len(g), sum(len(x["files"]) for x in g), sum(x["file_len"] * (len(x["files"]) - 1) for x in g)
def jdupes():
    groups = [b.split("\n") for b in open(f"{w}/jdupes.txt", errors="replace").read().split("\n\n") if b.strip()]
    files = sum(len([p for p in b if p]) for b in groups)
    rec = sum(os.path.getsize([p for p in b if p][0]) * (len([p for p in b if p]) - 1) for b in groups)
    return len(groups), files, rec
def rdfind():
    groups, files, rec = 0, 0, 0
    for l in open(f"{w}/rdfind.txt", errors="replace"):
        if l.startswith("#"):
            continue
        parts = l.split(" ", 7)
        if len(parts) < 8:
            continue
        files += 1
        if parts[0] == "DUPTYPE_FIRST_OCCURRENCE":
            groups += 1
        else:
            rec += int(parts[3])
    return groups, files, rec
for name, f in [("fsindex", fsindex), ("fclones", fclones), ("jdupes", jdupes), ("rdfind", rdfind)]:
    try:
        print(name, *f())
    except Exception as e:
        print(name, "?", "?", "?", f"({e})")
EOF

# -------------------------------------------------------------------- du
wait_quiet
log "du: hyperfine"
"$FSCTL" du "$TREE" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["bytes"])' >"$W/du.fsindex"
hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$W/du.json" \
    -n "fsctl du --top 20" "$FSCTL du $TREE --top 20" \
    -n "du -d1" "du -d1 -B1 $TREE" \
    -n "gdu -n" "gdu -n -p --no-color $TREE" >&2

# ----------------------------------------------------------------- report
t() { cut -d' ' -f1 "$W/$1.time"; }
rss() { echo $(( $(cut -d' ' -f2 "$W/$1.time") / 1024 )); }
cpu() { # user + system seconds of the command, plus the daemon's for fsctl
    local u s d=0
    read -r _ _ u s <"$W/$1.time"
    [[ $1 == fsindex* ]] && d=$(awk -v hz="$(getconf CLK_TCK)" '{print ($1 - $2) / hz}' "$W/$1.ticks")
    echo "$u + $s + $d" | bc
}
count() { awk -v n="$1" '$1 == n {print $'"$2"'}' "$W/counts"; }
fastest_peer=$(printf '%s\n' "$(t fclones)" "$(t jdupes)" "$(t rdfind)" | sort -g | head -1)
cat <<EOF
# Duplicates and disk usage: fsindex against fclones, jdupes, rdfind, du and gdu

$(date -u +%Y-%m-%d), $(nproc) cores, $(uname -r). Command: \`benches/dupes-du.sh\`
(ENTRIES=$ENTRIES DUPE_GROUPS=$DUPE_GROUPS SEED=$SEED MAKE=$MAKE), tree \`$TREE\`:
$entries entries, $(numfmt --to=iec "$bytes") allocated. $([[ $COLD == 1 ]] && echo "Cold-ish: the tree's file contents evicted from the page cache (fadvise DONTNEED) before each tool, metadata cached;" || echo "Page cache warm for every tool;")
each duplicate finder ran once, fsindex first with an empty hash cache.

| duplicates | wall s | CPU s | max RSS MiB | groups | files in groups | reclaimable bytes |
|---|---|---|---|---|---|---|
| fsctl dupes, first run | $(t fsindex1) | $(cpu fsindex1) | $(rss fsindex1) (client) | $(count fsindex 2) | $(count fsindex 3) | $(count fsindex 4) |
| fsctl dupes, repeat, nothing changed | $(t fsindex2) | $(cpu fsindex2) | $(rss fsindex2) (client) | same answer (byte-identical output) | | |
| fsctl dupes, repeat after one file changed | $(t fsindex3) | $(cpu fsindex3) | $(rss fsindex3) (client) | $(cmp -s "$W/fsindex1.json" "$W/fsindex3.json" && echo "same answer" || echo "answer differs") | | |
| fclones group --hidden --no-ignore | $(t fclones) | $(cpu fclones) | $(rss fclones) | $(count fclones 2) | $(count fclones 3) | $(count fclones 4) |
| jdupes -r | $(t jdupes) | $(cpu jdupes) | $(rss jdupes) | $(count jdupes 2) | $(count jdupes 3) | $(count jdupes 4) |
| rdfind -dryrun true | $(t rdfind) | $(cpu rdfind) | $(rss rdfind) | $(count rdfind 2) | $(count rdfind 3) | $(count rdfind 4) |

- fsindex first run / fastest peer: $(printf "%.2f" "$(echo "scale=4; $(t fsindex1) / $fastest_peer" | bc)")x (target: no slower, 1.00x or less).
- CPU seconds, fsindex first run (daemon + client) / the least of the peers': $(printf "%.2f" "$(echo "scale=4; $(cpu fsindex1) / $(printf '%s\n' "$(cpu fclones)" "$(cpu jdupes)" "$(cpu rdfind)" | sort -g | head -1)" | bc)")x.
- repeat, nothing changed / fastest peer: $(printf "%.1f" "$(echo "scale=4; $(t fsindex2) / $fastest_peer * 100" | bc)")% (target: under 5%).
- repeat after one change (all hashes from the cache, every candidate re-checked with lstat) / fastest peer: $(printf "%.1f" "$(echo "scale=4; $(t fsindex3) / $fastest_peer * 100" | bc)")%.
- fsindex's summary line, first run: $(tail -1 "$W/fsindex1.err")
- fsindex's summary line, repeat: $(tail -1 "$W/fsindex2.err")
- fsindex's summary line, repeat after one change: $(tail -1 "$W/fsindex3.err")
- "files in groups" counts inodes for fsindex (hard links to one inode are one copy) and paths for
  the peers where they list them.

| disk usage (hyperfine, $RUNS runs) | mean ms | ± | min ms |
|---|---|---|---|
$(python3 -c '
import json,sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("| {} | {:.1f} | {:.1f} | {:.1f} |".format(r["command"], r["mean"]*1000, r["stddev"]*1000, r["min"]*1000))
' "$W/du.json")

- fsctl du total: $(cat "$W/du.fsindex") bytes; \`du -s -B1\`: $bytes bytes ($( [[ $(cat "$W/du.fsindex") == "$bytes" ]] && echo equal || echo DIFFERENT)).
- fsindexd RSS after the runs: $(( $("$FSCTL" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["rss_bytes"])') >> 20 )) MiB.
EOF
kill $P; wait $P 2>/dev/null || true; P=
