#!/usr/bin/env bash
# "3,120 photos 2015-2024" in du and map (issue 32): what counting the
# photos with a date taken costs `fsctl du` and `fsctl map`.
#
#   benches/photos-du.sh             # 20,000 photos
#   N=2000 BIN=/tmp/media-bin benches/photos-du.sh
#
# Two trees of N copies of a small JPEG, in folders of 500 under ten year
# folders: `dated/` (each copy tagged by exiftool with a date taken,
# 2015-2024 by year folder) and `plain/` (the same copies, no date), under
# one daemon. Once `status.media` has a row for every file, hyperfine times
# whole processes: `fsctl du` and `fsctl du --photos` of `dated/` (the
# difference is the photos pass), and `fsctl map` of each tree (the map
# always counts photos; on `plain/` its pass finds the same rows, all
# outside). Also the passes' SQL alone (du: `store::media::taken_by_folder`,
# a GROUP BY joined with entries; map: `taken_years`, one scan), through
# Python's sqlite3 on the index, medians of 20.
set -euo pipefail

N=${N:-20000}
BASE=${BASE:-/tmp/photos-du-bench}
BIN=${BIN:-${CARGO_TARGET_DIR:-target}/release}
FSCTL=$BIN/fsctl
HOME_DIR=$BASE/home

rm -rf "$BASE"
mkdir -p "$BASE/dated" "$BASE/plain" "$HOME_DIR"
convert -size 320x240 gradient:'#336699-#ffcc00' "$BASE/base.jpg"
for y in $(seq 2015 2024); do
  cp "$BASE/base.jpg" "$BASE/base-$y.jpg"
  exiftool -q -overwrite_original "-DateTimeOriginal=$y:06:14 10:30:00" "$BASE/base-$y.jpg"
done
for ((i = 0; i < N; i++)); do
  y=$((2015 + i % 10))
  for t in dated plain; do
    d=$BASE/$t/$y/d$((i / 5000))
    [ -d "$d" ] || mkdir -p "$d"
  done
  cp "$BASE/base-$y.jpg" "$BASE/dated/$y/d$((i / 5000))/IMG_$i.jpg"
  cp "$BASE/base.jpg" "$BASE/plain/$y/d$((i / 5000))/IMG_$i.jpg"
done

FSINDEX_HOME=$HOME_DIR "$BIN/fsindexd" --root "$BASE/dated" --root "$BASE/plain" >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
export FSINDEX_HOME=$HOME_DIR FSINDEX_NO_SPAWN=1
until "$FSCTL" status --json 2>/dev/null | python3 -c "import json,sys; m=json.load(sys.stdin)['media']; sys.exit(0 if sum(m['rows'].values())==2*$N and m['queued']==0 and not m['busy'] else 1)" 2>/dev/null; do
  sleep 0.5
done
"$FSCTL" du --photos "$BASE/dated" | head -1
hyperfine -N --warmup 3 --runs ${RUNS:-20} --export-markdown "$BASE/du.md" \
  "$FSCTL du $BASE/dated" "$FSCTL du --photos $BASE/dated" \
  "$FSCTL map $BASE/dated" "$FSCTL map $BASE/plain"
cat "$BASE/du.md"
db=$(find "$HOME_DIR" -name index.db | head -1)
python3 - "$db" <<'PY'
import sqlite3, sys, time
c = sqlite3.connect('file:%s?mode=ro' % sys.argv[1], uri=True)
q = """SELECT e.parent_id, COUNT(*), MIN(CAST(substr(m.taken, 1, 4) AS INTEGER)),
       MAX(CAST(substr(m.taken, 1, 4) AS INTEGER))
       FROM media m JOIN entries e ON e.id = m.entry_id
       WHERE m.status = 'ok' AND m.taken IS NOT NULL AND m.taken != ''
         AND e.parent_id IS NOT NULL GROUP BY e.parent_id"""
q2 = """SELECT entry_id, CAST(substr(taken, 1, 4) AS INTEGER) FROM media
        WHERE status = 'ok' AND taken IS NOT NULL AND taken != ''"""
for name, sql in [('taken_by_folder (du)', q), ('taken_years (map)', q2)]:
    runs = []
    for _ in range(20):
        t = time.perf_counter(); rows = c.execute(sql).fetchall(); runs.append(time.perf_counter() - t)
    runs.sort()
    print('%s: %d rows, median %.2f ms' % (name, len(rows), runs[len(runs) // 2] * 1000))
PY
kill "$pid"; wait "$pid" 2>/dev/null || true
[ -n "${KEEP:-}" ] || rm -rf "$BASE"
