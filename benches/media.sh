#!/usr/bin/env bash
# Media metadata (issue 32): the daemon's first pass over a photo tree
# against `exiftool -r -json` on the same tree, in one run, and an unchanged
# restart.
#
#   benches/media.sh                 # 20,000 photos
#   N=2000 benches/media.sh
#   KIND=documents N=2000 benches/media.sh   # documents' pages, title, author
#
# The tree: one 1600x1200 JPEG made by ImageMagick and tagged by exiftool
# (make, model, date taken, GPS), copied N times into folders of 500 (the
# copies are real files; their content does not matter to header readers).
# KIND=documents: a 12-page PDF (reportlab) and a Word file (python-docx),
# each with a title and author, copied N/2 times each.
# Measured, with a release build (BIN, default target/release):
#   - exiftool: `exiftool -r -json -q TREE > /dev/null`, wall time;
#   - fsindexd: from the daemon's start until `status.media` has N rows,
#     nothing queued and the worker idle (the scan included), wall time,
#     and files/s;
#   - restart: the same daemon stopped and started again; wall time until
#     settled and `status.media.read` (files opened: 0 expected).
set -euo pipefail

N=${N:-20000}
BASE=${BASE:-/tmp/media-bench}
BIN=${BIN:-${CARGO_TARGET_DIR:-target}/release}
FSCTL=${FSCTL:-$BIN/fsctl}
TREE=$BASE/tree
HOME_DIR=$BASE/home

rm -rf "$BASE"
mkdir -p "$TREE"
if [ "${KIND:-photos}" = documents ]; then
  python3 - "$BASE" <<'PY'
import sys, docx
from reportlab.pdfgen import canvas
base = sys.argv[1]
c = canvas.Canvas(base + '/base.pdf'); c.setTitle('Quarterly Report'); c.setAuthor('Ada Lovelace')
for i in range(12):
    c.drawString(72, 720, 'page %d' % i); c.showPage()
c.save()
d = docx.Document(); d.add_paragraph('hello'); d.core_properties.title = 'Letter'; d.core_properties.author = 'Alan Turing'
d.save(base + '/base.docx')
PY
  files=("$BASE/base.pdf" "$BASE/base.docx")
else
  convert -size 1600x1200 gradient:'#336699-#ffcc00' "$BASE/base.jpg"
  exiftool -q -overwrite_original -Make=Canon '-Model=Canon EOS 80D' \
    '-DateTimeOriginal=2019:06:14 10:30:00' -GPSLatitude=48.8583 -GPSLatitudeRef=N \
    -GPSLongitude=2.2945 -GPSLongitudeRef=E "$BASE/base.jpg"
  files=("$BASE/base.jpg")
fi
for ((i = 0; i < N; i++)); do
  d=$TREE/d$((i / 500))
  [ -d "$d" ] || mkdir -p "$d"
  f=${files[$((i % ${#files[@]}))]}
  cp "$f" "$d/F_$i.${f##*.}"
done
sync
bytes=$(du -sb "$TREE" | cut -f1)

now() { date +%s.%N; }
settled() {
  FSINDEX_HOME=$HOME_DIR FSINDEX_NO_SPAWN=1 "$FSCTL" status --json 2>/dev/null |
    python3 -c "import json,sys; m=json.load(sys.stdin)['media']; sys.exit(0 if sum(m['rows'].values())==$N and m['queued']==0 and not m['busy'] else 1)" 2>/dev/null
}
# Starts the daemon (pid in $pid) and sets $took to the seconds until the
# media worker has settled.
run_daemon() {
  FSINDEX_HOME=$HOME_DIR "$BIN/fsindexd" --root "$TREE" >/dev/null 2>&1 &
  pid=$!
  local t0 deadline
  t0=$(now)
  deadline=$(($(date +%s) + 1800))
  until settled; do
    sleep 0.1
    if [ "$(date +%s)" -gt "$deadline" ]; then
      echo "media metadata did not settle in 30 min" >&2
      kill "$pid"
      exit 1
    fi
  done
  took=$(echo "$(now) - $t0" | bc -l)
}

# Page cache warm for both: one read of the tree first.
cat "$TREE"/*/* >/dev/null
t0=$(now)
exiftool -r -json -q "$TREE" >/dev/null
t1=$(now)
exif_s=$(echo "$t1 - $t0" | bc -l)

run_daemon
first_s=$took
kill "$pid"; wait "$pid" 2>/dev/null || true
run_daemon
restart_s=$took
read_again=$(FSINDEX_HOME=$HOME_DIR FSINDEX_NO_SPAWN=1 "$FSCTL" status --json |
  python3 -c "import json,sys; print(json.load(sys.stdin)['media']['read'])")
kill "$pid"; wait "$pid" 2>/dev/null || true

printf '| %s | tree bytes | exiftool -r -json | fsindexd first pass | ratio | files/s | restart | files read on restart |\n' "${KIND:-photos}"
printf '|---|---|---|---|---|---|---|---|\n'
printf '| %s | %s | %.2f s | %.2f s | %.2fx | %.0f | %.2f s | %s |\n' "$N" "$bytes" "$exif_s" "$first_s" \
  "$(echo "$first_s / $exif_s" | bc -l)" "$(echo "$N / $first_s" | bc -l)" "$restart_s" "$read_again"
[ -n "${KEEP:-}" ] || rm -rf "$BASE"
