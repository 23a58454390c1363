#!/bin/bash
# Adapted from ../shared/tools/xcheck.sh: the target folder defaults to
# target/xcheck (XC_TARGET_DIR, else $CARGO_TARGET_DIR/xcheck), so that
# Debian's rustc never shares fingerprints with the host toolchain's builds.
#
# Type-check a Rust workspace for another platform on Debian 12 x86_64 without rustup targets:
# `cargo check -Zbuild-std --target TRIPLE` with Debian's rustc-web + rust-web-src (same version, so
# std builds from source), unpacked into a prefix (nothing is installed system-wide).
# Windows (x86_64-pc-windows-gnu) also gets mingw-w64 for C code; macOS (aarch64-apple-darwin,
# x86_64-apple-darwin) gets `zig cc` from PyPI's ziglang for C code such as the bundled sqlite3.c.
# First use downloads ~1 GB and builds std (~1.5 min per target on one core).
#
#   .ci/xcheck.sh x86_64-pc-windows-gnu --workspace --all-targets
#   .ci/xcheck.sh x86_64-pc-windows-gnu,aarch64-apple-darwin --workspace --all-targets
#
# Only checks (no linking for macOS: that needs Apple's SDK). XC_PREFIX sets the cache folder.
set -euo pipefail
P=${XC_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/xcheck}
if [ ! -x "$P/root/usr/bin/cargo" ]; then
  mkdir -p "$P/debs" "$P/root" "$P/mingw"
  ( cd "$P/debs"
    [ -n "$(apt-cache policy rustc-web 2>/dev/null | grep Candidate)" ] || apt-get update -qq
    # the versioned library packages they need, resolved now (std's LLVM, cargo's libgit2 and its deps)
    std=$(apt-cache depends libstd-rust-web-dev | awk '/Depends: libstd-rust-web-[0-9]/{print $2}' | head -1)
    libs="$std $(apt-cache depends "$std" rustc-web | grep -o 'libllvm[0-9]*' | sort -u)"
    libs="$libs $(apt-cache depends --recurse cargo-web | awk '/^(libgit2-[0-9]|libhttp-parser[0-9]|libmbed)/{print $1}' | sort -u)"
    apt-get download rustc-web cargo-web libstd-rust-web-dev rust-web-src $libs \
      binutils-mingw-w64-x86-64 mingw-w64-x86-64-dev mingw-w64-common \
      gcc-mingw-w64-x86-64-win32 gcc-mingw-w64-x86-64-win32-runtime gcc-mingw-w64-base >/dev/null
    for f in *.deb; do case $f in *mingw*) dpkg -x "$f" "$P/mingw";; *) dpkg -x "$f" "$P/root";; esac; done )
  ln -sf x86_64-w64-mingw32-gcc-win32 "$P/mingw/usr/bin/x86_64-w64-mingw32-gcc"
fi
# One or more triples, comma-separated: one cargo run checks them all, so
# the host's build scripts and proc macros are built once, not per target.
TS=${1:?usage: xcheck.sh TRIPLE[,TRIPLE...] [cargo check args]}; shift
export LD_LIBRARY_PATH=$P/root/usr/lib/x86_64-linux-gnu:$P/root/usr/lib/rustlib/x86_64-unknown-linux-gnu/lib
export PATH=$P/root/usr/bin:$P/mingw/usr/bin:$PATH RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR=${XC_TARGET_DIR:-${CARGO_TARGET_DIR:-$PWD/target}/xcheck}
targets=()
for T in ${TS//,/ }; do
  targets+=(--target "$T")
  case $T in *apple-darwin)
    [ -x "$P/venv/bin/python" ] || { python3 -m venv "$P/venv"; "$P/venv/bin/pip" install -q ziglang; }
    Z=$("$P/venv/bin/python" -c 'import ziglang,os;print(os.path.join(os.path.dirname(ziglang.__file__),"zig"))')
    arch=${T%%-*}; mkdir -p "$P/zbin"
    printf '#!/usr/bin/env python3\nimport os,sys\nos.execv("%s",["%s","cc","-target","%s-macos"]+[a for a in sys.argv[1:] if not a.startswith("--target=")])\n' "$Z" "$Z" "$arch" > "$P/zbin/cc-$arch-macos"
    printf '#!/bin/sh\nexec %s ar "$@"\n' "$Z" > "$P/zbin/zar"; chmod +x "$P/zbin/"*
    v=${T//-/_}; export CC_$v="$P/zbin/cc-$arch-macos" AR_$v="$P/zbin/zar";;
  esac
done
# XC_CARGO=build links too (Windows only: macOS needs Apple's SDK), for
# tests/wine-smoke.sh.
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
exec cargo "${XC_CARGO:-check}" -Zbuild-std "${targets[@]}" "$@"
