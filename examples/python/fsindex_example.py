#!/usr/bin/env python3
"""A small fsindex client on the official gRPC packages (grpcio).

    pip install -r requirements.txt
    python3 fsindex_example.py search 'invoice ext:pdf'     # search with a filter
    python3 fsindex_example.py du ~/Documents              # disk usage of a folder
    python3 fsindex_example.py watch ~/Documents            # print changes as they happen
    python3 fsindex_example.py health                      # grpc.health.v1
    python3 fsindex_example.py services                    # reflection (v1alpha)

It reaches the daemon on its Unix socket with the plain `unix:PATH` target
(default: the instance's socket, as fsctl finds it), or over loopback TCP with
`--target 127.0.0.1:7700 --token-file PATH` (or FSINDEX_TOKEN). Results are
JSON lines with fsctl's `--json` field names.

The stubs are generated from the repository's proto/ at start (grpcio-tools),
into a temporary folder: nothing generated is kept. Without the .proto, server
reflection serves the same descriptors (see `services`).
"""

import argparse
import atexit
import datetime
import importlib
import json
import os
import shutil
import sys
import tempfile

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PROTO = os.path.join(HERE, "..", "..", "proto", "proto")

# The protocol this program speaks: Status.protocol of a daemon it can use.
PROTOCOL = 1

TYPES = {1: "file", 2: "dir", 3: "symlink", 4: "other"}
KINDS = {1: "subscribed", 2: "created", 3: "modified", 4: "deleted", 5: "renamed", 6: "missed"}


def stubs(proto_dir):
    """Generates the fsindex.v1 Python stubs from the .proto files."""
    from grpc_tools import protoc

    out = tempfile.mkdtemp(prefix="fsindex-stubs-")
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    args = [
        "protoc",
        f"-I{proto_dir}",
        f"-I{include}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        "fsindex/v1/fsindex.proto",
    ]
    if protoc.main(args) != 0:
        sys.exit(f"fsindex_example: could not compile the protos in {proto_dir}")
    sys.path.insert(0, out)
    return (
        importlib.import_module("fsindex.v1.fsindex_pb2"),
        importlib.import_module("fsindex.v1.fsindex_pb2_grpc"),
    )


def default_target():
    """The instance's socket, as fsctl finds it."""
    home = os.environ.get("FSINDEX_HOME")
    if home:
        return "unix:" + os.path.join(home, "fsindexd.sock")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return "unix:" + os.path.join(runtime, "fsindex", "fsindexd.sock")
    data = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return "unix:" + os.path.join(data, "fsindex", "fsindexd.sock")


def token(args):
    """Bearer token for a TCP daemon: --token-file, else FSINDEX_TOKEN (the
    token itself, or the path of a file holding it)."""
    if args.token_file:
        with open(args.token_file) as f:
            return f.read().strip()
    t = os.environ.get("FSINDEX_TOKEN", "")
    if os.path.isabs(t) and os.path.isfile(t):
        with open(t) as f:
            return f.read().strip()
    return t.strip() or None


def text(b):
    """Display form of a byte-exact path, as fsctl's (lossy UTF-8)."""
    return b.decode("utf-8", "replace")


def rfc3339(ns):
    """RFC 3339 in UTC with the nanoseconds fsctl prints."""
    secs, nanos = divmod(ns, 1_000_000_000)
    t = datetime.datetime.fromtimestamp(secs, datetime.timezone.utc)
    frac = f".{nanos:09d}".rstrip("0") if nanos else ""
    return t.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z"


def usage(u):
    return {
        "path": text(u.path),
        "type": TYPES.get(u.type, "unknown"),
        "bytes": u.bytes,
        "apparent_bytes": u.apparent_bytes,
        "files": u.files,
        "dirs": u.dirs,
        "incomplete": u.incomplete,
    }


def emit(obj):
    print(json.dumps(obj, ensure_ascii=False), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", default=default_target(),
                   help="unix:PATH or HOST:PORT (default: %(default)s)")
    p.add_argument("--token-file", help="the TCP daemon's token file")
    p.add_argument("--proto", default=os.environ.get("FSINDEX_PROTO", DEFAULT_PROTO),
                   help="folder holding fsindex/v1/fsindex.proto")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("health", help="grpc.health.v1 Check")
    sub.add_parser("services", help="services listed by server reflection (v1alpha)")
    s = sub.add_parser("search", help="search with the query language (filters too)")
    s.add_argument("query", nargs="+")
    s.add_argument("--limit", type=int, default=0)
    d = sub.add_parser("du", help="disk usage of a folder and its largest children")
    d.add_argument("path")
    d.add_argument("--top", type=int, default=20)
    w = sub.add_parser("watch", help="print changes under a folder as they happen")
    w.add_argument("path")
    w.add_argument("--count", type=int, default=0, help="stop after N changes (0: never)")
    args = p.parse_args()

    channel = grpc.insecure_channel(args.target)
    tok = token(args)
    md = [("authorization", f"Bearer {tok}")] if tok else None

    try:
        if args.command == "health":
            from grpc_health.v1 import health_pb2, health_pb2_grpc

            r = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service="fsindex.v1.Index"), metadata=md)
            print(health_pb2.HealthCheckResponse.ServingStatus.Name(r.status))
            return 0
        if args.command == "services":
            from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            req = reflection_pb2.ServerReflectionRequest(list_services="")
            for r in stub.ServerReflectionInfo(iter([req]), metadata=md):
                for svc in r.list_services_response.service:
                    print(svc.name)
            return 0

        pb, pb_grpc = stubs(args.proto)
        index = pb_grpc.IndexStub(channel)
        # The version handshake: refuse a daemon of another protocol.
        st = index.Status(pb.StatusRequest(), metadata=md)
        if st.protocol != PROTOCOL:
            print(f"fsindex_example: fsindexd {st.version} (pid {st.pid}) speaks protocol "
                  f"{st.protocol}, this program speaks {PROTOCOL}", file=sys.stderr)
            return 2

        if args.command == "search":
            req = pb.SearchRequest(query=" ".join(args.query), limit=args.limit)
            for chunk in index.Search(req, metadata=md):
                for e in chunk.entries:
                    emit({
                        "path": text(e.path),
                        "name": text(e.name),
                        "type": TYPES.get(e.type, "unknown"),
                        "size": e.size,
                        "mtime": rfc3339(e.mtime_ns),
                    })
        elif args.command == "du":
            path = os.path.abspath(args.path).encode()
            r = index.DiskUsage(pb.DiskUsageRequest(path=path, top=args.top), metadata=md)
            out = usage(r.total)
            out["children"] = [usage(c) for c in r.children]
            emit(out)
        elif args.command == "watch":
            path = os.path.abspath(args.path).encode()
            seen = 0
            for e in index.Subscribe(pb.SubscribeRequest(path=path), metadata=md):
                kind = KINDS.get(e.kind, "unknown")
                if kind == "subscribed":
                    print("watching", file=sys.stderr, flush=True)
                    continue
                ev = {"kind": kind}
                if kind == "missed":
                    ev["missed"] = e.missed
                else:
                    ev["path"] = text(e.path)
                    ev["type"] = TYPES.get(e.type, "unknown")
                    if e.from_path:
                        ev["from"] = text(e.from_path)
                emit(ev)
                seen += 1
                if args.count and seen >= args.count:
                    break
        return 0
    except grpc.RpcError as e:
        print(f"fsindex_example: {e.code().name}: {e.details()}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
