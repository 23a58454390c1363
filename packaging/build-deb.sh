#!/usr/bin/env bash
# Builds the Debian package target/debian/fsindex_VERSION-1_ARCH.deb:
# release binaries (fsctl linked statically, packaging/static-fsctl.sh), then man pages and shell completions generated from the
# binaries' own clap definitions (into target/release/packaging/), then
# `cargo deb --no-build` with the metadata in daemon/Cargo.toml.
# Needs cargo-deb (`cargo install cargo-deb`). Extra arguments go to cargo deb.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "build-deb.sh: $*" >&2; exit 1; }
command -v cargo-deb >/dev/null 2>&1 || die "cargo-deb is missing: cargo install cargo-deb"

cargo build --release --locked -p fsindexd -p fsctl -p fsgui -p fsindex-extract

target_dir=$(cargo metadata --format-version 1 --no-deps |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
[ -n "$target_dir" ] || die "cannot find the target directory"
bin="$target_dir/release"
out="$bin/packaging"
rm -rf "$out"
mkdir -p "$out/man" "$out/completions"
cp "$(packaging/static-fsctl.sh)" "$out/fsctl"

# fsctl generates these without a daemon; an isolated FSINDEX_HOME all the same.
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export FSINDEX_HOME="$home" FSINDEX_NO_SPAWN=1

"$bin/fsindexd" --generate-man "$out/man" >/dev/null
"$bin/fsctl" man --dir "$out/man" >/dev/null
gzip -9n "$out"/man/*.1
"$bin/fsctl" completions bash >"$out/completions/fsctl.bash"
"$bin/fsctl" completions zsh >"$out/completions/_fsctl"
"$bin/fsctl" completions fish >"$out/completions/fsctl.fish"

cargo deb -p fsindexd --no-build "$@"
