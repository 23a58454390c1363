//! The daemon instance under test and the commands run against it: who
//! runs them ([`Runner`]), an isolated [`Instance`] with its own
//! FSINDEX_HOME and socket, a running `fsctl watch` ([`Watch`]), and the
//! waits and reads that go through `fsctl` or gRPC.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::text;
use super::trees::{make_unreadable, odd_tree};

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
        dir.join("fsindexd").is_file()
            && dir.join("fsctl").is_file()
            && dir.join("fsindex-extract-child").is_file(),
        "fsindexd, fsctl and fsindex-extract-child must be built first: `cargo build --workspace --bins` (looked in {})",
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
        for b in ["fsindexd", "fsctl", "fsindex-extract-child"] {
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

    /// Runs as the current user, with the binaries in `bins`.
    pub fn with_bins(bins: PathBuf) -> Runner {
        Runner {
            drop_to: None,
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

    /// The running daemon's process id.
    pub fn daemon_pid(&self) -> Option<u32> {
        self.daemon.as_ref().map(|c| c.id())
    }

    pub fn status(&self) -> Value {
        self.json(&["status"])
    }

    /// Polls status until every root is scanned and written to disk (no
    /// sleeps on a guess): what most tests look at next (`rows_written`,
    /// tags, content) comes after a first index is persisted.
    pub fn wait_ready(&mut self) {
        self.wait_state(true);
    }

    /// Polls status until every root is searchable (`state: ready`), its
    /// first index perhaps not yet persisted.
    pub fn wait_searchable(&mut self) {
        self.wait_state(false);
    }

    fn wait_state(&mut self, persisted: bool) {
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
                if v["state"] == "ready" && (!persisted || v["persisted"] != false) {
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

    /// The next event, if one comes within `limit` (it lands in
    /// [`Watch::seen`] too).
    pub fn next_within(&mut self, limit: Duration) -> Option<Value> {
        let ev = self.lines.recv_timeout(limit).ok()?;
        self.seen.push(ev.clone());
        Some(ev)
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
