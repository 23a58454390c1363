#!/usr/bin/env bash
# The floor of an exact, watched walk (benches/floor.c: per folder openat,
# inotify_add_watch, getdents64, close; per entry fstatat; nothing else)
# against fd -HI and updatedb on the same tree, rounds interleaved, medians.
# Prints a Markdown table. What the restart and initial-index targets of
# issue 16 are up against: a restart can be no faster than the floor, an
# initial index no faster than the floor plus writing the index.
#
#   TREE=/tmp/fsbench/t RUNS=5 benches/floor.sh
#
# With INDEX=path/to/index.db (an index of the same tree, e.g. the
# FSINDEX_HOME that benches/index-restart.sh kept), two more rows: the least
# SQLite work a first index takes (daemon/examples/store_floor.rs copies its
# rows into a fresh file, with the daemon's pragmas and indexes, or with no
# journal and the indexes built at the end).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
TREE=${TREE:-/tmp/fsbench/t}
RUNS=${RUNS:-5}
for t in cc fdfind updatedb python3; do command -v "$t" >/dev/null || { echo "$t not found" >&2; exit 2; }; done
[[ -d $TREE ]] || { echo "no tree at $TREE (python3 benches/mktree.py --entries 1000000 --out $TREE)" >&2; exit 2; }
W=$(mktemp -d /tmp/fsindex-floor.XXXX)
trap 'rm -rf "$W"' EXIT
cc -O2 -pthread -o "$W/floor" "$here/floor.c"
names=(fd updatedb nostat nowatch floor floor1)
if [[ -n ${INDEX:-} ]]; then
  [[ -f $INDEX ]] || { echo "INDEX=$INDEX is not a file" >&2; exit 2; }
  (cd "$here/.." && cargo build --release --example store_floor -q)
  sf=$(cd "$here/.." && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/examples/store_floor
  names+=(storewal storeoff)
fi
# name|command: wall and CPU (user+system) seconds of each run go to $W/<name>
run() {
  local name=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$W/t" "$@" >/dev/null 2>&1
  read -r e u s <"$W/t"
  echo "$e $(python3 -c "print($u + $s)")" >>"$W/r-$name"
}
for ((i = 0; i < RUNS; i++)); do
  run fd fdfind -HI . "$TREE"
  run updatedb updatedb -l 0 -o "$W/u.db" -U "$TREE"
  run nostat env THREADS=2 NOWATCH=1 NOSTAT=1 "$W/floor" "$TREE"
  run nowatch env THREADS=2 NOWATCH=1 "$W/floor" "$TREE"
  run floor env THREADS=2 "$W/floor" "$TREE"
  run floor1 env THREADS=1 "$W/floor" "$TREE"
  if [[ -n ${INDEX:-} ]]; then
    run storewal "$sf" "$INDEX" "$W/s.db" wal
    run storeoff "$sf" "$INDEX" "$W/s.db" off
  fi
done
med() { python3 -c 'import statistics,sys; v=[float(l.split()[int(sys.argv[2])]) for l in open(sys.argv[1])]; print(f"{statistics.median(v):.2f}")' "$1" "$2"; }
fd=$(med "$W/r-fd" 0)
echo "Tree: $TREE ($("$W/floor" "$TREE")), $RUNS runs each, medians"
echo
echo "| walk | wall s | CPU s | wall / fd -HI |"
echo "|---|---|---|---|"
label() { case $1 in
  fd) echo "fd -HI (names only, 2 threads)";;
  updatedb) echo "updatedb (one thread, folders stat'ed, writes its database)";;
  nostat) echo "floor, 2 threads, no fstatat, no watch (fd's system calls)";;
  nowatch) echo "floor, 2 threads, fstatat per entry, no watch";;
  floor) echo "floor, 2 threads, fstatat per entry and a watch per folder (exact and watched)";;
  floor1) echo "the same on 1 thread";;
  storewal) echo "SQLite alone: the index's rows copied into a fresh file (WAL, indexes in place, 50k rows per commit)";;
  storeoff) echo "SQLite alone: the same with no journal, one commit, indexes built at the end";;
esac; }
for n in "${names[@]}"; do
  w=$(med "$W/r-$n" 0); c=$(med "$W/r-$n" 1)
  echo "| $(label "$n") | $w | $c | $(python3 -c "print(f'{$w / $fd:.2f}x')") |"
done
