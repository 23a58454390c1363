#!/usr/bin/env bash
# Runs the Windows build of fsindexd and fsctl under Wine (Debian's wine64)
# on a small tree and checks what a user would see: fsctl starting the
# daemon detached, scan, search (plain and --json), du, info, ls, verify,
# dupes, map, and the notify watcher (ReadDirectoryChangesW under Wine)
# seeing a create, a rename and a delete through --sync.
#
# Not part of CI (Wine is not Windows; this is a smoke test). Needs the
# .ci/xcheck.sh toolchain; installs wine64 if missing.
#
#   tests/wine-smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v /usr/lib/wine/wine64 >/dev/null || apt-get install -y -qq wine64 >/dev/null
P=${XC_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/xcheck}
T=x86_64-pc-windows-gnu
XC_CARGO=build XC_TARGET_DIR=${XC_TARGET_DIR:-$PWD/target/xbuild} \
  .ci/xcheck.sh $T -p fsindexd -p fsctl --bins
W=$(mktemp -d)
trap 'WINEPREFIX=$W/prefix /usr/lib/wine/wineserver -k 2>/dev/null || true; rm -rf "$W"' EXIT
mkdir -p "$W/bin" "$W/home" "$W/tree/docs"
cp "${XC_TARGET_DIR:-$PWD/target/xbuild}/$T/debug/"{fsindexd,fsctl}.exe "$W/bin/"
# Wine 8 has no bcryptprimitives.dll, whose ProcessPrng Rust's std imports:
# a shim over RtlGenRandom.
cat > "$W/shim.c" <<'C'
#include <windows.h>
#include <ntsecapi.h>
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, n)) return FALSE;
        data += n; len -= n;
    }
    return TRUE;
}
C
"$P/mingw/usr/bin/x86_64-w64-mingw32-gcc" -shared -O2 -o "$W/bin/bcryptprimitives.dll" "$W/shim.c" -ladvapi32
echo hello > "$W/tree/docs/tax_2025.txt"
head -c 100000 /dev/urandom > "$W/tree/big.bin"
export WINEPREFIX=$W/prefix WINEDEBUG=-all FSINDEX_HOME="Z:${W//\//\\}\\home"
tree="Z:${W//\//\\}\\tree"
fails=0
# fsctl ARGS... : runs it (stdin closed, output kept in $out).
# (Through a file: Wine's own server processes would hold a pipe open.)
fsctl() {
  (cd "$W/bin" && timeout 120 /usr/lib/wine/wine64 ./fsctl.exe "$@" </dev/null >"$W/out" 2>&1) || true
  out=$(cat "$W/out")
}
expect() { # WHAT PATTERN
  if grep -qF -- "$2" <<<"$out"; then echo "ok    $1"; else echo "FAIL  $1: wanted '$2' in:"; sed 's/^/      /' <<<"$out"; fails=$((fails + 1)); fi
}
fsctl roots add "$tree"; expect "fsctl starts the daemon and adds a root" "$tree"
fsctl scan --wait; expect "scan --wait" "scanned"
fsctl search tax; expect "search prints Windows paths" "$tree\\docs\\tax_2025.txt"
fsctl search tax --json; expect "search --json" '"name":"tax_2025.txt"'
fsctl du "$tree"; expect "du totals" "3 files" ; expect "du names children" " big.bin"
fsctl info "$tree\\big.bin"; expect "info" "100,000 bytes"
fsctl ls "$tree\\docs"; expect "ls" "tax_2025.txt"
fsctl verify; expect "verify" "index matches the disk"
echo new > "$W/tree/docs/receipt_2025.txt"
fsctl search --sync receipt; expect "a new file, seen by the watcher" "docs\\receipt_2025.txt"
mv "$W/tree/docs/receipt_2025.txt" "$W/tree/receipt_moved.txt"
fsctl search --sync receipt; expect "a rename" "$tree\\receipt_moved.txt"
rm "$W/tree/receipt_moved.txt"
fsctl search --sync --count receipt; expect "a delete" "0"
cp "$W/tree/big.bin" "$W/tree/docs/big-copy.bin"
fsctl search --sync big-copy
fsctl dupes "$tree"; expect "dupes" "2 copies"
fsctl map "$tree"; expect "map" "big-copy.bin"
fsctl status; expect "status names the watcher" "by notify"
echo "$fails failed"
exit $((fails > 0))
