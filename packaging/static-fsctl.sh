#!/usr/bin/env bash
# Builds fsctl linked statically against glibc (Linux only) and prints the
# binary's path. This is the fsctl the Debian package ships and the search
# benchmark times beside the dynamic one.
#
#   packaging/static-fsctl.sh            # -> target/static/x86_64-unknown-linux-gnu/release/fsctl
#   STATIC_PROFILE=ci-static packaging/static-fsctl.sh   # CI's: unoptimised, quick to build
#
# Why: fsctl is started once per query, and a dynamic fsctl spends about
# 0.3 ms of each start loading libc, libm and libgcc_s and binding their
# symbols. The static one starts in 0.8 ms where the dynamic one takes
# 1.1 ms (`fsctl --version`), and a search that matches nothing takes
# 1.4 ms where it took 1.7 ms. See benches/README.md.
#
# How: `-C target-feature=+crt-static`, for the host triple named
# explicitly so that proc-macros and build scripts stay dynamic. It builds in
# its own target folder (target/static), because these flags change every
# crate. GNU ld links it: rust-lld left the interpreter in a static
# executable, which then crashed at start.
#
# What a static glibc costs: looking up a host name (`--endpoint
# http://localhost:PORT`) and a user with no HOME load glibc's NSS modules at
# run time, which must be of the glibc version fsctl was built with. The
# Debian package is built on the release it targets, so they are.
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "static-fsctl.sh: $*" >&2; exit 1; }

triple=$(rustc -vV | sed -n 's/^host: //p')
case $triple in
*-linux-gnu) ;;
*) die "only for Linux with glibc; this host is $triple" ;;
esac
target_dir=$(cargo metadata --format-version 1 --no-deps |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
[ -n "$target_dir" ] || die "cannot find the target directory"
out=$target_dir/static
profile=${STATIC_PROFILE:-release}

CARGO_TARGET_DIR=$out RUSTFLAGS="-C target-feature=+crt-static -C link-arg=-fuse-ld=bfd" \
  cargo build --profile "$profile" --locked -p fsctl --bin fsctl --target "$triple" "$@" >&2

bin=$out/$triple/$profile/fsctl
# Static means no dynamic section and no interpreter, and it must run.
if readelf -lW "$bin" | grep -q INTERP || readelf -dW "$bin" | grep -q NEEDED; then
  die "$bin is not static"
fi
"$bin" --version >/dev/null || die "$bin does not run"
echo "$bin"
