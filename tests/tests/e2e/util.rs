//! Test harness: temp trees, an isolated daemon instance per test, and
//! walk-based oracles. Everything runs the real binaries over a real socket.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Directory holding the built binaries (target/debug).
pub fn bin_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FSINDEX_BIN_DIR") {
        return PathBuf::from(d);
    }
    let exe = std::env::current_exe().expect("test exe");
    // target/debug/deps/e2e-HASH -> target/debug
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .to_owned();
    assert!(
        dir.join("fsindexd").is_file() && dir.join("fsctl").is_file(),
        "fsindexd and fsctl must be built first: `cargo build --workspace --bins` (looked in {})",
        dir.display()
    );
    dir
}

pub fn is_root() -> bool {
    // The crate denies unsafe code (no libc::geteuid), so ask `id`.
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0\n"))
        .unwrap_or(false)
}

/// The uid/gid unprivileged processes run as when the tests run as root.
pub const NOBODY: u32 = 65534;

/// Who runs the daemon, fsctl and the oracles (du, find).
#[derive(Clone, Debug)]
pub struct Runner {
    /// Some when commands are wrapped in setpriv to drop root.
    drop_to: Option<u32>,
    bins: PathBuf,
}

impl Runner {
    /// Runs as the current user.
    pub fn current() -> Runner {
        Runner {
            drop_to: None,
            bins: bin_dir(),
        }
    }

    /// Runs as a user that permission bits apply to: as root, drops to
    /// nobody (root reads folders with mode 000). `owned` is chowned to that
    /// user, and the binaries are copied where that user can run them.
    pub fn unprivileged(owned: &[&Path], scratch: &Path) -> Runner {
        if !is_root() {
            return Runner::current();
        }
        let bins = scratch.join("bin");
        std::fs::create_dir_all(&bins).unwrap();
        for b in ["fsindexd", "fsctl"] {
            std::fs::copy(bin_dir().join(b), bins.join(b)).unwrap();
        }
        chown_r(&bins);
        for p in owned {
            chown_r(p);
        }
        // Every ancestor of the scratch dir must be traversable.
        std::fs::set_permissions(scratch, std::fs::Permissions::from_mode(0o755)).unwrap();
        Runner {
            drop_to: Some(NOBODY),
            bins,
        }
    }

    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        match self.drop_to {
            None => Command::new(program),
            Some(uid) => {
                let mut c = Command::new("setpriv");
                c.arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={uid}"))
                    .arg("--clear-groups")
                    .arg("--");
                c.arg(program);
                c
            }
        }
    }

    pub fn bin(&self, name: &str) -> PathBuf {
        self.bins.join(name)
    }
}

fn chown_r(p: &Path) {
    let st = Command::new("chown")
        .arg("-R")
        .arg("-h")
        .arg(format!("{NOBODY}:{NOBODY}"))
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success());
}

/// An isolated fsindex instance: its own FSINDEX_HOME, daemon and socket.
pub struct Instance {
    pub home: PathBuf,
    pub roots: Vec<PathBuf>,
    pub runner: Runner,
    /// Extra fsindexd arguments and environment.
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    daemon: Option<Child>,
}

/// The watch backend under test: `FSINDEX_TEST_WATCH_BACKEND` (inotify,
/// notify or poll), passed to every daemon as `--watch-backend`; CI runs
/// the watch tests once per backend. `None`: the daemon's default.
pub fn watch_backend() -> Option<String> {
    std::env::var("FSINDEX_TEST_WATCH_BACKEND")
        .ok()
        .filter(|b| !b.is_empty())
}

/// True when the backend under test watches nothing (every root polled).
pub fn polling() -> bool {
    watch_backend().as_deref() == Some("poll")
}

impl Instance {
    /// Creates the instance directory without starting a daemon.
    pub fn new(home: PathBuf, roots: &[&Path], runner: Runner) -> Instance {
        std::fs::create_dir_all(&home).unwrap();
        if runner.drop_to.is_some() {
            chown_r(&home);
        }
        Instance {
            home,
            roots: roots.iter().map(|p| p.to_path_buf()).collect(),
            runner,
            args: Vec::new(),
            env: Vec::new(),
            daemon: None,
        }
    }

    /// `--watch-backend` for the backend under test (see [`watch_backend`]),
    /// unless the test chose one; the poll backend polls every second.
    fn backend_args(&self) -> Vec<String> {
        let Some(b) = watch_backend() else {
            return Vec::new();
        };
        if self.args.iter().any(|a| a == "--watch-backend") {
            return Vec::new();
        }
        let mut args = vec!["--watch-backend".to_owned(), b.clone()];
        if b == "poll" && !self.args.iter().any(|a| a == "--poll-interval") {
            args.extend(["--poll-interval".to_owned(), "1".to_owned()]);
        }
        args
    }

    /// Starts fsindexd with `--root` for every root and waits until ready.
    pub fn start(&mut self) {
        self.spawn();
        self.wait_ready();
    }

    /// Starts fsindexd without waiting.
    pub fn spawn(&mut self) {
        let mut cmd = self.runner.command(self.runner.bin("fsindexd"));
        for r in &self.roots {
            cmd.arg("--root").arg(r);
        }
        cmd.args(&self.args);
        cmd.args(self.backend_args());
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd.env("FSINDEX_HOME", &self.home)
            .env_remove("FSINDEX_SOCKET");
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        self.daemon = Some(cmd.spawn().expect("spawn fsindexd"));
    }

    /// Runs fsindexd in the foreground and returns its output (for start-up
    /// errors).
    pub fn run_daemon(&self) -> Output {
        let mut cmd = self.runner.command(self.runner.bin("fsindexd"));
        for r in &self.roots {
            cmd.arg("--root").arg(r);
        }
        cmd.args(&self.args);
        cmd.args(self.backend_args());
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd.env("FSINDEX_HOME", &self.home);
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_output(child, Duration::from_secs(30))
    }

    pub fn fsctl_cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.runner.command(self.runner.bin("fsctl"));
        cmd.args(args)
            .env("FSINDEX_HOME", &self.home)
            .env("FSINDEX_NO_SPAWN", "1")
            .env_remove("FSINDEX_SOCKET");
        cmd
    }

    pub fn fsctl(&self, args: &[&str]) -> Output {
        self.fsctl_cmd(args).output().expect("run fsctl")
    }

    /// Runs fsctl with `--json` and parses its single object.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.push("--json");
        let out = self.fsctl(&a);
        assert!(
            out.status.success(),
            "fsctl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "fsctl {args:?}: bad JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }

    /// The running daemon's process id.
    /// Everything the daemon logged so far.
    pub fn log(&self) -> String {
        let mut all = String::new();
        for e in std::fs::read_dir(self.home.join("logs"))
            .into_iter()
            .flatten()
            .flatten()
        {
            all += &std::fs::read_to_string(e.path()).unwrap_or_default();
        }
        all
    }

    pub fn daemon_pid(&self) -> Option<u32> {
        self.daemon.as_ref().map(|c| c.id())
    }

    pub fn status(&self) -> Value {
        self.json(&["status"])
    }

    /// Polls status until every root is scanned (no sleeps on a guess).
    pub fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(child) = self.daemon.as_mut()
                && let Ok(Some(st)) = child.try_wait()
            {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    use std::io::Read;
                    let _ = e.read_to_string(&mut err);
                }
                panic!("fsindexd exited early ({st}): {err}");
            }
            let out = self.fsctl(&["status", "--json"]);
            let last = if out.status.success() {
                let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                if v["state"] == "ready" {
                    return;
                }
                v.to_string()
            } else {
                String::from_utf8_lossy(&out.stderr).into_owned()
            };
            assert!(
                Instant::now() < deadline,
                "daemon not ready in time; last status: {last}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then wait for a clean exit.
    pub fn stop(&mut self) {
        if let Some(child) = self.daemon.take() {
            let st = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status()
                .unwrap();
            assert!(st.success());
            let out = wait_output(child, Duration::from_secs(30));
            assert!(
                out.status.success(),
                "fsindexd did not stop cleanly: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    /// SIGKILL: no chance to flush or checkpoint.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.daemon.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// Waits until the daemon answers status (not necessarily ready).
    pub fn wait_listening(&self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = self.fsctl(&["status", "--json"]);
            if out.status.success() {
                return serde_json::from_slice(&out.stdout).unwrap();
            }
            assert!(
                Instant::now() < deadline,
                "daemon not listening: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Search with `-0`: byte-exact paths, in result order.
    pub fn search0(&self, query: &[&str]) -> Vec<Vec<u8>> {
        let mut args = vec!["search", "-0"];
        args.extend_from_slice(query);
        let out = self.fsctl(&args);
        assert!(
            out.status.code() == Some(0) || out.status.code() == Some(1),
            "fsctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
            .split(|&b| b == 0)
            .filter(|s| !s.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    }

    pub fn db(&self) -> PathBuf {
        self.home.join("index.db")
    }
}

/// Waits for a child (polling, so a hung one is killed after `limit`).
fn wait_output(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(mut c) = self.daemon.take() {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(c.id().to_string())
                .status();
            let _ = c.wait();
        }
    }
}

/// Builds the awkward tree every capability is tested on. Returns the path
/// of the folder that is made unreadable (callers chmod it last, after any
/// chown).
pub fn odd_tree(root: &Path) -> PathBuf {
    let w = |p: &str, content: &[u8]| write_file(root, p, content);
    w("Taxes/2025/w2.pdf", b"wages");
    w("Taxes/2024/w2.pdf", b"old wages");
    w("2025_tax_return.pdf", &[7u8; 5000]);
    w("My Documents/tax return 2025.pdf", b"spaces in names");
    w("My Documents/notes.txt", b"plain");
    w("Café/menu.txt", b"composed");
    w("Cafe\u{301} Noir/menu.txt", b"decomposed");
    w("ärger/ÄRGER.txt", b"umlaut");
    w("Straße.md", b"sharp s");
    w(".hidden/secret.txt", b"hidden");
    w(".bashrc", b"export X=1");
    w("src/main.rs", b"fn main() {}");
    w("src/lib.rs", &vec![b'x'; 70_000]);
    w("empty.txt", b"");
    std::fs::create_dir_all(root.join("empty folder")).unwrap();
    // Not UTF-8.
    let bad = root.join(OsStr::from_bytes(b"bad\xffname.txt"));
    std::fs::write(&bad, b"latin-1 name").unwrap();
    // Deep nesting.
    let mut deep = root.join("deep");
    for i in 0..40 {
        deep = deep.join(format!("level{i}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("bottom.txt"), b"deep").unwrap();
    // Symlinks: dangling, a loop, one to a folder (never followed).
    symlink("does-not-exist", root.join("dangling")).unwrap();
    symlink("loop", root.join("loop")).unwrap();
    symlink("..", root.join("src/up")).unwrap();
    // Hard links: both inside; one with its twin in another folder.
    w("links/a/original.bin", &vec![1u8; 20_000]);
    std::fs::hard_link(
        root.join("links/a/original.bin"),
        root.join("links/b-twin.bin"),
    )
    .unwrap();
    std::fs::hard_link(
        root.join("links/a/original.bin"),
        root.join("links/a/same-dir-twin.bin"),
    )
    .unwrap();
    // A sparse file: 8 MiB apparent, almost nothing allocated.
    let f = std::fs::File::create(root.join("sparse.img")).unwrap();
    f.set_len(8 << 20).unwrap();
    // A fifo (kind "other").
    assert!(
        Command::new("mkfifo")
            .arg(root.join("pipe"))
            .status()
            .unwrap()
            .success()
    );
    // A folder that will be unreadable.
    w("locked/inside.txt", b"cannot see me");
    w("locked/sub/deeper.txt", b"nor me");
    root.join("locked")
}

/// A wide tree of `dirs` x `files` empty files, for scans that take a while.
pub fn wide_tree(root: &Path, dirs: usize, files: usize) {
    for d in 0..dirs {
        let dir = root.join(format!("d{d:04}")).join("inner");
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..files {
            std::fs::File::create(dir.join(format!("file-{d}-{f}.txt"))).unwrap();
        }
    }
}

pub fn make_unreadable(p: &Path) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o000)).unwrap();
}

/// Every path under `root` as `find` sees it when run by `runner`
/// (independent of fsindex's walker), root excluded.
pub fn find_oracle(runner: &Runner, root: &Path) -> BTreeSet<Vec<u8>> {
    let out = runner
        .command("find")
        .arg(root)
        .arg("-mindepth")
        .arg("1")
        .arg("-print0")
        .output()
        .unwrap();
    out.stdout
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// The entries of `all` whose path relative to `root`, folded, contains
/// every term (the DESIGN's search semantics, computed independently).
pub fn search_oracle(all: &BTreeSet<Vec<u8>>, root: &Path, terms: &[&str]) -> BTreeSet<Vec<u8>> {
    let prefix = root.as_os_str().as_bytes().len() + 1;
    let terms: Vec<String> = terms.iter().map(|t| fold(t)).collect();
    all.iter()
        .filter(|p| {
            let rel = fold(&String::from_utf8_lossy(&p[prefix..]));
            terms.iter().all(|t| rel.contains(t.as_str()))
        })
        .cloned()
        .collect()
}

/// `s` in NFC with full case folding: how search compares names and terms.
pub fn fold(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let nfc: String = s.nfc().collect();
    caseless::default_case_fold_str(&nfc).nfc().collect()
}

/// `du -s -B1` and `du -s -b` of `path`, as `runner` (GNU du is the oracle).
pub fn gnu_du(runner: &Runner, path: &Path) -> (u64, u64) {
    let get = |flag: &str| {
        let out = runner
            .command("du")
            .arg("-s")
            .arg(flag)
            .arg(path)
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&out.stdout);
        s.split_whitespace()
            .next()
            .unwrap_or_else(|| panic!("du {flag} {}: no output", path.display()))
            .parse::<u64>()
            .unwrap()
    };
    (get("-B1"), get("-b"))
}

/// The JSON objects of a `--json` command that prints one per line.
pub fn json_lines(out: &Output) -> Vec<Value> {
    out.stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

/// Polls `done` every 50 ms until it holds; fails with `what` after
/// `limit` (no sleeps on a guess).
pub fn eventually(limit: Duration, what: &str, done: impl FnMut() -> bool) {
    assert!(poll_until(limit, done), "{what}");
}

/// Polls `done` every 50 ms until it holds or `limit` has passed, and says
/// whether it held. For waits whose failure is reported afterwards, with
/// what the caller last saw (see [`eventually`] for a plain failure).
pub fn poll_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Asserts that `fsctl verify` finds the index equal to the disk, showing
/// its differences otherwise.
pub fn verify_clean(inst: &Instance) {
    let out = inst.fsctl(&["verify"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the index differs from the disk:\n{}",
        text(&out)
    );
}

/// Waits until every change made on disk so far is applied: a search with
/// `--sync` writes a cookie file in each root and answers once its event
/// has come back through the watcher (the read-after-write barrier).
pub fn sync(inst: &Instance) {
    let out = inst.fsctl(&["search", "--sync", "--limit", "1", "sync-probe"]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "fsctl search --sync failed: {}",
        text(&out)
    );
}

/// Every folder and every other entry under `root` as the test's own walk
/// sees them now (links not followed; `root` is the first folder).
pub fn listing(root: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut dirs = vec![root.to_owned()];
    let mut others = Vec::new();
    let mut i = 0;
    while i < dirs.len() {
        if let Ok(rd) = std::fs::read_dir(&dirs[i]) {
            for e in rd.flatten() {
                match e.file_type() {
                    Ok(t) if t.is_dir() => dirs.push(e.path()),
                    Ok(_) => others.push(e.path()),
                    Err(_) => {}
                }
            }
        }
        i += 1;
    }
    (dirs, others)
}

/// A small, seeded generator (xorshift64*), so that a failing random test
/// replays from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> Option<&'a T> {
        (!v.is_empty()).then(|| &v[self.below(v.len())])
    }
}

/// Writes `content` to `rel` under `root`, making folders as needed.
pub fn write_file(root: &Path, rel: impl AsRef<Path>, content: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

/// A running `fsctl watch --json` (or any command printing one JSON
/// object per line): its lines arrive on a channel read by a thread of its
/// own, so the test can wait for an event with a deadline. Killed on drop.
pub struct Watch {
    child: Child,
    lines: std::sync::mpsc::Receiver<Value>,
    /// Every event received so far, in order, `subscribed` first.
    pub seen: Vec<Value>,
}

impl Watch {
    /// Spawns `cmd` with its stdout piped and waits for the `subscribed`
    /// event the daemon sends once the subscription is in place: from then
    /// on no change is missed, so the test needs no sleep before changing
    /// the tree.
    pub fn subscribe(mut cmd: Command) -> Watch {
        let mut child = cmd.stdout(Stdio::piped()).spawn().expect("spawn watch");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("watch printed a line that is not JSON ({e}): {line}")
                });
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let mut w = Watch {
            child,
            lines,
            seen: Vec::new(),
        };
        let first = w
            .lines
            .recv_timeout(Duration::from_secs(10))
            .expect("no `subscribed` event from watch in 10 s");
        assert_eq!(first["kind"], "subscribed", "{first}");
        w.seen.push(first);
        w
    }

    /// Receives events until one satisfies `want`, which is returned (every
    /// event received lands in [`Watch::seen`]); fails with `what` and
    /// what came instead after `limit`.
    pub fn until(
        &mut self,
        limit: Duration,
        what: &str,
        mut want: impl FnMut(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(ev) = self.lines.recv_timeout(left) else {
                panic!("no {what} within {limit:?}; got {:#?}", self.seen);
            };
            self.seen.push(ev.clone());
            if want(&ev) {
                return ev;
            }
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A command's stdout and stderr, for assertion messages and greps.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Shows set differences readably.
pub fn diff(expected: &BTreeSet<Vec<u8>>, got: &BTreeSet<Vec<u8>>) -> String {
    let missing: Vec<String> = expected.difference(got).map(|p| lossy(p)).collect();
    let extra: Vec<String> = got.difference(expected).map(|p| lossy(p)).collect();
    format!("missing {missing:#?}\nextra {extra:#?}")
}

/// A started instance indexing a fresh [`odd_tree`].
pub struct OddSetup {
    /// Holds the temp dir until the test ends.
    pub tmp: tempfile::TempDir,
    pub tree: PathBuf,
    pub inst: Instance,
}

/// Builds an awkward tree and starts a daemon on it. With `unreadable`, the
/// `locked` folder is made unreadable and everything runs as a user that
/// permission bits apply to.
pub fn odd_instance(unreadable: bool) -> OddSetup {
    odd_instance_with(unreadable, &[])
}

/// [`odd_instance`] with extra fsindexd arguments.
pub fn odd_instance_with(unreadable: bool, args: &[&str]) -> OddSetup {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    let locked = odd_tree(&tree);
    let runner = if unreadable {
        Runner::unprivileged(&[&tree], tmp.path())
    } else {
        Runner::current()
    };
    if unreadable {
        make_unreadable(&locked);
    }
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], runner);
    inst.args = args.iter().map(|a| a.to_string()).collect();
    inst.start();
    OddSetup { tmp, tree, inst }
}

/// Every indexed path under `root`, relative to it: `fsctl search --sync
/// -0 '*'` (a wildcard matches every name), byte-exact. A path the index
/// returns outside `root` is kept whole, prefixed with `!outside!`, so that
/// it shows up in a diff.
pub fn indexed_rel(inst: &Instance, root: &Path) -> BTreeSet<Vec<u8>> {
    let out = inst.fsctl(&["search", "--sync", "-0", "*"]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "fsctl search --sync -0 '*' failed: {}",
        text(&out)
    );
    let mut prefix = root.as_os_str().as_bytes().to_vec();
    prefix.push(b'/');
    out.stdout
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|p| match p.strip_prefix(prefix.as_slice()) {
            Some(rel) => rel.to_vec(),
            None => [b"!outside!".as_slice(), p].concat(),
        })
        .collect()
}

/// The first `n` paths missing from `got` and the first `n` extra in it,
/// one per line, quoted so that newlines and odd bytes stay visible.
pub fn diff_first(expected: &BTreeSet<Vec<u8>>, got: &BTreeSet<Vec<u8>>, n: usize) -> String {
    let show = |set: Vec<&Vec<u8>>| -> String {
        let total = set.len();
        let mut s: String = set
            .iter()
            .take(n)
            .map(|p| {
                let shown = lossy(p);
                let shown = if shown.len() > 160 {
                    format!(
                        "{}…{} ({} bytes)",
                        &shown[..shown.floor_char_boundary(60)],
                        &shown[shown.ceil_char_boundary(shown.len() - 80)..],
                        p.len()
                    )
                } else {
                    shown
                };
                format!("    {shown:?}\n")
            })
            .collect();
        if total > n {
            s.push_str(&format!("    … and {} more\n", total - n));
        }
        s
    };
    let missing: Vec<&Vec<u8>> = expected.difference(got).collect();
    let extra: Vec<&Vec<u8>> = got.difference(expected).collect();
    format!(
        "  {} missing from the index:\n{}  {} in the index but not on disk:\n{}",
        missing.len(),
        show(missing),
        extra.len(),
        show(extra)
    )
}

/// Runs a shell script in `dir` and fails with its output if it fails.
pub fn sh(dir: &Path, script: &str) -> Output {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run sh");
    assert!(
        out.status.success(),
        "`{script}` in {} failed ({}): {}",
        dir.display(),
        out.status,
        text(&out)
    );
    out
}

/// One gRPC call against the instance's socket, on a runtime of its own
/// (paths travel as bytes, so names that are not UTF-8 stay exact).
pub fn grpc<T>(inst: &Instance, call: impl AsyncFnOnce(&mut fsindex_client::Client) -> T) -> T {
    let socket = inst.home.join("fsindexd.sock");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let target = fsindex_client::Target::Socket(socket);
        let mut c = fsindex_client::connect(&target)
            .await
            .expect("connect to fsindexd");
        call(&mut c).await
    })
}

/// A loopback port free a moment ago (bound and released; the daemon binds
/// it next).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Writes `rel` under `root` (folders made as needed) with `content`, and
/// sets its modification time.
pub fn write_at(root: &Path, rel: &str, content: &[u8], mtime: std::time::SystemTime) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, content).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}
