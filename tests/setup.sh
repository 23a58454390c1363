#!/usr/bin/env bash
# Installs what the test suite runs besides cargo: GNU du/find and friends as
# oracles, the real programs of the workloads tests, jq for the MCP smoke
# test, Xvfb and fonts for fsgui's window tests, cargo-nextest, the pinned
# Python and Node gRPC packages of the client tests, and the official MCP
# clients (Inspector CLI, Python SDK).
# Idempotent and quick when everything is there; the README's test command
# and .ci/run both start with it.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
# Oracles and helpers: GNU du/find (coreutils, findutils), setpriv
# (util-linux) to drop root so permission bits apply.
for tool in du find setpriv mkfifo truncate fallocate; do
  command -v "$tool" >/dev/null 2>&1 || need_apt+=(coreutils findutils util-linux)
done
# Real programs the workloads tests run in a watched root; jq reads the MCP
# smoke test's replies.
for tool in git rsync tar sed jq python3 node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    case $tool in
      python3) need_apt+=(python3 python3-pip) ;;
      node | npm) need_apt+=(nodejs npm) ;;
      *) need_apt+=("$tool") ;;
    esac
  fi
done
# fsgui's window tests (client/fsgui/tests/window): Xvfb with Mesa's software
# OpenGL, xdotool and ImageMagick for the real window, and small system fonts
# for the names in every script it draws: CJK (fonts-wqy-microhei, 5 MB,
# rather than fonts-noto-cjk's 90), Arabic and Hebrew (DejaVu), Devanagari
# (Lohit), Thai (Loma), colour emoji (Noto).
for pkg in xvfb xauth libgl1-mesa-dri libgl1 libegl1 xdotool imagemagick \
  libxkbcommon-x11-0 libxcursor1 libxrandr2 libxi6 fontconfig \
  fonts-wqy-microhei fonts-dejavu-core fonts-lohit-deva fonts-tlwg-loma-otf fonts-noto-color-emoji; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
# Media metadata oracles (tests/tests/e2e/media.rs): ImageMagick makes the
# photos, exiftool tags them and reads them back.
command -v convert >/dev/null 2>&1 || need_apt+=(imagemagick)
command -v exiftool >/dev/null 2>&1 || need_apt+=(libimage-exiftool-perl)
# Archives (tests/tests/e2e/archives.rs): zstd compresses a tar, Info-ZIP's
# zip writes a password-protected member.
command -v zstd >/dev/null 2>&1 || need_apt+=(zstd)
command -v zip >/dev/null 2>&1 || need_apt+=(zip)
# 7z archives (the same test): the 7z CLI writes solid, encrypted and bomb archives.
command -v 7z >/dev/null 2>&1 || need_apt+=(p7zip-full)
# Tags other programs write (tests/tests/e2e/labels.rs): setfattr and
# getfattr write and read user.xdg.tags as KDE Dolphin does.
command -v setfattr >/dev/null 2>&1 || need_apt+=(attr)
# The fleet tests run a real PostgreSQL (initdb + pg_ctl in temp folders):
# Debian's server package (15 on Debian 12), pg_trgm included.
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || need_apt+=(postgresql)
# The fleet over TLS (tests/tests/e2e/fleet_tls.rs): the openssl command
# issues the test's CA and server certificate; the daemon and fsctl link
# the system's libssl (native-tls), built against libssl-dev.
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
dpkg -s libssl-dev >/dev/null 2>&1 || need_apt+=(libssl-dev pkg-config)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(printf '%s\n' "${need_apt[@]}" | sort -u)
fi
command -v cargo-nextest >/dev/null 2>&1 || cargo install cargo-nextest --locked

# The gRPC clients the e2e tests run (tests/tests/e2e/clients.rs): Python's
# and Node's official packages at pinned versions. node_modules stays in
# examples/node (gitignored).
if ! python3 -c 'import grpc, grpc_tools, grpc_health.v1, grpc_reflection.v1alpha' 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    -r examples/python/requirements.txt
fi
if [ ! -f examples/node/node_modules/@grpc/grpc-js/package.json ]; then
  npm ci --prefix examples/node --no-audit --no-fund --loglevel=error
fi

# Document writers for the tests of reading what files say
# (tests/tests/e2e/read_text.rs, tests/make_documents.py): python-docx,
# odfpy and reportlab, pinned in tests/requirements-documents.txt; and
# python-pptx for the documents' properties test (tests/tests/e2e/media_documents.rs);
# extract-msg reads back the Outlook messages tests/tests/e2e/outlook.rs writes.
if ! python3 -c 'import docx, odf.opendocument, reportlab, pptx, extract_msg' 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    -r tests/requirements-documents.txt
fi

# The content stemming test's oracle (tests/stem_oracle.py): the Snowball
# stemmers in Python. 2.2.0: the Snowball release whose algorithms
# rust-stemmers implements (3.x rewrote the Dutch stemmer and changed the
# German, French and English ones).
if [ "$(python3 -c 'import importlib.metadata as m; print(m.version("snowballstemmer"))' 2>/dev/null)" != 2.2.0 ]; then
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore 'snowballstemmer==2.2.0'
fi

# mutagen tags the media test's songs and reads them back.
if ! python3 -c 'import mutagen' 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore 'mutagen==1.48.1'
fi

# The official MCP clients the e2e tests drive `fsctl mcp` with
# (tests/tests/e2e/mcp_clients.rs): the Inspector CLI (Node; 0.15.0, the
# last release whose engines admit Node 20) into tests/mcp-clients
# (node_modules gitignored), and the Python SDK `mcp`, both pinned there.
inspector_want=$(node -p "require('./tests/mcp-clients/package.json').dependencies['@modelcontextprotocol/inspector']")
inspector_have=$(node -p "require('./tests/mcp-clients/node_modules/@modelcontextprotocol/inspector/package.json').version" 2>/dev/null || true)
if [ "$inspector_have" != "$inspector_want" ]; then
  npm ci --prefix tests/mcp-clients --no-audit --no-fund --loglevel=error
fi
mcp_want=$(sed -n 's/^mcp==//p' tests/mcp-clients/requirements.txt)
if [ "$(python3 -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null)" != "$mcp_want" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    -r tests/mcp-clients/requirements.txt
fi
