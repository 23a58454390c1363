#!/usr/bin/env bash
# Why labels leave and come back through the writer rather than triggers:
# N entry rows inserted in one transaction, then deleted in one, into
# `entries` as migration 0001 makes it, with migration 0007's tables, and
# then with the two triggers a first draft of 0007 had (labels_gone on
# delete, labels_back on insert, below), in SQLite itself (the sqlite3
# shell; the daemon's bundled SQLite runs the same statements). No label
# exists, as in an index nobody tagged. Best of RUNS.
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
cat > "$W/triggers.sql" <<'SQL'
CREATE TRIGGER labels_gone AFTER DELETE ON entries
WHEN EXISTS (SELECT 1 FROM tags WHERE entry_id = old.id)
  OR EXISTS (SELECT 1 FROM bookmarks WHERE entry_id = old.id)
BEGIN
    DELETE FROM tags WHERE entry_id = old.id;
    DELETE FROM bookmarks WHERE entry_id = old.id;
END;
CREATE TRIGGER labels_back AFTER INSERT ON entries
WHEN EXISTS (SELECT 1 FROM labels_limbo WHERE dev = new.dev AND ino = new.ino)
BEGIN
    DELETE FROM labels_limbo WHERE dev = new.dev AND ino = new.ino;
END;
SQL
run "0007 (no triggers)" "$M/0001_entries.sql" "$M/0007_labels.sql"
run "0007 + triggers" "$M/0001_entries.sql" "$M/0007_labels.sql" "$W/triggers.sql"
