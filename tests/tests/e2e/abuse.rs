//! Resources stay bounded when a client misbehaves: a reader that never
//! reads holds a bounded buffer, never the index, and is cut off.

use std::time::{Duration, Instant};

use fsindex_proto::v1 as pb;
use tonic::Code;

use crate::util::{Instance, Runner, eventually};

/// Search once queued its whole answer for a client that never read it
/// (the answer to `*` at 1M entries is hundreds of MB). Now at most a few
/// MB wait for the client, the search lets go of the index while it waits
/// (the index keeps changing), and after `--slow-reader-secs` the stream
/// ends with RESOURCE_EXHAUSTED.
#[test]
fn a_search_reader_that_never_reads_is_cut_off_and_holds_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    // About 14 MB of answer: far more than the client's HTTP/2 window and
    // the daemon's buffer together.
    for d in 0..30 {
        let dir = tree.join(format!("d{d:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..1000 {
            std::fs::write(dir.join(format!("{f:04}-{}", "n".repeat(200))), b"").unwrap();
        }
    }
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.args = vec!["--slow-reader-secs".into(), "2".into()];
    inst.start();
    let pid = inst.status()["pid"].clone();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let socket = inst.home.join("fsindexd.sock");
    let mut stream = rt.block_on(async {
        let mut c = fsindex_client::connect(&fsindex_client::Target::Socket(socket))
            .await
            .unwrap();
        c.search(pb::SearchRequest {
            query: "*".into(),
            ..Default::default()
        })
        .await
        .expect("search")
        .into_inner()
    });
    let first = rt.block_on(stream.message()).unwrap().unwrap();
    let total = first.total;
    assert!(total > 30_000, "{total}");
    let mut got = first.entries.len() as u64;

    // The client reads nothing now. The index is not held meanwhile: a
    // change is applied and found.
    std::fs::write(tree.join("made-while-stalled.txt"), b"x").unwrap();
    let o = inst.fsctl(&["search", "--sync", "made-while-stalled"]);
    assert_eq!(o.status.code(), Some(0), "{}", crate::util::text(&o));

    // Past the daemon's patience the reader takes what was in flight, then
    // the status that says why the answer stopped.
    eventually(
        Duration::from_secs(60),
        "the daemon cuts the reader off",
        || {
            inst.log()
                .contains("cut off a stream whose client stopped reading")
        },
    );
    let started = Instant::now();
    let end = loop {
        match rt.block_on(stream.message()) {
            Ok(Some(m)) => got += m.entries.len() as u64,
            Ok(None) => panic!("the whole answer came: {got} of {total}"),
            Err(s) => break s,
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no end");
    };
    assert_eq!(end.code(), Code::ResourceExhausted, "{end:?}");
    assert!(
        end.message().contains("the client stopped reading"),
        "{end:?}"
    );
    assert!(got < total, "{got} of {total}");
    eprintln!("received {got} of {total} results before the cut");

    // The daemon answers a full search afterwards.
    let o = inst.fsctl(&["search", "--limit", "1", "-0", "0999"]);
    assert_eq!(o.status.code(), Some(0), "{}", crate::util::text(&o));
    assert_eq!(inst.status()["pid"], pid);
    inst.stop();
}

/// A reader slower than the daemon, while the index changes: the search
/// lets go of the index while the reader catches up, and the rest of the
/// answer is the same query ordered again from where it was (as the next
/// page with an offset would be): here, by name, with a change that sorts
/// last, every result exactly once, and the new one too.
#[test]
fn a_slow_reader_gets_the_rest_of_the_answer_as_the_index_now_is() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    for d in 0..30 {
        let dir = tree.join(format!("d{d:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..1000 {
            std::fs::write(dir.join(format!("{f:04}-{}", "n".repeat(200))), b"").unwrap();
        }
    }
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let socket = inst.home.join("fsindexd.sock");
    let mut stream = rt.block_on(async {
        let mut c = fsindex_client::connect(&fsindex_client::Target::Socket(socket))
            .await
            .unwrap();
        c.search(pb::SearchRequest {
            query: "*".into(),
            sort: pb::SortOrder::Name as i32,
            ..Default::default()
        })
        .await
        .expect("search")
        .into_inner()
    });
    let first = rt.block_on(stream.message()).unwrap().unwrap();
    let total = first.total;
    let mut names: Vec<Vec<u8>> = first.entries.into_iter().map(|e| e.path).collect();
    // Let the daemon fill its buffer and wait, then change the index.
    eventually(Duration::from_secs(30), "a stalled search", || {
        std::fs::write(tree.join("zzzz-made-meanwhile"), b"x").unwrap();
        let o = inst.fsctl(&["search", "--sync", "zzzz-made-meanwhile"]);
        o.status.code() == Some(0)
    });
    let mut last_total = total;
    while let Some(m) = rt.block_on(stream.message()).expect("the whole answer") {
        last_total = m.total;
        names.extend(m.entries.into_iter().map(|e| e.path));
    }
    assert_eq!(last_total, total + 1, "the rest was ordered again");
    let unique: std::collections::BTreeSet<&Vec<u8>> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "no result twice");
    assert_eq!(
        names.len() as u64,
        total + 1,
        "every result, the new one too"
    );
    assert!(names.last().unwrap().ends_with(b"/zzzz-made-meanwhile"));
    inst.stop();
}

/// One connection may hold 32 calls at once: the daemon says so in its
/// HTTP/2 SETTINGS (a client queues calls beyond; one that ignores the
/// setting gets its extra streams refused). Read with a bare HTTP/2 client.
#[test]
fn the_daemon_allows_32_calls_at_once_per_connection() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let socket = inst.home.join("fsindexd.sock");
    let limit = rt.block_on(async {
        let io = tokio::net::UnixStream::connect(socket).await.unwrap();
        let (mut client, mut conn) = h2::client::handshake(io).await.unwrap();
        // One health check, so that the daemon's settings have arrived.
        let req = http::Request::post("http://localhost/grpc.health.v1.Health/Check")
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .unwrap();
        let (answer, mut body) = client.send_request(req, false).unwrap();
        body.send_data(bytes::Bytes::from_static(&[0, 0, 0, 0, 0]), true)
            .unwrap();
        tokio::select! {
            r = answer => assert_eq!(r.unwrap().status(), 200),
            r = &mut conn => panic!("the connection ended: {r:?}"),
        }
        conn.max_concurrent_send_streams()
    });
    assert_eq!(limit, 32);
    inst.stop();
}

/// Threads of the daemon, from `/proc`.
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count())
}

/// Forty clients asking for a whole-tree answer at once do not get forty
/// threads each building one: unary queries take turns, at most two per
/// core (at least 4) at a time, so the peak memory of a burst is bounded by
/// the core count, not by the clients; and every client is answered.
#[test]
fn forty_whole_tree_queries_at_once_take_turns() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    for d in 0..20 {
        let dir = tree.join(format!("d{d:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..500 {
            std::fs::write(dir.join(format!("f{f:04}")), b"x").unwrap();
        }
    }
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let pid = inst.daemon_pid().unwrap();
    let idle = threads(pid);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let turns = (2 * cores).clamp(4, 64);
    let top = tree.to_string_lossy().into_owned();
    let clients: Vec<_> = (0..40)
        .map(|_| {
            inst.fsctl_cmd(&["du", &top, "--all", "--top", "0", "--json"])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut most = idle;
    let mut clients = clients;
    let deadline = Instant::now() + Duration::from_secs(120);
    while !clients.is_empty() {
        most = most.max(threads(pid));
        clients.retain_mut(|c| match c.try_wait().unwrap() {
            Some(st) => {
                assert!(st.success(), "a client failed: {st}");
                false
            }
            None => true,
        });
        assert!(Instant::now() < deadline, "40 du calls took over 2 minutes");
        std::thread::sleep(Duration::from_millis(5));
    }
    // The blocking pool's threads: at most one per turn, plus what else
    // the daemon may start meanwhile (a scan's or trim's thread).
    assert!(
        most <= idle + turns + 4,
        "{most} threads at the peak, {idle} idle, {turns} turns"
    );
}
