#!/bin/bash
# PostgreSQL's own time for one host's bulk load, from SQL alone (no daemon):
# the host's rows dumped with COPY ... TO (FORMAT binary) into DIR (a folder
# the server may write), then loaded back as a new host, timed by the client:
#   one: schema 5's way: COPY into one bare table, then the names' trigram
#        GIN on one connection while the other copies the folders and builds
#        every other index (fsindex.load_index 'gin' / 'rest');
#   parts: schema 7's way: two parts cut at SPLIT (an entry id), each
#        COPY ... FREEZE in the transaction that made it; part 0 indexed on a
#        second connection while part 1 is copied; then part 1 and the folders
#        indexed side by side (fsindex.load_index_part).
# Both attached (fsindex.load_attach) and dropped again.
#
#   benches/fleet_load_sql.sh URL HOST DIR SPLIT
#
# SPLIT: the id that halves the host's name bytes, e.g.
#   SELECT min(id) FROM (SELECT id, sum(octet_length(name) + 2) OVER (ORDER BY id) c,
#     sum(octet_length(name) + 2) OVER () t FROM fsindex.items WHERE host = 'h1') s WHERE c >= t / 2
set -e
URL=$1; H=$2; DIR=$3; S=$4
P="psql -X -q -v ON_ERROR_STOP=1 $URL"
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
$P -c "COPY (SELECT * FROM fsindex.items WHERE host = '$H') TO '$DIR/items.copy' (FORMAT binary)"
$P -c "COPY (SELECT * FROM fsindex.folders WHERE host = '$H') TO '$DIR/folders.copy' (FORMAT binary)"
n=$($P -At -c "SELECT count(*) FROM fsindex.items WHERE host = '$H'")
# The copies are loaded as host 'sqlfloor' (their host column rewritten).
load() { # TABLE WHERE [FREEZE]
    $P -c "CREATE TEMP TABLE src (LIKE fsindex.items); COPY src FROM '$DIR/items.copy' (FORMAT binary);
           UPDATE src SET host = 'sqlfloor';
           COPY (SELECT * FROM src WHERE $2) TO '$DIR/$1.copy' (FORMAT binary)"
}
load part0 "id < $S"; load part1 "id >= $S"; load all "true"
$P -c "CREATE TEMP TABLE src (LIKE fsindex.folders); COPY src FROM '$DIR/folders.copy' (FORMAT binary);
       UPDATE src SET host = 'sqlfloor'; COPY src TO '$DIR/f.copy' (FORMAT binary)"
echo "host $H: $n items; load average $(cut -d' ' -f1-3 /proc/loadavg)"

t0=$(now)
k=$($P -At -c "SELECT fsindex.load_begin('sqlfloor')")
$P -c "COPY fsindex.items_$k FROM '$DIR/all.copy' (FORMAT binary)"
c=$(since $t0)
$P -c "SELECT fsindex.load_index($k, 'gin')" >/dev/null &
$P -c "COPY fsindex.folders_$k FROM '$DIR/f.copy' (FORMAT binary)" -c "SELECT fsindex.load_index($k, 'rest')" >/dev/null
wait
i=$(since $t0)
$P -c "BEGIN; SELECT fsindex.load_attach($k, -1, 0); COMMIT" >/dev/null
t=$(since $t0)
echo "one:   copy $c s, indexed at $i s, attached at $t s: $(echo "$n / $t" | bc) rows/s"

t0=$(now)
k=$($P -At -c "SELECT fsindex.load_begin('sqlfloor', ARRAY[$S]::bigint[])")
$P -c "BEGIN; SELECT fsindex.load_part($k, 0); COPY fsindex.items_${k}_0 FROM '$DIR/part0.copy' (FORMAT binary, FREEZE); COMMIT" >/dev/null
c0=$(since $t0)
$P -c "SELECT fsindex.load_index_part($k, 0)" >/dev/null &
$P -c "BEGIN; SELECT fsindex.load_part($k, 1); COPY fsindex.items_${k}_1 FROM '$DIR/part1.copy' (FORMAT binary, FREEZE); COMMIT" >/dev/null
c1=$(since $t0)
$P -c "COPY fsindex.folders_$k FROM '$DIR/f.copy' (FORMAT binary)" -c "SELECT fsindex.load_index_part($k, -1)" >/dev/null &
$P -c "SELECT fsindex.load_index_part($k, 1)" >/dev/null
wait
i=$(since $t0)
$P -c "BEGIN; SELECT fsindex.load_attach($k, -1, 0); COMMIT" >/dev/null
t=$(since $t0)
echo "parts: copy $c0 + $c1 s, indexed at $i s, attached at $t s: $(echo "$n / $t" | bc) rows/s"
# Gone again.
$P -c "BEGIN; ALTER TABLE fsindex.items DETACH PARTITION fsindex.items_$k; ALTER TABLE fsindex.folders DETACH PARTITION fsindex.folders_$k;
       DROP TABLE fsindex.items_$k, fsindex.folders_$k; DELETE FROM fsindex.loads WHERE host = 'sqlfloor';
       DELETE FROM fsindex.hosts WHERE host = 'sqlfloor'; COMMIT" >/dev/null
rm -f "$DIR"/{items,folders,part0,part1,all,f}.copy
