//! Every RPC of `fsindex.v1.Index` fed requests made from arbitrary bytes,
//! through a raw gRPC client (request bodies are bytes, not messages), on a
//! real daemon over its real socket: random bytes, valid messages with
//! hostile field values (huge, deep, non-UTF-8, relative and outside paths,
//! numbers at u32/u64::MAX, unknown enum values), and valid messages
//! truncated, bit-flipped, spliced and padded with unknown or repeated
//! fields.
//!
//! Every answer must be OK or a clean status; an INTERNAL is allowed only as
//! gRPC's answer to a body that is not a valid message of the method's type
//! ("Error parsing request proto" is INTERNAL in gRPC's status-code table),
//! never for one that decodes, and never a panic, a reset stream or a dead
//! connection. Afterwards the same daemon (same pid) still answers.
//!
//! The cases are seeded, so a failure replays: `FUZZ_SEED` (default fixed)
//! and `FUZZ_CASES` (default 1,500, a few seconds) choose them. The longer
//! run is documented in benches/README.md.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, Bytes};
use fsindex_proto::v1 as pb;
use prost::Message;
use tonic::Code;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::{Channel, Endpoint, Uri};

use crate::util::{Instance, Runner, grpc, odd_tree};

/// A codec whose messages are bodies as they travel: the request is sent as
/// it is given, the answer is not decoded.
#[derive(Clone, Copy, Debug, Default)]
struct Raw;

impl Codec for Raw {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = Raw;
    type Decoder = Raw;
    fn encoder(&mut self) -> Raw {
        Raw
    }
    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Bytes;
    type Error = tonic::Status;
    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Bytes;
    type Error = tonic::Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, tonic::Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

/// Small, seeded, good enough to pick cases (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// The methods of fsindex.v1.Index, and whether each answers with a stream.
const METHODS: &[(&str, bool)] = &[
    ("Status", false),
    ("Search", true),
    ("DiskUsage", false),
    ("Rescan", true),
    ("Roots", false),
    ("Verify", true),
    ("Subscribe", true),
    ("Stat", false),
    ("List", false),
    ("Tree", false),
    ("Duplicates", true),
    ("FsMap", false),
    ("Reload", false),
    ("ReadText", false),
];

/// Values that sit on a boundary somewhere.
const U64S: &[u64] = &[
    0,
    1,
    2,
    20,
    63,
    64,
    65,
    1023,
    1024,
    1025,
    65_535,
    65_536,
    1 << 31,
    u32::MAX as u64 - 1,
    u32::MAX as u64,
    u32::MAX as u64 + 1,
    i64::MAX as u64,
    u64::MAX - 1,
    u64::MAX,
];

/// Everything the cases draw paths from.
struct Pools {
    paths: Vec<Vec<u8>>,
    /// Paths that Roots may be asked to add or remove: none is a root or a
    /// folder that could become one (the index under test stays whole).
    root_paths: Vec<Vec<u8>>,
    queries: Vec<String>,
}

fn pools(tree: &Path, outside: &Path) -> Pools {
    let b = |p: &Path| p.as_os_str().as_bytes().to_vec();
    let t = b(tree);
    let join = |s: &[u8]| [t.as_slice(), b"/", s].concat();
    let mut deep = t.clone();
    for _ in 0..1500 {
        deep.extend_from_slice(b"/d");
    }
    let mut paths = vec![
        Vec::new(),
        b"/".to_vec(),
        b"//".to_vec(),
        b"relative/path".to_vec(),
        b".".to_vec(),
        b"..".to_vec(),
        b"/etc/shadow".to_vec(),
        b"/proc/self/mem".to_vec(),
        b"/dev/zero".to_vec(),
        t.clone(),
        [t.as_slice(), b"/"].concat(),
        join(b"."),
        join(b".."),
        join(b"../.."),
        join(b"src/../../.."),
        join(b"src"),
        join(b"src/lib.rs"),
        join(b"src/up"),
        join(b"src/up/src/up/src"),
        join(b"Taxes/2025/w2.pdf"),
        join(b"bad\xffname.txt"),
        join(b"loop"),
        join(b"dangling"),
        join(b"pipe"),
        join(b"sparse.img"),
        join(b"links"),
        join(b"no/such/thing"),
        join(b"deep"),
        join(b"chain"),
        join(b"\0"),
        join(b"a\0b"),
        b"\xff\xfe\xfd".to_vec(),
        join(&[b'x'; 255]),
        join(&[b'x'; 256]),
        join(&[b'x'; 5000]),
        [t.as_slice(), "/./".repeat(2000).as_bytes()].concat(),
        [t.as_slice(), "/a".repeat(40_000).as_bytes()].concat(),
        deep,
        b(outside),
    ];
    let mut chain = t.clone();
    chain.extend_from_slice(b"/chain");
    for _ in 0..CHAIN {
        chain.extend_from_slice(b"/c");
    }
    paths.push(chain);
    // Never a root, nor a folder that could become one, nor anything that
    // resolves to one (no `..`, no symlink, nothing relative).
    let root_paths = vec![
        Vec::new(),
        join(b"src"),
        join(b"src/lib.rs"),
        join(b"deep"),
        join(b"no/such/thing"),
        join(b"bad\xffname.txt"),
        join(b"a\0b"),
        join(&[b'x'; 5000]),
        b"/dev/zero".to_vec(),
        b"/etc/shadow".to_vec(),
        b"\xff\xfe\xfd".to_vec(),
    ];
    let long = |s: &str, n: usize| s.repeat(n);
    let queries = vec![
        String::new(),
        " ".into(),
        "a".into(),
        "*".into(),
        "w2".into(),
        "tax 2025".into(),
        "!a".into(),
        long("!", 10_000) + "a",
        long("!", 10_001) + "a",
        long("a", 16_384),
        long("a", 16_385),
        long("a", 3 << 20),
        long("x ", 64),
        long("x ", 65),
        long("*a", 32),
        long("*a", 33),
        long("?", 1000),
        long("(", 5000),
        long("a|", 5000),
        long("\"", 3),
        "\"unclosed".into(),
        "regex:".into(),
        "regex:(".into(),
        "regex:a{1000}{1000}".into(),
        format!("regex:{}a{}", long("(", 2000), long(")", 2000)),
        "regex:\\p{L}+".into(),
        "ext:".into(),
        "ext:;;;".into(),
        "size:>".into(),
        "size:>18446744073709551615".into(),
        "size:>99999999999999999999999tb".into(),
        "size:1kb..0".into(),
        "dm:".into(),
        "dm:99999".into(),
        "dm:2025-13-45".into(),
        "dm:-1..".into(),
        "kind:nothing".into(),
        "in:".into(),
        "in:relative".into(),
        "in:/".into(),
        "path:".into(),
        "content:".into(),
        "content:\"\"".into(),
        "content:*".into(),
        "content:=".into(),
        "tag:".into(),
        "@".into(),
        "@nosuchsearch".into(),
        "case:".into(),
        "width:>".into(),
        "duration:>999999999999h".into(),
        "taken:..".into(),
        "\u{0}".into(),
        "\u{feff}\u{200b}\u{301}".into(),
        "ﬃ ß İ".into(),
        long("é", 8000),
    ];
    Pools {
        paths,
        root_paths,
        queries,
    }
}

/// Folders in the chain under the tree: deeper than any depth limit.
const CHAIN: usize = 300;

/// A query made of the language's own pieces, at random.
fn random_query(rng: &mut Rng) -> String {
    const PIECES: &[&str] = &[
        "a",
        "w2",
        "tax",
        "2025",
        "!",
        "|",
        "*",
        "?",
        "\"",
        " ",
        "(",
        ")",
        "ext:",
        "size:",
        "dm:",
        "kind:",
        "in:/",
        "path:",
        "regex:",
        "content:",
        "case:",
        "tag:",
        "@",
        "..",
        ">",
        "<",
        "=",
        ";",
        "/",
        "\\",
        "[",
        "]",
        "{",
        "}",
        "ß",
        "é",
        "\u{301}",
        "0",
        "9",
        "kb",
        "mb",
        "today",
        "folder",
        "image",
        "taken:",
        "width:",
        "duration:",
    ];
    let n = rng.below(24);
    (0..n).map(|_| *rng.pick(PIECES)).collect()
}

fn any_u64(rng: &mut Rng) -> u64 {
    if rng.chance(70) {
        *rng.pick(U64S)
    } else {
        rng.next() >> rng.below(64)
    }
}

fn any_u32(rng: &mut Rng) -> u32 {
    any_u64(rng) as u32
}

fn any_enum(rng: &mut Rng) -> i32 {
    match rng.below(5) {
        0 => -1,
        1 => i32::MAX,
        2 => i32::MIN,
        _ => rng.below(8) as i32,
    }
}

fn any_path(rng: &mut Rng, pools: &Pools) -> Vec<u8> {
    let mut p = rng.pick(&pools.paths).clone();
    if rng.chance(15) {
        let n = rng.below(64);
        let extra = rng.bytes(n);
        p.extend_from_slice(b"/");
        p.extend_from_slice(&extra);
    }
    p
}

/// A valid message of `method`'s request type with field values drawn from
/// the pools (so it decodes; what it asks may still be refused).
fn valid_request(method: &str, rng: &mut Rng, pools: &Pools) -> Vec<u8> {
    let query = |rng: &mut Rng| {
        if rng.chance(50) {
            rng.pick(&pools.queries).clone()
        } else {
            random_query(rng)
        }
    };
    match method {
        "Status" => pb::StatusRequest {
            brief: rng.chance(50),
            waiting: rng.chance(20),
        }
        .encode_to_vec(),
        "Search" => pb::SearchRequest {
            query: query(rng),
            limit: any_u64(rng),
            sort: any_enum(rng),
            // --sync waits for cookies: keep it rare, the run bounded.
            sync: rng.chance(3),
            reverse: rng.chance(50),
            offset: any_u64(rng),
            snippets: rng.chance(50).then(|| any_u32(rng)),
        }
        .encode_to_vec(),
        "DiskUsage" => pb::DiskUsageRequest {
            path: any_path(rng, pools),
            top: any_u32(rng),
            apparent: rng.chance(50),
            sync: rng.chance(3),
            depth: any_u32(rng),
            all: rng.chance(30),
            files_only: rng.chance(20),
            dirs_only: rng.chance(20),
            photos: rng.chance(20),
        }
        .encode_to_vec(),
        "Rescan" => pb::RescanRequest {
            path: any_path(rng, pools),
            wait: rng.chance(50),
        }
        .encode_to_vec(),
        "Roots" => pb::RootsRequest {
            action: any_enum(rng),
            path: rng.pick(&pools.root_paths).clone(),
            content: rng.chance(50),
        }
        .encode_to_vec(),
        "Verify" => pb::VerifyRequest {
            path: any_path(rng, pools),
            fix: rng.chance(50),
        }
        .encode_to_vec(),
        "Subscribe" => pb::SubscribeRequest {
            path: any_path(rng, pools),
        }
        .encode_to_vec(),
        "Stat" => pb::StatRequest {
            path: any_path(rng, pools),
        }
        .encode_to_vec(),
        "List" => pb::ListRequest {
            path: any_path(rng, pools),
            sort: any_enum(rng),
            reverse: rng.chance(50),
        }
        .encode_to_vec(),
        "Tree" => pb::TreeRequest {
            path: any_path(rng, pools),
            depth: any_u32(rng),
            max_children: any_u32(rng),
        }
        .encode_to_vec(),
        "Duplicates" => pb::DuplicatesRequest {
            path: any_path(rng, pools),
            min_size: any_u64(rng),
            include_empty: rng.chance(50),
        }
        .encode_to_vec(),
        "FsMap" => pb::FsMapRequest {
            path: any_path(rng, pools),
            budget: any_u32(rng),
        }
        .encode_to_vec(),
        "Reload" => pb::ReloadRequest {}.encode_to_vec(),
        "ReadText" => pb::ReadTextRequest {
            path: any_path(rng, pools),
            offset: any_u64(rng),
            length: any_u64(rng),
            allow_sensitive: rng.chance(50),
        }
        .encode_to_vec(),
        other => unreachable!("{other}"),
    }
}

/// Whether `body` decodes as `method`'s request type (what the daemon's
/// own decoder will say).
fn decodes(method: &str, body: &[u8]) -> bool {
    match method {
        "Status" => pb::StatusRequest::decode(body).is_ok(),
        "Search" => pb::SearchRequest::decode(body).is_ok(),
        "DiskUsage" => pb::DiskUsageRequest::decode(body).is_ok(),
        "Rescan" => pb::RescanRequest::decode(body).is_ok(),
        "Roots" => pb::RootsRequest::decode(body).is_ok(),
        "Verify" => pb::VerifyRequest::decode(body).is_ok(),
        "Subscribe" => pb::SubscribeRequest::decode(body).is_ok(),
        "Stat" => pb::StatRequest::decode(body).is_ok(),
        "List" => pb::ListRequest::decode(body).is_ok(),
        "Tree" => pb::TreeRequest::decode(body).is_ok(),
        "Duplicates" => pb::DuplicatesRequest::decode(body).is_ok(),
        "FsMap" => pb::FsMapRequest::decode(body).is_ok(),
        "Reload" => pb::ReloadRequest::decode(body).is_ok(),
        "ReadText" => pb::ReadTextRequest::decode(body).is_ok(),
        other => unreachable!("{other}"),
    }
}

/// A request body for `method`: one of the ways a hostile or broken client
/// could make one.
fn request(method: &str, rng: &mut Rng, pools: &Pools) -> Vec<u8> {
    let body = match rng.below(10) {
        // Random bytes, mostly short.
        0 => {
            let n = if rng.chance(10) {
                rng.below(1 << 16)
            } else {
                rng.below(64)
            };
            return rng.bytes(n);
        }
        // Random fields: a tag of any number and wire type, then a value.
        1 => {
            let mut b = Vec::new();
            for _ in 0..rng.below(8) {
                let field = *rng.pick(&[1u64, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 2047, 536_870_911]);
                let wire = rng.below(8) as u64;
                put_varint(&mut b, (field << 3) | wire);
                match wire {
                    0 => put_varint(&mut b, any_u64(rng)),
                    2 => {
                        let n = rng.below(40);
                        put_varint(&mut b, n as u64 + rng.below(3) as u64);
                        b.extend(rng.bytes(n));
                    }
                    _ => {
                        let n = rng.below(9);
                        b.extend(rng.bytes(n));
                    }
                }
            }
            return b;
        }
        _ => valid_request(method, rng, pools),
    };
    let mut body = body;
    match rng.below(10) {
        // Truncated.
        0 if !body.is_empty() => {
            let at = rng.below(body.len());
            body.truncate(at);
        }
        // Bits flipped.
        1 if !body.is_empty() => {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(body.len());
                body[at] ^= 1 << rng.below(8);
            }
        }
        // A valid message twice (fields repeated: the last wins).
        2 => {
            let again = valid_request(method, rng, pools);
            body.extend(again);
        }
        // Unknown fields appended (must be skipped).
        3 => {
            put_varint(&mut body, (99 << 3) | 2);
            let n = rng.below(1 << 12);
            put_varint(&mut body, n as u64);
            body.extend(rng.bytes(n));
        }
        // An overlong or overflowing varint appended under field 2.
        4 => {
            put_varint(&mut body, 2 << 3);
            body.extend([0xff; 10]);
            body.push(if rng.chance(50) { 0x01 } else { 0x7f });
        }
        // A length that runs past the end.
        5 => {
            put_varint(&mut body, (1 << 3) | 2);
            put_varint(&mut body, u64::MAX >> rng.below(40));
        }
        _ => {}
    }
    body
}

fn put_varint(b: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        b.push(v as u8 | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
}

/// How one call ended.
#[derive(Debug)]
enum Outcome {
    /// OK (the messages are not looked at).
    Ok,
    Status(tonic::Status),
    /// No end within the time allowed.
    Hung,
}

/// How long one call may take: the slowest (a verify with fix, a rescan
/// waited for) take milliseconds on the test trees; this is for hangs.
const CALL_LIMIT: Duration = Duration::from_secs(30);

async fn call(channel: &Channel, method: &str, streaming: bool, body: Vec<u8>) -> Outcome {
    let path =
        tonic::codegen::http::uri::PathAndQuery::try_from(format!("/fsindex.v1.Index/{method}"))
            .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel.clone())
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX);
    let run = async {
        if let Err(e) = grpc.ready().await {
            return Outcome::Status(tonic::Status::unavailable(format!("not ready: {e}")));
        }
        let req = tonic::Request::new(Bytes::from(body));
        if !streaming {
            return match grpc.unary(req, path, Raw).await {
                Ok(_) => Outcome::Ok,
                Err(s) => Outcome::Status(s),
            };
        }
        let mut s = match grpc.server_streaming(req, path, Raw).await {
            Ok(r) => r.into_inner(),
            Err(s) => return Outcome::Status(s),
        };
        loop {
            match s.message().await {
                Ok(Some(_)) => {
                    // A subscription never ends by itself: its first
                    // message says it is in place, which is the answer.
                    if method == "Subscribe" {
                        return Outcome::Ok;
                    }
                }
                Ok(None) => return Outcome::Ok,
                Err(st) => return Outcome::Status(st),
            }
        }
    };
    match tokio::time::timeout(CALL_LIMIT, run).await {
        Ok(o) => o,
        Err(_) => Outcome::Hung,
    }
}

/// Why an outcome is wrong, if it is.
fn wrong(method: &str, body: &[u8], outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Ok => None,
        Outcome::Hung => Some(format!("no answer within {CALL_LIMIT:?}")),
        Outcome::Status(s) => {
            let msg = s.message();
            match s.code() {
                Code::InvalidArgument
                | Code::NotFound
                | Code::FailedPrecondition
                | Code::PermissionDenied
                | Code::OutOfRange
                | Code::AlreadyExists => None,
                // Only for a body over the daemon's size limit.
                Code::ResourceExhausted if body.len() > 4 << 20 => None,
                // gRPC's answer to a body that is not a message of the
                // method's type; never for one that is.
                Code::Internal
                    if !decodes(method, body)
                        && msg.starts_with("failed to decode Protobuf message") =>
                {
                    None
                }
                _ => Some(format!("{:?}: {msg}", s.code())),
            }
        }
    }
}

async fn unix_channel(socket: PathBuf) -> Channel {
    Endpoint::try_from("http://[::]:50051")
        .unwrap()
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let socket = socket.clone();
            async move {
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(
                    tokio::net::UnixStream::connect(socket).await?,
                ))
            }
        }))
        .await
        .expect("connect to fsindexd")
}

/// The tree the cases ask about: the awkward tree, a chain of folders
/// deeper than any depth limit, and a folder outside every root.
fn fuzz_tree(tmp: &Path) -> (PathBuf, PathBuf) {
    let tree = tmp.join("tree");
    odd_tree(&tree);
    let mut chain = tree.join("chain");
    for _ in 0..CHAIN {
        chain = chain.join("c");
    }
    std::fs::create_dir_all(&chain).unwrap();
    std::fs::write(chain.join("bottom.txt"), b"bottom").unwrap();
    let outside = tmp.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("not-indexed.txt"), b"x").unwrap();
    (tree, outside)
}

/// Runs `cases` seeded cases against the instance; returns the failures,
/// each with what reproduces it, and the outcomes by method and code.
fn run_cases(
    socket: &Path,
    pools: &Pools,
    seed: u64,
    cases: usize,
) -> (Vec<String>, BTreeMap<String, usize>) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let socket = socket.to_owned();
    rt.block_on(async {
        let mut channel = unix_channel(socket.clone()).await;
        let mut rng = Rng(seed);
        let mut failures = Vec::new();
        let mut seen = BTreeMap::new();
        let mut time: BTreeMap<&str, Duration> = BTreeMap::new();
        let started = Instant::now();
        for case in 0..cases {
            // A long run says how far it has come.
            if case > 0 && case % 5000 == 0 {
                eprintln!(
                    "{case} cases in {:.0} s, {} wrong so far",
                    started.elapsed().as_secs_f64(),
                    failures.len()
                );
            }
            let &(method, streaming) = rng.pick(METHODS);
            let body = request(method, &mut rng, pools);
            let t = Instant::now();
            let outcome = call(&channel, method, streaming, body.clone()).await;
            *time.entry(method).or_default() += t.elapsed();
            let key = match &outcome {
                Outcome::Ok => format!("{method} OK"),
                Outcome::Status(s) => format!("{method} {:?}", s.code()),
                Outcome::Hung => format!("{method} hung"),
            };
            *seen.entry(key).or_insert(0) += 1;
            if let Some(why) = wrong(method, &body, &outcome) {
                failures.push(format!(
                    "case {case} (FUZZ_SEED={seed}): {method} with {} bytes {}: {why}",
                    body.len(),
                    preview(&body)
                ));
                if failures.len() >= 20 {
                    break;
                }
                // A connection the case broke is a failure already; the
                // rest go on over a new one.
                channel = unix_channel(socket.clone()).await;
            }
        }
        eprintln!("time by method: {time:?}");
        (failures, seen)
    })
}

/// Says what a run of cases got, and fails with every wrong answer.
fn settle(what: &str, started: Instant, failures: &[String], seen: &BTreeMap<String, usize>) {
    eprintln!(
        "{what} in {:.1} s, by method and answer: {seen:#?}",
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} wrong answers:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn preview(body: &[u8]) -> String {
    let head: Vec<String> = body.iter().take(48).map(|b| format!("{b:02x}")).collect();
    format!(
        "[{}{}]",
        head.join(""),
        if body.len() > 48 { "..." } else { "" }
    )
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn every_rpc_answers_arbitrary_requests_cleanly_and_the_daemon_lives() {
    let tmp = tempfile::tempdir().unwrap();
    let (tree, outside) = fuzz_tree(tmp.path());
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let pid = inst.status()["pid"].clone();
    let pools = pools(&tree, &outside);
    let seed = env_u64("FUZZ_SEED", 0x005E_EDF5_1DE7);
    let cases = env_u64("FUZZ_CASES", 1500) as usize;
    let started = Instant::now();
    let (failures, seen) = run_cases(&inst.home.join("fsindexd.sock"), &pools, seed, cases);
    settle(&format!("{cases} cases"), started, &failures, &seen);
    // The same daemon answers, in full, and the index is still whole.
    let status = inst.status();
    assert_eq!(status["pid"], pid, "the daemon that took the cases answers");
    assert_eq!(
        status["roots"].as_array().map(Vec::len),
        Some(1),
        "{status}"
    );
    assert_eq!(inst.search0(&["w2.pdf"]).len(), 2);
    inst.stop();
}

/// The same cases from a user who is not the daemon's owner, against a
/// machine-wide daemon (`--system`), where every answer is also filtered by
/// what that user may see: the cases run in a copy of this test binary
/// started as `nobody` ([`fuzz_as_client`]), so the daemon sees that
/// user's credentials on its socket.
#[test]
fn a_machine_wide_daemon_answers_a_users_arbitrary_requests_cleanly() {
    let Some((t, _)) = crate::security::system_tree() else {
        return;
    };
    let (tree, outside) = fuzz_tree(t.path());
    let (inst, visitor) = crate::security::start_system(t.path(), &tree);
    let pid = inst.status()["pid"].clone();
    // The test binary, where `nobody` may run it.
    let exe = visitor.runner.bin("e2e-fuzz");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    let cases = env_u64("FUZZ_CASES", 1500) / 2;
    let out = visitor
        .runner
        .command(&exe)
        .args([
            "fuzz::fuzz_as_client",
            "--exact",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("FUZZ_CLIENT_SOCKET", inst.home.join("fsindexd.sock"))
        .env("FUZZ_CLIENT_TREE", &tree)
        .env("FUZZ_CLIENT_OUTSIDE", &outside)
        .env("FUZZ_CASES", cases.to_string())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("as uid 65534"),
        "the cases did not run: {said}"
    );
    assert_eq!(
        inst.status()["pid"],
        pid,
        "the daemon that took the cases answers"
    );
}

/// The client side of [`a_machine_wide_daemon_answers_a_users_arbitrary_requests_cleanly`]:
/// does nothing unless that test started it.
#[test]
fn fuzz_as_client() {
    let Some(socket) = std::env::var_os("FUZZ_CLIENT_SOCKET") else {
        return;
    };
    let path = |k: &str| PathBuf::from(std::env::var_os(k).unwrap());
    let pools = pools(&path("FUZZ_CLIENT_TREE"), &path("FUZZ_CLIENT_OUTSIDE"));
    let seed = env_u64("FUZZ_SEED", 0x005E_EDF5_1DE7) ^ 0xA11CE;
    let cases = env_u64("FUZZ_CASES", 750) as usize;
    let started = Instant::now();
    let (failures, seen) = run_cases(Path::new(&socket), &pools, seed, cases);
    settle(
        &format!("{cases} cases as uid {}", uid()),
        started,
        &failures,
        &seen,
    );
}

/// This process's uid (its `/proc` folder is owned by it).
fn uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid())
}

/// What the fuzzing found, one assertion each, over one connection that
/// must stay up throughout.
#[test]
fn requests_the_fuzzing_broke_get_clean_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let (tree, _outside) = fuzz_tree(tmp.path());
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let pid = inst.status()["pid"].clone();
    let t = tree.as_os_str().as_bytes();
    // 40,000 parts, 80 KB: the daemon's message named the path whole, in
    // an HTTP/2 header past the client's 16 KiB limit, and the client
    // dropped the connection (every call on it failed after); Stat matched
    // the exclusion rules against each of the 40,000 folders above it
    // (20 s).
    let long = [t, "/a".repeat(40_000).as_bytes()].concat();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let channel = unix_channel(inst.home.join("fsindexd.sock")).await;
        let cases: Vec<(&str, bool, Vec<u8>)> = vec![
            (
                "Stat",
                false,
                pb::StatRequest { path: long.clone() }.encode_to_vec(),
            ),
            (
                "DiskUsage",
                false,
                pb::DiskUsageRequest {
                    path: long.clone(),
                    ..Default::default()
                }
                .encode_to_vec(),
            ),
            (
                "List",
                false,
                pb::ListRequest {
                    path: long.clone(),
                    ..Default::default()
                }
                .encode_to_vec(),
            ),
            (
                "Tree",
                false,
                pb::TreeRequest {
                    path: long.clone(),
                    depth: 3,
                    max_children: 5,
                }
                .encode_to_vec(),
            ),
            (
                "FsMap",
                false,
                pb::FsMapRequest {
                    path: long.clone(),
                    budget: 100,
                }
                .encode_to_vec(),
            ),
            (
                "Duplicates",
                true,
                pb::DuplicatesRequest {
                    path: long.clone(),
                    ..Default::default()
                }
                .encode_to_vec(),
            ),
            // An hour's run found these two answering OK after 4-13 s:
            // the scanner (and every watch update with it) looked at each
            // of the 40,000 folders above the path, each `lstat` walking
            // the path part by part.
            (
                "Rescan",
                true,
                pb::RescanRequest {
                    path: long.clone(),
                    wait: true,
                }
                .encode_to_vec(),
            ),
            (
                "Verify",
                true,
                pb::VerifyRequest {
                    path: long.clone(),
                    fix: true,
                }
                .encode_to_vec(),
            ),
        ];
        for (method, streaming, body) in cases {
            match call(&channel, method, streaming, body).await {
                Outcome::Status(s) if s.code() == Code::NotFound => {
                    let m = s.message();
                    assert!(m.len() <= 1100, "{method}: {} bytes of message", m.len());
                    assert!(
                        m.contains("bytes ...]") && m.ends_with("is not in the index"),
                        "{method}: {m}"
                    );
                }
                other => panic!("{method}: {other:?}"),
            }
            // The same connection answers the next call.
            let status = pb::StatusRequest {
                brief: true,
                ..Default::default()
            }
            .encode_to_vec();
            assert!(
                matches!(call(&channel, "Status", false, status).await, Outcome::Ok),
                "after {method}"
            );
        }
    });

    // Tree: a depth past what protobuf decoders accept (they refuse 100
    // levels of nesting) is refused by name; a deep, unbounded one stops
    // at the node budget, breadth first, with the rest counted.
    let deep = grpc(&inst, async |c| {
        c.tree(pb::TreeRequest {
            path: t.to_vec(),
            depth: u32::MAX,
            max_children: u32::MAX,
        })
        .await
    })
    .unwrap_err();
    assert_eq!(deep.code(), Code::InvalidArgument, "{deep:?}");
    assert!(deep.message().contains("at most 64 levels"), "{deep:?}");
    let chain = tree.join("chain");
    let root = grpc(&inst, async |c| {
        c.tree(pb::TreeRequest {
            path: chain.as_os_str().as_bytes().to_vec(),
            depth: 64,
            max_children: u32::MAX,
        })
        .await
    })
    .expect("a tree 64 levels deep")
    .into_inner()
    .root
    .unwrap();
    let (mut levels, mut node) = (0, &root);
    while let Some(child) = node.children.first() {
        levels += 1;
        node = child;
    }
    assert_eq!(levels, 64);
    assert_eq!(node.hidden_children, 1, "the 65th level is counted");
    let many = tmp.path().join("many");
    for d in 0..120 {
        std::fs::create_dir_all(many.join(format!("d{d:03}"))).unwrap();
        for f in 0..100 {
            std::fs::write(many.join(format!("d{d:03}/f{f:03}")), b"").unwrap();
        }
    }
    let o = inst.fsctl(&["roots", "add", many.to_str().unwrap()]);
    assert!(o.status.success(), "{}", crate::util::text(&o));
    inst.fsctl(&["scan", many.to_str().unwrap(), "--wait"]);
    let root = grpc(&inst, async |c| {
        c.tree(pb::TreeRequest {
            path: many.as_os_str().as_bytes().to_vec(),
            depth: 2,
            max_children: u32::MAX,
        })
        .await
    })
    .expect("a tree of 12,121 nodes")
    .into_inner()
    .root
    .unwrap();
    fn count(n: &pb::TreeNode) -> (u64, u64) {
        n.children
            .iter()
            .map(count)
            .fold((1, n.hidden_children), |a, b| (a.0 + b.0, a.1 + b.1))
    }
    let (shown, hidden) = count(&root);
    assert_eq!(shown, 10_000, "the node budget");
    assert_eq!(
        shown + hidden,
        1 + 120 + 12_000,
        "every node shown or counted"
    );
    assert_eq!(root.children.len(), 120, "the upper level is whole");

    assert_eq!(inst.status()["pid"], pid);
    inst.stop();
}
