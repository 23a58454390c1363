//! Any program can use the index: the Python (grpcio) and Node
//! (@grpc/grpc-js) programs in `examples/`, run as a user would run them,
//! against a real daemon on a temp tree, over the Unix socket with the plain
//! `unix:PATH` target and over loopback TCP with the token. Their answers
//! are checked against `fsctl --json` and GNU du. Regression for
//! hyperium/h2#487: gRPC C-core sends the socket's path as `:authority`,
//! which h2 used to reset with PROTOCOL_ERROR.
//!
//! The language runtimes and packages come from tests/setup.sh; a
//! missing one fails these tests with what to install, never skips them.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::util::{Instance, Runner, free_port, gnu_du, json_lines, text};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

/// `python3` with the pinned gRPC packages, or a failure saying how to
/// install them.
fn python() -> Command {
    let probe = Command::new("python3")
        .args([
            "-c",
            "import grpc, grpc_tools, grpc_health.v1, grpc_reflection.v1alpha",
        ])
        .output();
    match probe {
        Ok(o) if o.status.success() => Command::new("python3"),
        other => panic!(
            "the Python example needs python3 and its packages: run tests/setup.sh \
             (python3 -m pip install -r examples/python/requirements.txt); got {other:?}"
        ),
    }
}

/// `node` with the example's pinned packages, or a failure saying how to
/// install them.
fn node() -> Command {
    let ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let modules = examples().join("node/node_modules/@grpc/grpc-js/package.json");
    assert!(
        ok && modules.is_file(),
        "the Node example needs node (20+) and its packages: run tests/setup.sh \
         (npm ci --prefix examples/node); node found: {ok}, {} present: {}",
        modules.display(),
        modules.is_file()
    );
    Command::new("node")
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Lang {
    Python,
    Node,
}

/// How an example reaches the daemon.
#[derive(Clone, Debug)]
enum Via {
    /// `unix:PATH`, nothing else.
    Socket(PathBuf),
    /// `127.0.0.1:PORT`, with the token file or without it.
    Tcp {
        addr: String,
        token: Option<PathBuf>,
    },
}

fn example(lang: Lang, via: &Via, args: &[&str]) -> Command {
    let mut cmd = match lang {
        Lang::Python => {
            let mut c = python();
            c.arg(examples().join("python/fsindex_example.py"));
            c
        }
        Lang::Node => {
            let mut c = node();
            c.arg(examples().join("node/fsindex.js"));
            c
        }
    };
    match via {
        Via::Socket(s) => {
            cmd.arg("--target").arg(format!("unix:{}", s.display()));
        }
        Via::Tcp { addr, token } => {
            cmd.arg("--target").arg(addr);
            if let Some(t) = token {
                cmd.arg("--token-file").arg(t);
            }
        }
    }
    cmd.args(args)
        .env_remove("FSINDEX_HOME")
        .env_remove("FSINDEX_TOKEN")
        .stdin(Stdio::null());
    cmd
}

fn run(lang: Lang, via: &Via, args: &[&str]) -> Output {
    let out = example(lang, via, args).output().expect("run the example");
    assert!(
        out.status.success(),
        "{lang:?} example {args:?} over {via:?} failed: {}",
        text(&out)
    );
    out
}

/// A small tree, and a daemon on it listening on its socket and on TCP.
struct Setup {
    _tmp: tempfile::TempDir,
    tree: PathBuf,
    inst: Instance,
    socket: Via,
    tcp: Via,
    tcp_without_token: Via,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    for (p, content) in [
        ("Invoices/2025/march.pdf", &b"invoice"[..]),
        ("Invoices/2025/april.pdf", &[3u8; 9000][..]),
        ("Invoices/notes.txt", b"not a pdf"),
        ("Photos/IMG_0001.jpg", &[1u8; 20000][..]),
        ("report final.pdf", b"spaces"),
        ("caf\u{e9}.pdf", b"accent"),
    ] {
        let path = tree.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    let port = free_port();
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.args = vec!["--listen".into(), format!("127.0.0.1:{port}")];
    inst.start();
    let addr = format!("127.0.0.1:{port}");
    Setup {
        socket: Via::Socket(inst.home.join("fsindexd.sock")),
        tcp: Via::Tcp {
            addr: addr.clone(),
            token: Some(inst.home.join("token")),
        },
        tcp_without_token: Via::Tcp { addr, token: None },
        _tmp: tmp,
        tree,
        inst,
    }
}

/// fsctl's search results as the examples print them (fsctl adds the
/// `sensitive` flag), in a stable order.
fn fsctl_search(inst: &Instance, query: &str) -> Vec<Value> {
    let out = inst.fsctl(&["search", query, "--json"]);
    assert!(out.status.success(), "fsctl search: {}", text(&out));
    let mut rows = json_lines(&out);
    for r in &mut rows {
        r.as_object_mut().unwrap().remove("sensitive");
    }
    sorted(rows)
}

fn sorted(mut rows: Vec<Value>) -> Vec<Value> {
    rows.sort_by_key(|r| r["path"].as_str().unwrap_or_default().to_owned());
    rows
}

/// Search with a filter: the example's results equal `fsctl search --json`.
fn check_search(s: &Setup, lang: Lang, via: &Via) {
    for query in ["ext:pdf", "invoices ext:pdf size:>1kb", "caf\u{e9}"] {
        let expected = fsctl_search(&s.inst, query);
        assert!(!expected.is_empty(), "{query}: the tree has matches");
        let got = sorted(json_lines(&run(lang, via, &["search", query])));
        assert_eq!(got, expected, "{lang:?} search {query:?} over {via:?}");
    }
}

/// du of a folder: the example's total equals GNU du and fsctl's figures.
fn check_du(s: &Setup, lang: Lang, via: &Via) {
    for dir in [s.tree.clone(), s.tree.join("Invoices")] {
        let dir_s = dir.to_str().unwrap();
        let got = &json_lines(&run(lang, via, &["du", dir_s]))[0];
        let (bytes, apparent) = gnu_du(&Runner::current(), &dir);
        assert_eq!(got["bytes"], bytes, "{lang:?} du {dir_s} = du -s -B1");
        assert_eq!(
            got["apparent_bytes"], apparent,
            "{lang:?} du {dir_s} = du -s -b"
        );
        let fsctl = s.inst.json(&["du", dir_s]);
        for k in ["path", "files", "dirs"] {
            assert_eq!(got[k], fsctl[k], "{lang:?} du {dir_s}: {k}");
        }
        let names = |v: &Value| -> Vec<String> {
            v["children"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["path"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(names(got), names(&fsctl), "{lang:?} du {dir_s}: children");
    }
}

/// A subscription: once the example says it is watching, a file the test
/// creates shows up as a `created` event.
fn check_watch(s: &Setup, lang: Lang, via: &Via, name: &str) {
    let mut child = example(lang, via, &["watch", s.tree.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel::<(bool, String)>();
    let (out, err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let tx2 = tx.clone();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send((true, l));
        }
    });
    std::thread::spawn(move || {
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx2.send((false, l));
        }
    });
    let next = |what: &str| {
        rx.recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("{lang:?} watch over {via:?}: no {what} in 30 s"))
    };
    let mut seen = Vec::new();
    loop {
        let (stdout, line) = next("'watching' line");
        if !stdout && line == "watching" {
            break;
        }
        seen.push(line);
    }
    let created = s.tree.join("Invoices").join(name);
    std::fs::write(&created, b"new").unwrap();
    let want = created.to_str().unwrap();
    loop {
        let (stdout, line) = next(&format!("created event for {want} (saw {seen:?})"));
        if stdout {
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["kind"] == "created" && v["path"] == want {
                assert_eq!(v["type"], "file");
                break;
            }
        }
        seen.push(line);
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn python_grpcio_over_the_socket_and_over_tcp_with_the_token() {
    let s = setup();
    for (i, via) in [&s.socket, &s.tcp].into_iter().enumerate() {
        let health = run(Lang::Python, via, &["health"]);
        assert_eq!(text(&health).trim(), "SERVING", "health over {via:?}");
        // grpc_reflection.v1alpha: the only version the Python package has.
        let services = text(&run(Lang::Python, via, &["services"]));
        let services: Vec<&str> = services.lines().collect();
        for want in [
            "fsindex.v1.Index",
            "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection",
        ] {
            assert!(services.contains(&want), "{want} in {services:?}");
        }
        check_search(&s, Lang::Python, via);
        check_du(&s, Lang::Python, via);
        check_watch(&s, Lang::Python, via, &format!("py-{i}.pdf"));
    }
}

#[test]
fn node_grpc_js_over_the_socket_and_over_tcp_with_the_token() {
    let s = setup();
    for (i, via) in [&s.socket, &s.tcp].into_iter().enumerate() {
        // Health through descriptors fetched by reflection (no .proto).
        let health = run(Lang::Node, via, &["health"]);
        assert_eq!(text(&health).trim(), "SERVING", "health over {via:?}");
        // grpc.reflection.v1 (the Python run above asks v1alpha).
        let services = text(&run(Lang::Node, via, &["services"]));
        let services: Vec<&str> = services.lines().collect();
        for want in [
            "fsindex.v1.Index",
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection",
        ] {
            assert!(services.contains(&want), "{want} in {services:?}");
        }
        check_search(&s, Lang::Node, via);
        check_du(&s, Lang::Node, via);
        check_watch(&s, Lang::Node, via, &format!("js-{i}.pdf"));
    }
}

#[test]
fn tcp_without_the_token_is_refused_to_both_clients() {
    let s = setup();
    let via = &s.tcp_without_token;
    for (lang, args) in [
        (Lang::Python, &["health"][..]),
        (Lang::Python, &["services"][..]),
        (Lang::Python, &["search", "ext:pdf"][..]),
        (Lang::Node, &["services"][..]),
        (Lang::Node, &["health"][..]),
        (Lang::Node, &["du", s.tree.to_str().unwrap()][..]),
    ] {
        let out = example(lang, via, args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{lang:?} {args:?}: {}",
            text(&out)
        );
        assert!(
            text(&out).contains("UNAUTHENTICATED") && out.stdout.is_empty(),
            "{lang:?} {args:?} without the token: {}",
            text(&out)
        );
    }
}

mod mismatch {
    //! A real tonic server, in this process, that answers Status with
    //! another protocol number (as a daemon of another release would) and
    //! every other RPC with UNIMPLEMENTED.

    use std::pin::Pin;

    use fsindex_proto::v1 as pb;
    use tonic::codegen::tokio_stream::Stream;
    use tonic::{Request, Response, Status};

    pub struct OtherRelease {
        pub version: &'static str,
        pub protocol: i32,
        pub pid: u32,
    }

    type Streamed<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

    fn no<T>() -> Result<T, Status> {
        Err(Status::unimplemented("another release"))
    }

    #[tonic::async_trait]
    impl pb::index_server::Index for OtherRelease {
        async fn status(
            &self,
            _: Request<pb::StatusRequest>,
        ) -> Result<Response<pb::StatusResponse>, Status> {
            Ok(Response::new(pb::StatusResponse {
                version: self.version.into(),
                protocol: self.protocol,
                pid: self.pid,
                ..Default::default()
            }))
        }
        type SearchStream = Streamed<pb::SearchResponse>;
        async fn search(
            &self,
            _: Request<pb::SearchRequest>,
        ) -> Result<Response<Self::SearchStream>, Status> {
            no()
        }
        async fn disk_usage(
            &self,
            _: Request<pb::DiskUsageRequest>,
        ) -> Result<Response<pb::DiskUsageResponse>, Status> {
            no()
        }
        type RescanStream = Streamed<pb::ScanProgress>;
        async fn rescan(
            &self,
            _: Request<pb::RescanRequest>,
        ) -> Result<Response<Self::RescanStream>, Status> {
            no()
        }
        async fn roots(
            &self,
            _: Request<pb::RootsRequest>,
        ) -> Result<Response<pb::RootsResponse>, Status> {
            no()
        }
        type VerifyStream = Streamed<pb::VerifyResponse>;
        async fn verify(
            &self,
            _: Request<pb::VerifyRequest>,
        ) -> Result<Response<Self::VerifyStream>, Status> {
            no()
        }
        type SubscribeStream = Streamed<pb::ChangeEvent>;
        async fn subscribe(
            &self,
            _: Request<pb::SubscribeRequest>,
        ) -> Result<Response<Self::SubscribeStream>, Status> {
            no()
        }
        async fn stat(
            &self,
            _: Request<pb::StatRequest>,
        ) -> Result<Response<pb::StatResponse>, Status> {
            no()
        }
        async fn list(
            &self,
            _: Request<pb::ListRequest>,
        ) -> Result<Response<pb::ListResponse>, Status> {
            no()
        }
        async fn tree(
            &self,
            _: Request<pb::TreeRequest>,
        ) -> Result<Response<pb::TreeResponse>, Status> {
            no()
        }
        type DuplicatesStream = Streamed<pb::DuplicatesResponse>;
        async fn duplicates(
            &self,
            _: Request<pb::DuplicatesRequest>,
        ) -> Result<Response<Self::DuplicatesStream>, Status> {
            no()
        }
        async fn fs_map(
            &self,
            _: Request<pb::FsMapRequest>,
        ) -> Result<Response<pb::FsMapResponse>, Status> {
            no()
        }
        async fn reload(
            &self,
            _: Request<pb::ReloadRequest>,
        ) -> Result<Response<pb::ReloadResponse>, Status> {
            no()
        }
        async fn read_text(
            &self,
            _: Request<pb::ReadTextRequest>,
        ) -> Result<Response<pb::ReadTextResponse>, Status> {
            no()
        }
        async fn tags(
            &self,
            _: Request<pb::TagsRequest>,
        ) -> Result<Response<pb::TagsResponse>, Status> {
            no()
        }
        async fn bookmarks(
            &self,
            _: Request<pb::BookmarksRequest>,
        ) -> Result<Response<pb::BookmarksResponse>, Status> {
            no()
        }
        async fn projects(
            &self,
            _: Request<pb::ProjectsRequest>,
        ) -> Result<Response<pb::ProjectsResponse>, Status> {
            no()
        }
        type ManifestStream = Streamed<pb::ManifestResponse>;
        async fn manifest(
            &self,
            _: Request<pb::ManifestRequest>,
        ) -> Result<Response<Self::ManifestStream>, Status> {
            no()
        }
        async fn saved_searches(
            &self,
            _: Request<pb::SavedSearchesRequest>,
        ) -> Result<Response<pb::SavedSearchesResponse>, Status> {
            no()
        }
        async fn history(
            &self,
            _: Request<pb::HistoryRequest>,
        ) -> Result<Response<pb::HistoryResponse>, Status> {
            no()
        }
    }

    /// Serves `release` on a unix socket at `path` from a thread of its own
    /// until the test process ends.
    pub fn serve(release: OtherRelease, path: &std::path::Path) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = rt
            .block_on(async { tokio::net::UnixListener::bind(path) })
            .unwrap();
        std::thread::spawn(move || {
            rt.block_on(async move {
                tonic::transport::Server::builder()
                    .add_service(pb::index_server::IndexServer::new(release))
                    .serve_with_incoming(tokio_stream::wrappers::UnixListenerStream::new(listener))
                    .await
                    .unwrap();
            })
        });
    }
}

#[test]
fn a_daemon_of_another_protocol_is_refused_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let fsctl = crate::util::bin_dir().join("fsctl");
    let ours = env!("CARGO_PKG_VERSION");
    // A newer daemon: fsctl refuses, and says which client to use.
    let newer = tmp.path().join("newer.sock");
    mismatch::serve(
        mismatch::OtherRelease {
            version: "9.0.0",
            protocol: 2,
            pid: 4242,
        },
        &newer,
    );
    // An older one (before the protocol number existed): fsctl refuses off a
    // terminal and says how to restart it (on a terminal it offers to).
    let older = tmp.path().join("older.sock");
    mismatch::serve(
        mismatch::OtherRelease {
            version: "0.0.9",
            protocol: 0,
            pid: 4242,
        },
        &older,
    );
    for (socket, line) in [
        (
            &newer,
            format!(
                "fsctl: fsindexd 9.0.0 (pid 4242) speaks protocol 2, this client ({ours}) speaks protocol 1: use a client of fsindexd 9.0.0's release\n"
            ),
        ),
        (
            &older,
            format!(
                "fsctl: fsindexd 0.0.9 (pid 4242) is older than this fsctl {ours} (protocol 0, fsctl speaks 1): restart it (kill 4242; fsctl then starts the new one), or run fsctl on a terminal to be offered that\n"
            ),
        ),
    ] {
        for args in [&["search", "x"][..], &["status"][..], &["du", "/"][..]] {
            let out = Command::new(&fsctl)
                .args(args)
                .arg("--socket")
                .arg(socket)
                .env("FSINDEX_NO_SPAWN", "1")
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "fsctl {args:?}: {}", text(&out));
            assert!(out.stdout.is_empty(), "nothing on stdout: {}", text(&out));
            assert_eq!(String::from_utf8_lossy(&out.stderr), line, "fsctl {args:?}");
        }
    }
    // The examples make the same handshake.
    let via = Via::Socket(newer);
    let expected = [
        (
            Lang::Python,
            "fsindex_example: fsindexd 9.0.0 (pid 4242) speaks protocol 2, this program speaks 1\n",
        ),
        (
            Lang::Node,
            "fsindex: fsindexd 9.0.0 (pid 4242) speaks protocol 2, this program speaks 1\n",
        ),
    ];
    for (lang, line) in expected {
        let out = example(lang, &via, &["search", "x"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{lang:?}: {}", text(&out));
        assert_eq!(String::from_utf8_lossy(&out.stderr), line, "{lang:?}");
    }
}

/// On a terminal, fsctl offers to restart a daemon older than itself: a
/// "n" leaves it running; a "y" stops it (SIGTERM, then waits for it to be
/// gone). The "daemon" here is a `sleep` whose pid the in-process server
/// reports, so the test can see it stopped; `script` gives fsctl a terminal.
#[test]
fn fsctl_offers_on_a_terminal_to_restart_an_older_daemon() {
    let has_script = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(has_script, "needs `script` (util-linux) for a terminal");
    let tmp = tempfile::tempdir().unwrap();
    let fsctl = crate::util::bin_dir().join("fsctl");
    // Not a child of the test (whose unreaped zombie would look alive): the
    // shell leaves it to init, like a daemon.
    let out = Command::new("sh")
        .args(["-c", "sleep 600 >/dev/null 2>&1 & echo $!"])
        .output()
        .unwrap();
    let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    // Alive: not gone, and not a zombie nobody reaped.
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    let socket = tmp.path().join("old.sock");
    mismatch::serve(
        mismatch::OtherRelease {
            version: "0.0.9",
            protocol: 0,
            pid,
        },
        &socket,
    );
    let on_terminal = |answer: &str| {
        let cmd = format!(
            "FSINDEX_NO_SPAWN=1 {} status --socket {}",
            fsctl.display(),
            socket.display()
        );
        let mut child = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(answer.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout).replace('\r', "")
    };
    let ours = env!("CARGO_PKG_VERSION");
    let offer = format!(
        "fsindexd 0.0.9 (pid {}) is older than this fsctl {ours} (protocol 0, fsctl speaks 1). Restart it now? [y/N] ",
        pid
    );
    let declined = on_terminal("n\n");
    assert!(declined.contains(&offer), "the offer: {declined:?}");
    assert!(declined.contains("not restarted"), "{declined:?}");
    assert!(alive(), "a no leaves the daemon running");
    let accepted = on_terminal("y\n");
    assert!(accepted.contains(&offer), "the offer: {accepted:?}");
    crate::util::eventually(
        Duration::from_secs(10),
        &format!("a yes stops the old daemon: {accepted:?}"),
        || !alive(),
    );
}

/// The `:authority` forms gRPC clients send on a unix socket (hyperium/h2#487):
/// the raw path (grpc-java, Bazel) and the percent-encoded one (gRPC C-core)
/// are answered; any other malformed authority is still reset, as h2 does.
/// Sent by grpcio with its authority option set to each form.
#[test]
fn socket_paths_as_authority_are_accepted_and_other_malformed_ones_are_not() {
    let s = setup();
    let Via::Socket(socket) = &s.socket else {
        unreachable!()
    };
    let path = socket.to_str().unwrap();
    let script = r#"
import sys, grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
ch = grpc.insecure_channel("unix:" + sys.argv[1], options=[("grpc.default_authority", sys.argv[2])])
try:
    r = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=10)
    print(health_pb2.HealthCheckResponse.ServingStatus.Name(r.status))
except grpc.RpcError as e:
    print(e.code().name)
"#;
    let encoded = path.replace('/', "%2F");
    for (authority, want) in [
        (path, "SERVING"),
        (encoded.as_str(), "SERVING"),
        (encoded.trim_start_matches("%2F"), "SERVING"),
        ("localhost", "SERVING"),
        ("bad host", "INTERNAL"),
        ("bad\"host", "INTERNAL"),
    ] {
        let out = python()
            .args(["-c", script, path, authority])
            .output()
            .unwrap();
        assert_eq!(text(&out).trim(), want, ":authority {authority:?}");
    }
}
