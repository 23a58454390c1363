#!/usr/bin/env bash
# The real fsgui window under Xvfb with Mesa's software OpenGL (llvmpipe):
# starts a daemon on a small temp tree, opens the window, types a query
# and Enter with xdotool, saves a screenshot of the screen, then checks
# that the keys reached the window (Enter puts the query in the daemon's
# history, which `fsctl history` lists). Also runs `fsgui --query Q --screenshot FILE` and checks the PNG.
#
#   client/fsgui/xvfb-smoke.sh OUTDIR
#
# Needs: Xvfb, xdotool, ImageMagick's `import`, Mesa (Debian: xvfb xauth
# libgl1-mesa-dri libgl1 libegl1 xdotool imagemagick libxkbcommon-x11-0
# libxcursor1 libxrandr2 libxi6). Binaries from FSINDEX_BIN_DIR, default
# target/debug (build them with `cargo build -p fsgui -p fsindexd -p fsctl`).
set -euo pipefail

out=${1:?usage: xvfb-smoke.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${FSINDEX_BIN_DIR:-$here/target/debug}
for b in fsgui fsindexd fsctl; do
  [ -x "$bin/$b" ] || { echo "xvfb-smoke: $bin/$b is missing" >&2; exit 2; }
done
for t in Xvfb xdotool import; do
  command -v "$t" >/dev/null || { echo "xvfb-smoke: $t is not installed" >&2; exit 2; }
done

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# A small tree and its daemon.
tree=$work/tree
mkdir -p "$tree/Reports/2025" "$tree/Taxes/2025" "$tree/photos"
echo q1 >"$tree/Reports/2025/report-q1.pdf"
echo q2 >"$tree/Reports/2025/report-q2.pdf"
echo annual >"$tree/Reports/annual report.odt"
echo wages >"$tree/Taxes/2025/w2.pdf"
head -c 5000 /dev/zero >"$tree/photos/IMG_0001.jpg"
export FSINDEX_HOME=$work/home
mkdir -p "$FSINDEX_HOME"
"$bin/fsindexd" --root "$tree" 2>"$work/daemon.log" &
pids+=($!)
for _ in $(seq 600); do
  if FSINDEX_NO_SPAWN=1 "$bin/fsctl" status --json 2>/dev/null | grep -q '"state":"ready"'; then
    break
  fi
  sleep 0.1
done
FSINDEX_NO_SPAWN=1 "$bin/fsctl" status --json | grep -q '"state":"ready"' || {
  echo "xvfb-smoke: the daemon did not get ready" >&2; cat "$work/daemon.log" >&2; exit 1; }

# A display of our own (-displayfd picks a free number).
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$work/display" 2>"$work/xvfb.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.1; done
export DISPLAY=:$(head -n1 "$work/display")
export LIBGL_ALWAYS_SOFTWARE=1
unset WAYLAND_DISPLAY

# 1. The real window, typed into with xdotool.
FSINDEX_NO_SPAWN=1 "$bin/fsgui" --size 1000x650 2>"$work/fsgui.log" &
gui=$!
pids+=($gui)
win=$(timeout 60 xdotool search --sync --onlyvisible --name '^fsgui$' | head -n1) || {
  echo "xvfb-smoke: no fsgui window appeared" >&2; cat "$work/fsgui.log" >&2; exit 1; }
xdotool windowfocus --sync "$win" 2>/dev/null || true
sleep 1
xdotool type --delay 40 "report"
sleep 2
xdotool key Return
sleep 1
import -window root "$out/typed.png"
kill "$gui" 2>/dev/null || true
wait "$gui" 2>/dev/null || true
FSINDEX_NO_SPAWN=1 "$bin/fsctl" history --json | grep -q '"query":"report"' || {
  echo "xvfb-smoke: the typed query did not reach the window (no history entry)" >&2
  cat "$work/fsgui.log" >&2; exit 1; }

# 2. The screenshot mode.
FSINDEX_NO_SPAWN=1 timeout 120 "$bin/fsgui" --size 1000x650 --query report \
  --screenshot "$out/screenshot.png" 2>>"$work/fsgui.log" || {
  echo "xvfb-smoke: fsgui --screenshot failed" >&2; cat "$work/fsgui.log" >&2; exit 1; }
[ -s "$out/screenshot.png" ] || { echo "xvfb-smoke: no screenshot" >&2; exit 1; }

echo "xvfb-smoke: ok: $out/typed.png $out/screenshot.png"
