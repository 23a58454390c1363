#!/usr/bin/env bash
# What in a tree's shape costs: for each shape of benches/mkshape.py, the
# initial index and an unchanged restart (until `fsctl status` says ready,
# every folder watched) against `updatedb` and an `fdfind -HI` walk of the
# same tree, in one run, medians of RUNS. Prints a Markdown table.
#
#   ENTRIES=200000 RUNS=3 benches/shapes.sh [SHAPE...]    # trees under /tmp/fsbench/shapes
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ENTRIES=${ENTRIES:-200000}
RUNS=${RUNS:-3}
OUT=${OUT:-/tmp/fsbench/shapes}
B=${B:-$here/../target/release}
shapes=("$@")
[[ ${#shapes[@]} -gt 0 ]] || shapes=(node_modules git photos flat deep longnames)
for t in updatedb fdfind hyperfine python3; do command -v "$t" >/dev/null || { echo "$t not found" >&2; exit 2; }; done
[[ -n ${NO_BUILD:-} ]] || cargo build --release -q -p fsindexd -p fsctl --manifest-path "$here/../Cargo.toml"
mkdir -p "$OUT"
W=$(mktemp -d /tmp/fsindex-shapes.XXXX)
trap 'kill $P 2>/dev/null || true; rm -rf "$W"' EXIT
P=
median() { python3 -c 'import statistics,sys; print(round(statistics.median(float(x) for x in sys.argv[1:]) * 1000))' "$@"; }
hf_median() { python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["results"][0]["median"] * 1000))' "$1"; }
ready() { until "$B/fsctl" status --json 2>/dev/null | grep -q '"state":"ready"'; do sleep 0.02; done; }
echo "| shape | entries | folders | max depth | name bytes | updatedb | fsindexd initial | ratio | fdfind -HI | fsindexd restart | ratio | RSS idle |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for s in "${shapes[@]}"; do
  tree=$OUT/$s
  if [[ ! -d $tree ]]; then python3 "$here/mkshape.py" "$s" --entries "$ENTRIES" --out "$tree" >"$tree.facts"; fi
  read -r n dirs depth nameb <"$tree.facts"
  db=$W/plocate.db
  hyperfine -N --runs "$RUNS" --prepare "rm -f $db" --export-json "$W/u.json" \
    "updatedb -l 0 -U $tree -o $db --prunepaths= --prunenames= --prunefs= --prune-bind-mounts=no" >/dev/null 2>&1
  hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$W/f.json" "fdfind -HI --no-ignore . $tree" >/dev/null 2>&1
  init=() restart=()
  for _ in $(seq "$RUNS"); do
    H=$W/home; rm -rf "$H"; mkdir -p "$H"
    export FSINDEX_HOME=$H FSINDEX_NO_SPAWN=1
    for phase in init restart; do
      t0=$(date +%s.%N); "$B/fsindexd" --root "$tree" >/dev/null 2>&1 & P=$!; ready; t1=$(date +%s.%N)
      if [[ $phase == init ]]; then init+=("$(echo "$t1 - $t0" | bc)"); else restart+=("$(echo "$t1 - $t0" | bc)"); fi
      sleep 1.5
      rss=$("$B/fsctl" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["rss_bytes"] >> 20)')
      kill $P; wait $P || true; P=
    done
  done
  u=$(hf_median "$W/u.json"); f=$(hf_median "$W/f.json"); i=$(median "${init[@]}"); r=$(median "${restart[@]}")
  printf '| %s | %s | %s | %s | %s | %s ms | %s ms | %.2fx | %s ms | %s ms | %.2fx | %s MiB |\n' \
    "$s" "$n" "$dirs" "$depth" "$nameb" "$u" "$i" "$(echo "$i / $u" | bc -l)" "$f" "$r" "$(echo "$r / $f" | bc -l)" "$rss"
done
