#!/usr/bin/env bash
# fsctl organise: apply and undo of N moves of small files on one file
# system (renameat2), and of M files of SIZE_KB across file systems (to a
# tmpfs: copy, fsync, BLAKE3 read-back, delete; needs root for the mount).
# Wall time per run and per step, and what the journal takes.
#
#   N=10000 M=100 SIZE_KB=1024 benches/organise.sh
#
# FSCTL picks the binary (default: target/release/fsctl, else target/debug/fsctl).
# DIR is where the tree goes (default: a temp folder on the disk /tmp is on).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-10000}
M=${M:-100}
SIZE_KB=${SIZE_KB:-1024}
T=${CARGO_TARGET_DIR:-target}
FSCTL=${FSCTL:-$( [ -x "$T/release/fsctl" ] && echo "$T/release/fsctl" || echo "$T/debug/fsctl")}
DIR=${DIR:-$(mktemp -d /tmp/organise-bench.XXXX)}
export FSINDEX_HOME=$DIR/home FSINDEX_NO_SPAWN=1
mkdir -p "$DIR/tree" "$FSINDEX_HOME"
cleanup() { mountpoint -q "$DIR/tmpfs" 2>/dev/null && umount -l "$DIR/tmpfs"; rm -rf "$DIR"; }
trap cleanup EXIT

now() { date +%s.%N; }
run() { # label steps args...
  local label=$1 steps=$2; shift 2
  local t0 t1
  t0=$(now); "$FSCTL" organise "$@" --yes --json >/dev/null; t1=$(now)
  python3 -c "import sys; s=float(sys.argv[2])-float(sys.argv[1]); n=int(sys.argv[3]); print(f'| {sys.argv[4]} | {n} | {s:.2f} s | {s/n*1e3:.2f} ms |')" "$t0" "$t1" "$steps" "$label"
}

echo "fsctl: $FSCTL ($(stat -c %s "$FSCTL") bytes); tree on $(df -T "$DIR" | awk 'NR==2{print $2}'); $(nproc) cores"
# The floor each step stands on: an fsync of a small write on the same disk
# (a step commits its journal entry twice and syncs the folders it changed).
floor=$(python3 - "$DIR" <<'PY'
import os, sys, time, statistics
p = os.path.join(sys.argv[1], "fsync-probe")
fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o600)
ts = []
for i in range(200):
    os.write(fd, b"x" * 100)
    t = time.perf_counter(); os.fsync(fd); ts.append(time.perf_counter() - t)
os.close(fd); os.unlink(p)
print(f"{statistics.median(ts)*1e3:.2f} ms median, {sorted(ts)[189]*1e3:.2f} ms p95")
PY
)
echo "fsync of a 100-byte append on that disk: $floor; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| run | steps | wall | per step |"
echo "|---|---|---|---|"
python3 - "$DIR" "$N" <<'PY'
import json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
moves = []
for i in range(n):
    src = f"in/d{i % 100:02d}/f{i:06d}.txt"
    os.makedirs(os.path.join(d, "tree", os.path.dirname(src)), exist_ok=True)
    with open(os.path.join(d, "tree", src), "w") as f:
        f.write(f"file {i}\n")
    moves.append({"from": src, "to": f"out/{i % 37:02d}/f{i:06d}.txt"})
json.dump({"base": os.path.join(d, "tree"), "moves": moves}, open(os.path.join(d, "same.json"), "w"))
PY
# Steps: one per move, plus the 37 folders made on the way and out/ itself.
run "apply, one file system ($N renames)" $((N + 38)) apply "$DIR/same.json"
run "undo, one file system" $((N + 38)) undo
if mkdir -p "$DIR/tmpfs" && mount -t tmpfs -o size=$((M * SIZE_KB * 2 + 65536))k tmpfs "$DIR/tmpfs" 2>/dev/null; then
  python3 - "$DIR" "$M" "$SIZE_KB" <<'PY'
import json, os, sys
d, m, kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(os.path.join(d, "tree", "big"), exist_ok=True)
moves = []
for i in range(m):
    p = os.path.join(d, "tree", "big", f"b{i:04d}.bin")
    with open(p, "wb") as f:
        f.write(os.urandom(kb * 1024))
    moves.append({"from": p, "to": os.path.join(d, "tmpfs", f"b{i:04d}.bin")})
json.dump({"moves": moves}, open(os.path.join(d, "across.json"), "w"))
PY
  sync
  run "apply, disk to tmpfs ($M x $SIZE_KB KiB copies)" "$M" apply "$DIR/across.json"
  run "undo, tmpfs to disk" "$M" undo
else
  echo "| across file systems | skipped: cannot mount a tmpfs (run as root) | | |"
fi
echo
echo "journal: $(stat -c %s "$FSINDEX_HOME/organise.db") bytes for $(sqlite3 "$FSINDEX_HOME/organise.db" 'select count(*) from steps' 2>/dev/null || echo '?') steps"
