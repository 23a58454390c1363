#!/usr/bin/env bash
# Content search against Recoll and ripgrep, on one mixed tree, in one run
# (issue 31).
#
#   benches/content-vs-recoll.sh > benches/RESULTS-recoll.md
#
# The tree ($BASE/tree, made here, nothing of it goes into git):
#   - doc/     a copy of /usr/share/doc;
#   - crates/  crate sources from ~/.cargo/registry/src, whole crates in name
#              order until the tree holds $FILES files;
#   - office/  $DOCS DOCX and $DOCS PDF documents written by
#              tests/make_documents.py (python-docx, reportlab; tests/setup.sh
#              installs them), paragraphs cut from the copyright files.
#
# Recoll from Debian (recollcmd, installed here with poppler-utils for its
# PDF filter; not in CI) with stemming like ours: the stem databases of the
# seven languages fsindex is tested in, unknown text files read as text
# (`textunknownasplain`, fsindex reads source and text of any extension),
# and `*.gz` skipped (fsindex does not decompress; Recoll would).
#
# Measured, with a release build, page cache warm:
#   - initial extraction: fsindexd from its start until status shows nothing
#     queued and every file read (the content.sh rule), against
#     `recollindex -z` (a fresh index), whole processes, wall time;
#   - queries, whole processes, interleaved round by round ($ROUNDS rounds,
#     the order shuffled each round), medians: `fsctl search --limit 0
#     content:Q` (paths to a pipe, as `rg -l` gives them: no snippets) and
#     `fsctl --json search --limit 0 content:Q` (JSON lines, the first 10
#     with a snippet, as a terminal or an agent gets them) against
#     `recollq -b` and `rg -l -i -w -F`, for a rare word, a common word and
#     a phrase; the number of files each finds;
#   - inside the daemon: the p50 of `whole_us` (the request, content match
#     and snippets included) from its debug log, for each query.
#
# Environment:
#   BASE      working folder (default /tmp/content-recoll); KEEP=1 keeps it
#   FILES     files in the tree (default 22000); DOCS generated of each kind (400)
#   ROUNDS    query rounds (default 15)
#   RARE COMMON PHRASE   the queries (defaults: ethernet, copyright, "free software")
#   TREE_ONLY=1 make the tree and stop
#   NO_BUILD=1  skip `cargo build --release -p fsindexd -p fsctl --bins`
#   FSINDEX_BIN  folder of release fsindexd and fsctl (default the target dir's)
#   QUIET_WAIT  seconds to wait for no compiler running (default 120)
set -euo pipefail

BASE=${BASE:-/tmp/content-recoll}
FILES=${FILES:-22000}
DOCS=${DOCS:-400}
ROUNDS=${ROUNDS:-15}
QUIET_WAIT=${QUIET_WAIT:-120}
RARE=${RARE:-ethernet}
COMMON=${COMMON:-copyright}
PHRASE=${PHRASE:-free software}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
BIN=${FSINDEX_BIN:-$CARGO_TARGET_DIR/release}
FSINDEXD=$BIN/fsindexd
FSCTL=$BIN/fsctl

BENCH=content-vs-recoll
# shellcheck source=benches/lib.sh
. "$HERE/lib.sh"

if ! command -v recollindex >/dev/null || ! command -v pdftotext >/dev/null; then
    log "installing recollcmd and poppler-utils (Debian)"
    SUDO=
    [[ $(id -u) == 0 ]] || SUDO=sudo
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq recollcmd poppler-utils >&2
fi
for t in recollindex recollq rg python3; do
    command -v "$t" >/dev/null || die "$t not found"
done
python3 -c 'import docx, reportlab' 2>/dev/null || die "python-docx and reportlab: run tests/setup.sh"
if [[ -z ${NO_BUILD:-} ]]; then
    log "cargo build --release -p fsindexd -p fsctl --bins"
    (cd "$REPO" && cargo build --release -p fsindexd -p fsctl --bins >&2) || die "build failed"
fi
[[ -n ${TREE_ONLY:-} || (-x $FSINDEXD && -x $FSCTL) ]] || die "no release binaries in $BIN"

# ---------------------------------------------------------------- the tree
TREE=$BASE/tree
if [[ ! -f $TREE/.made ]]; then
    rm -rf "$TREE"
    mkdir -p "$TREE/crates" "$TREE/office"
    log "copying /usr/share/doc"
    cp -a /usr/share/doc "$TREE/doc"
    n=$(find "$TREE" -type f | wc -l)
    for c in $(ls -d ~/.cargo/registry/src/*/*/ | sort); do
        ((n + 2 * DOCS < FILES)) || break
        cp -a "$c" "$TREE/crates/"
        n=$((n + $(find "$c" -type f | wc -l)))
    done
    log "writing $DOCS DOCX and $DOCS PDF documents"
    python3 - "$TREE/office" "$DOCS" <<'EOF' | python3 "$REPO/tests/make_documents.py"
import glob, json, random, sys
out, n = sys.argv[1], int(sys.argv[2])
random.seed(31)
paras = []
for f in sorted(glob.glob("/usr/share/doc/*/copyright")):
    text = open(f, errors="replace").read()
    paras += [p.strip().replace("\n", " ") for p in text.split("\n\n") if 40 < len(p.strip()) < 600]
spec = []
for i in range(n):
    for ext in ("docx", "pdf"):
        spec.append({"path": f"{out}/{ext}/{i // 100:02}/doc{i:04}.{ext}",
                     "paragraphs": random.sample(paras, 6)})
json.dump(spec, sys.stdout)
EOF
    touch "$TREE/.made"
fi
N_FILES=$(find "$TREE" -type f | wc -l)
N_BYTES=$(du -sb "$TREE" | cut -f1)
log "tree: $N_FILES files, $((N_BYTES >> 20)) MiB"
[[ -z ${TREE_ONLY:-} ]] || exit 0

bench_workdir "$BASE"

log "warming the page cache"
find "$TREE" -type f -print0 | xargs -0 cat >/dev/null 2>&1 || true
wait_quiet
cut -d' ' -f1-3 /proc/loadavg >"$WORK/load"

# --------------------------------------------------------------- Recoll
RCONF=$WORK/recoll
mkdir -p "$RCONF"
cat >"$RCONF/recoll.conf" <<EOF
topdirs = $TREE
indexstemminglanguages = english german french spanish italian portuguese dutch
textunknownasplain = 1
skippedNames+ = *.gz
loglevel = 1
EOF
log "recollindex -z"
r0=$(date +%s.%N)
recollindex -c "$RCONF" -z >"$WORK/recollindex.out" 2>&1 || die "recollindex failed: $(tail -5 "$WORK/recollindex.out")"
r1=$(date +%s.%N)
RECOLL_S=$(awk -v a="$r0" -v b="$r1" 'BEGIN { printf "%.1f", b - a }')
log "recollindex: $RECOLL_S s"

# -------------------------------------------------------------- fsindexd
export FSINDEX_HOME=$WORK/home FSINDEX_NO_SPAWN=1 FSINDEX_LOG=fsindexd=debug
unset FSINDEX_SOCKET
mkdir -p "$FSINDEX_HOME"
log "fsindexd --root $TREE --content"
f0=$(date +%s.%N)
"$FSINDEXD" --root "$TREE" --content 2>"$WORK/fsindexd.stderr" &
DAEMON_PID=$!
while :; do
    sleep 0.2
    kill -0 "$DAEMON_PID" 2>/dev/null || die "fsindexd exited: $(cat "$WORK/fsindexd.stderr")"
    s=$("$FSCTL" status --json 2>/dev/null) || continue
    if python3 -c '
import json, sys
c = json.loads(sys.argv[1]).get("content") or {}
f = c.get("folders") or []
n = sum(x["indexed"] + sum(x["failed"].values()) for x in f)
ok = f and all(x["queued"] == 0 for x in f) and n > 0 and c["extracted"] >= n
sys.exit(0 if ok else 1)' "$s"; then
        break
    fi
done
f1=$(date +%s.%N)
FS_S=$(awk -v a="$f0" -v b="$f1" 'BEGIN { printf "%.1f", b - a }')
echo "$s" >"$WORK/status.json"
log "fsindexd extraction: $FS_S s"

# --------------------------------------------------------------- queries
log "queries: $ROUNDS rounds, interleaved"
python3 - "$WORK" "$ROUNDS" "$FSCTL" "$RCONF" "$TREE" "$RARE" "$COMMON" "$PHRASE" <<'EOF' >"$WORK/queries.json"
import json, random, statistics, subprocess, sys, time
work, rounds, fsctl, rconf, tree = sys.argv[1:6]
queries = sys.argv[6:9]
rounds = int(rounds)
def cmds(q):
    quoted = f'"{q}"' if " " in q else q
    return {
        "fsctl": [fsctl, "search", "--limit", "0", f"content:{quoted}"],
        "fsctl_json": [fsctl, "--json", "search", "--limit", "0", f"content:{quoted}"],
        "recollq": ["recollq", "-c", rconf, "-b", "-n", "0", quoted],
        "rg": ["rg", "-l", "-i", "-w", "-F", "--no-ignore", "--hidden", "--", q, tree],
    }
counts, times = {}, {}
for q in queries:
    for tool, argv in cmds(q).items():
        out = subprocess.run(argv, capture_output=True).stdout
        lines = [l for l in out.split(b"\n") if l.strip()]
        if tool == "recollq":  # a header, then one file:// URL a line
            lines = [l for l in lines if l.startswith(b"file://")]
        counts[f"{tool}\t{q}"] = len(lines)
runs = [(tool, q) for q in queries for tool in ("fsctl", "fsctl_json", "recollq", "rg")]
for r in range(rounds):
    random.shuffle(runs)
    for tool, q in runs:
        argv = cmds(q)[tool]
        a = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.setdefault(f"{tool}\t{q}", []).append(time.perf_counter() - a)
json.dump({"counts": counts,
           "median_ms": {k: statistics.median(v) * 1000 for k, v in times.items()},
           "min_ms": {k: min(v) * 1000 for k, v in times.items()}}, sys.stdout)
EOF
cut -d' ' -f1-3 /proc/loadavg >>"$WORK/load"

# The daemon's own time per request (`whole_us` in its debug log: the
# content match, the ordering and the snippets): each query 21 times in a
# row, the first left out.
whole_us() {
    cat "$FSINDEX_HOME"/logs/* "$WORK/fsindexd.stderr" 2>/dev/null |
        sed -n 's/.*content search answered.*whole_us=\([0-9]*\).*/\1/p'
}
for q in "$RARE" "$COMMON" "$PHRASE"; do
    fq="content:$q"
    [[ $q != *" "* ]] || fq="content:\"$q\""
    before=$(whole_us | wc -l)
    for ((i = 0; i < 21; i++)); do "$FSCTL" --json search --limit 0 "$fq" >/dev/null; done
    sleep 1
    whole_us | tail -n +$((before + 2)) | sort -n | awk -v q="$q" '{ a[NR] = $1 } END { printf "%s\t%.2f\t%d\n", q, a[int((NR + 1) / 2)] / 1000, NR }' >>"$WORK/daemon.tsv"
done

# ---------------------------------------------------------------- report
python3 - "$WORK" "$N_FILES" "$N_BYTES" "$RECOLL_S" "$FS_S" "$RARE" "$COMMON" "$PHRASE" "$QUIET" <<'EOF'
import json, sys
work, n_files, n_bytes, recoll_s, fs_s = sys.argv[1:6]
queries = sys.argv[6:9]
quiet = sys.argv[9]
q = json.load(open(f"{work}/queries.json"))
st = json.load(open(f"{work}/status.json"))["content"]
load = open(f"{work}/load").read().split("\n")
print("# Content search against Recoll and ripgrep\n")
print(f"`benches/content-vs-recoll.sh`, {int(n_files):,} files ({int(n_bytes) >> 20} MiB); "
      f"machine quiet: {quiet}; load before/after: {load[0]} / {load[1]}\n")
text = sum(f["text_bytes"] for f in st["folders"])
indexed = sum(f["indexed"] for f in st["folders"])
print("| initial extraction | wall |\n|---|---|")
print(f"| fsindexd (until every content file read; {indexed:,} files, {text >> 20} MiB of text) | {fs_s} s |")
print(f"| `recollindex -z` | {recoll_s} s |\n")
print("| query | fsctl | fsctl --json (snippets) | recollq | rg -l | fsctl / recollq | fsctl / rg | --json / rg | files: fsctl, recollq, rg |")
print("|---|---|---|---|---|---|---|---|---|")
m, c = q["median_ms"], q["counts"]
for w in queries:
    f, j, r, g = (m[f"{t}\t{w}"] for t in ("fsctl", "fsctl_json", "recollq", "rg"))
    n = [c[f"{t}\t{w}"] for t in ("fsctl", "recollq", "rg")]
    print(f"| `{w}` | {f:.1f} ms | {j:.1f} ms | {r:.1f} ms | {g:.1f} ms | {f / r:.2f} | {100 * f / g:.1f}% | "
          f"{100 * j / g:.1f}% | {n[0]:,}, {n[1]:,}, {n[2]:,} |")
print("\n| query | inside the daemon, p50 of `whole_us` | requests |\n|---|---|---|")
for line in open(f"{work}/daemon.tsv"):
    w, ms, k = line.rstrip("\n").split("\t")
    print(f"| `{w}` | {ms} ms | {k} |")
EOF
