#!/usr/bin/env bash
# Machine-wide mode (`fsindexd --system`): `fsctl du` as root against the same
# command as an unprivileged user (nobody), whose answer the daemon filters to
# what nobody could open, checked equal to GNU du run as nobody. Run as root.
#
#   benches/machine-wide-du.sh                  # 200k-entry tree made by mktree.py
#   TREE=/some/tree MAKE=0 benches/machine-wide-du.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
TREE=${TREE:-/tmp/fsbench/mw}
B=${B:-$here/../target/release}
[[ -n ${NO_BUILD:-} ]] || cargo build --release -q -p fsindexd -p fsctl --manifest-path "$here/../Cargo.toml"
if [[ ${MAKE:-1} == 1 && ! -d $TREE ]]; then
  python3 "$here/mktree.py" --entries "${ENTRIES:-200000}" --out "$TREE" >/dev/null
  # A few folders nobody may open, as on a shared machine: private homes,
  # group-only projects, search-only drop boxes.
  mapfile -t dirs < <(find "$TREE" -mindepth 2 -maxdepth 3 -type d | sort | awk 'NR % 97 == 0' | head -24)
  for i in "${!dirs[@]}"; do
    case $((i % 3)) in
      0) chmod 0700 "${dirs[$i]}"; chown 12345 "${dirs[$i]}" ;;
      1) chmod 0750 "${dirs[$i]}"; chown 12346 "${dirs[$i]}" ;;
      2) chmod 0711 "${dirs[$i]}" ;;
    esac
  done
fi
H=$(mktemp -d /tmp/fsindex-mw.XXXX); chmod 755 "$H"
export FSINDEX_NO_SPAWN=1
S=$H/fsindexd.sock
FSINDEX_HOME=$H "$B/fsindexd" --system --root "$TREE" --socket "$S" >/dev/null 2>&1 & P=$!
trap 'kill $P 2>/dev/null || true; wait $P 2>/dev/null || true; rm -rf "$H"' EXIT
until "$B/fsctl" --socket "$S" status --json 2>/dev/null | grep -q '"state":"ready"'; do sleep 0.1; done
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups -- "$@"; }
ours=$(as 65534 "$B/fsctl" --socket "$S" du "$TREE" --json | python3 -c 'import sys,json; d=json.load(sys.stdin); print(d["bytes"], d["apparent_bytes"])')
gnu="$(as 65534 du -s -B1 "$TREE" 2>/dev/null | cut -f1) $(as 65534 du -s -b "$TREE" 2>/dev/null | cut -f1)"
echo "nobody: fsctl du $ours, GNU du $gnu ($([[ $ours == "$gnu" ]] && echo equal || echo DIFFERENT))"
hyperfine -N --warmup 3 \
  -n root "setpriv --reuid=0 --regid=0 --clear-groups -- $B/fsctl --socket $S du $TREE --top 20" \
  -n nobody "setpriv --reuid=65534 --regid=65534 --clear-groups -- $B/fsctl --socket $S du $TREE --top 20"
