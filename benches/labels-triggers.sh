#!/usr/bin/env bash
# What migration 0007's triggers (labels_gone, labels_back) cost the writer:
# N entry rows inserted in one transaction, then deleted in one, into
# `entries` as migration 0001 makes it, without and with 0007 applied, in
# SQLite itself (the sqlite3 shell; the daemon's bundled SQLite runs the
# same statements). No label exists, as in an index nobody tagged: each
# insert pays one probe of labels_limbo, each delete two probes (tags,
# bookmarks). Best of RUNS.
#
#   N=1000000 RUNS=3 benches/labels-triggers.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
N=${N:-1000000}
RUNS=${RUNS:-3}
W=$(mktemp -d /tmp/fsindex-lt.XXXX)
trap 'rm -rf "$W"' EXIT
run() { # label, migrations...
  local label=$1; shift
  local best_i=999 best_d=999
  for _ in $(seq "$RUNS"); do
    rm -f "$W/db"*
    cat "$@" | sqlite3 "$W/db"
    local t0 t1 t2
    t0=$(date +%s.%N)
    sqlite3 "$W/db" "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
      BEGIN; WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i < $N)
      INSERT INTO entries (id, parent_id, name, kind, size, blocks, mtime_ns, dev, ino, nlink, mode)
      SELECT i, i / 64, CAST(i AS BLOB), 0, i, 8, i * 1000, 2049, i, 1, 420 FROM s; COMMIT;" >/dev/null
    t1=$(date +%s.%N)
    sqlite3 "$W/db" "PRAGMA synchronous=NORMAL; BEGIN; DELETE FROM entries; COMMIT;" >/dev/null
    t2=$(date +%s.%N)
    best_i=$(echo "if ($t1 - $t0 < $best_i) $t1 - $t0 else $best_i" | bc)
    best_d=$(echo "if ($t2 - $t1 < $best_d) $t2 - $t1 else $best_d" | bc)
  done
  printf '%-22s insert %.2f s, delete %.2f s (%s rows, best of %s)\n' "$label" "$best_i" "$best_d" "$N" "$RUNS"
}
M=$here/../migrations
others=$(ls "$M"/0*.sql | grep -v 0007_)
# shellcheck disable=SC2086
run "without 0007" $others
# shellcheck disable=SC2086
run "with 0007" $others "$M/0007_labels.sql"
