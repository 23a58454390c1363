#!/usr/bin/env bash
# Smoke test of `fsctl mcp` as any MCP client drives it: JSON-RPC lines on
# stdin (initialize, notifications/initialized, tools/list, tools/call),
# replies on stdout, nothing else on stdout.
#
#   FSCTL=target/debug/fsctl FSINDEX_HOME=DIR TREE=DIR tests/mcp-smoke.sh
#
# Needs a daemon already serving FSINDEX_HOME with TREE as a root, and a file
# named hello-smoke.txt in TREE. The e2e test `mcp::shell_smoke` sets that up.
set -euo pipefail

: "${FSCTL:?path of fsctl}" "${FSINDEX_HOME:?instance dir}" "${TREE:?a root of the daemon}"
export FSINDEX_HOME FSINDEX_NO_SPAWN=1
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

fail() {
    echo "mcp-smoke: FAIL: $*" >&2
    echo "--- stdout" >&2
    cat "$out" >&2
    echo "--- stderr" >&2
    cat "$err" >&2
    exit 1
}

# Keep stdin open until the last reply is in (or 30 s pass), as a client would.
{
    printf '%s\n' \
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"smoke","version":"0"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"find_files","arguments":{"query":"hello-smoke"}}}' \
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"../../../../../etc/passwd"}}}'
    for _ in $(seq 300); do
        grep -q '"id":4' "$out" 2>/dev/null && break
        sleep 0.1
    done
} | "$FSCTL" mcp >"$out" 2>"$err" || fail "fsctl mcp exited $?"

# Every line of stdout is a JSON-RPC message.
jq -e -s 'length >= 4 and all(.jsonrpc == "2.0")' "$out" >/dev/null || fail "stdout holds something other than JSON-RPC lines"
jq -e -s '.[] | select(.id == 1) | .result.serverInfo.name == "fsindex" and (.result.capabilities.tools != null)' "$out" >/dev/null \
    || fail "initialize: no server info or tools capability"
# Read-only but for the four that change the index's labels (never a file).
jq -e -s '.[] | select(.id == 2) | .result.tools | length == 24 and all(.annotations.openWorldHint == false and .outputSchema != null) and ([.[] | select(.annotations.readOnlyHint != true) | .name] | sort) == ["add_bookmark", "add_tags", "remove_bookmark", "remove_tags"]' "$out" >/dev/null \
    || fail "tools/list: expected 24 tools with output schemas, read-only but for the four label writers"
jq -e -s '.[] | select(.id == 2) | .result.tools | all(.title != null and ([.inputSchema.properties[] | (.type | type) == "string" and .format == null] | all))' "$out" >/dev/null \
    || fail "tools/list: every tool needs a title and plain parameter types (one type string, no format)"
want="$(realpath "$TREE")/hello-smoke.txt"
jq -e -s --arg want "$want" '.[] | select(.id == 3) | .result | (.isError != true) and .structuredContent.total == 1 and .structuredContent.results[0].path == $want and (.content[0].text | contains($want))' "$out" >/dev/null \
    || fail "find_files: expected exactly $want"
jq -e -s '.[] | select(.id == 4) | .result | (.isError == true) and (.content[0].text | test("^[^\n]+$"))' "$out" >/dev/null \
    || fail "read_text_file ../../etc/passwd: expected a one-line refusal"
echo "mcp-smoke: ok ($(wc -l <"$out") replies)"
