#!/usr/bin/env bash
# `fsctl mcp` against the reference filesystem MCP server
# (@modelcontextprotocol/server-filesystem, run with Node) on one generated
# tree: the same MCP client (benches/mcp_client.py) times each tool call and
# counts the bytes of each answer (tokens ~ bytes / 4).
#
#   benches/mcp.sh > benches/RESULTS-mcp.md      # ENTRIES=100000 by default
#   ENTRIES=1000000 REPEAT=1 REF_TREE=0 benches/mcp.sh   # the 1M tree (the reference's calls take minutes)
#
# Environment: ENTRIES, WORK (scratch, default /tmp/fsbench-mcp), REPEAT
# (calls per tool, default 3), PATTERN (default report), NO_BUILD=1 to use
# the release binaries as they are. The tree (benches/mktree.py --seed 1) and
# the npm package are cached in WORK; nothing is written to the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=mcp
source benches/lib.sh

ENTRIES=${ENTRIES:-100000}
WORK=${WORK:-/tmp/fsbench-mcp}
REPEAT=${REPEAT:-3}
PATTERN=${PATTERN:-report}
TREE=${TREE:-$WORK/t$ENTRIES}
HOME_DIR=$WORK/home$ENTRIES
REF=$WORK/ref
mkdir -p "$WORK"

if [ "${NO_BUILD:-0}" != 1 ]; then
    log "building release fsctl and fsindexd"
    cargo build --release -q -p fsctl -p fsindexd
fi
FSCTL=$PWD/target/release/fsctl
FSINDEXD=$PWD/target/release/fsindexd

if [ ! -f "$TREE.done" ]; then
    log "making a tree of $ENTRIES entries in $TREE"
    rm -rf "$TREE"
    python3 benches/mktree.py --entries "$ENTRIES" --seed 1 --out "$TREE" >/dev/null
    touch "$TREE.done"
fi

if [ ! -f "$REF/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ]; then
    log "installing @modelcontextprotocol/server-filesystem into $REF"
    mkdir -p "$REF"
    npm install --silent --no-audit --no-fund --prefix "$REF" @modelcontextprotocol/server-filesystem >&2
fi
REF_JS=$REF/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
REF_VERSION=$(node -p "require('$REF/node_modules/@modelcontextprotocol/server-filesystem/package.json').version")

export FSINDEX_HOME=$HOME_DIR FSINDEX_NO_SPAWN=1
mkdir -p "$HOME_DIR"
"$FSINDEXD" --root "$TREE" --no-watch 2>"$WORK/fsindexd.log" &
DAEMON=$!
trap 'kill $DAEMON 2>/dev/null; wait $DAEMON 2>/dev/null' EXIT
for _ in $(seq 600); do "$FSCTL" status >/dev/null 2>&1 && break; sleep 0.1; done
"$FSCTL" scan --wait >/dev/null
log "index ready: $("$FSCTL" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"])') entries"

calls_fsctl=$WORK/calls-fsctl.json
calls_ref=$WORK/calls-ref.json
cat >"$calls_fsctl" <<EOF
[
 {"label": "find_files pattern *$PATTERN* (first page, limit 1000)", "name": "find_files", "arguments": {"pattern": "*$PATTERN*", "limit": 1000}},
 {"label": "find_files pattern *$PATTERN* (default page of 100)", "name": "find_files", "arguments": {"pattern": "*$PATTERN*"}},
 {"label": "search_files **/*$PATTERN* (first page of 1000)", "name": "search_files", "arguments": {"path": "$TREE", "pattern": "**/*$PATTERN*"}},
 {"label": "fs_map tokenBudget 1000", "name": "fs_map", "arguments": {"path": "$TREE", "tokenBudget": 1000}},
 {"label": "directory_tree maxDepth 3 (maxEntries 1000, the default)", "name": "directory_tree", "arguments": {"path": "$TREE", "maxDepth": 3}}
]
EOF
# REF_TREE=0 leaves out the reference's directory_tree (the whole tree as
# indented JSON: ~330 bytes per entry, too large to hold at 1M entries).
if [ "${REF_TREE:-1}" = 1 ]; then
    ref_tree=', {"label": "directory_tree (maxDepth is not a parameter: the whole tree)", "name": "directory_tree", "arguments": {"path": "'"$TREE"'", "maxDepth": 3}}'
else
    ref_tree=''
fi
cat >"$calls_ref" <<EOF
[
 {"label": "search_files **/*$PATTERN*", "name": "search_files", "arguments": {"path": "$TREE", "pattern": "**/*$PATTERN*"}}
 $ref_tree
]
EOF

QUIET_WAIT=${QUIET_WAIT:-300}
wait_quiet
log "timing fsctl mcp"
python3 benches/mcp_client.py --calls "$calls_fsctl" --repeat "$REPEAT" -- "$FSCTL" mcp >"$WORK/fsctl.jsonl"
log "timing the reference server $REF_VERSION"
python3 benches/mcp_client.py --calls "$calls_ref" --repeat "$REPEAT" -- node "$REF_JS" "$TREE" >"$WORK/ref.jsonl" 2>"$WORK/ref.log"

python3 - "$WORK/fsctl.jsonl" "$WORK/ref.jsonl" <<EOF
import json, sys
rows = []
for server, f in (("fsctl mcp", sys.argv[1]), ("reference $REF_VERSION", sys.argv[2])):
    for line in open(f):
        rows.append((server, json.loads(line)))
print("# fsctl mcp vs the reference filesystem MCP server")
print()
print("Tree: benches/mktree.py --entries $ENTRIES --seed 1 ($("$FSCTL" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"])') entries indexed).")
print("Machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; quiet: $QUIET.")
print("Each call $REPEAT times in one session (benches/mcp_client.py); release build; warm page cache.")
print()
print("| server | call | time per call (median; every run) | results | answer bytes (JSON-RPC line) | text bytes (~tokens) |")
print("|---|---|---|---|---|---|")
for server, r in rows:
    if "error" in r:
        print(f"| {server} | {r['label']} | {r['error']} | | | |")
        continue
    runs = ", ".join(f"{s*1000:.0f}" for s in r["seconds"])
    print(f"| {server} | {r['label']} | {r['median']*1000:,.1f} ms ({runs}) | {r['count'] if r['count'] is not None else ''} | {r['response_bytes']:,} | {r['text_bytes']:,} (~{r['text_bytes']//4:,}) |")
EOF
