//! A real daemon on a temp tree, fsctl as the oracle, and a kittest
//! harness around the window (no GPU, no display: the harness reads the
//! AccessKit tree egui builds every frame).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use fsgui::{App, Options, View};
use fsindex_client::Target;
use serde_json::Value;

/// target/debug, where `cargo build --workspace --bins` put fsindexd and fsctl.
pub fn bin_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FSINDEX_BIN_DIR") {
        return PathBuf::from(d);
    }
    let exe = std::env::current_exe().expect("test exe");
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

/// One isolated instance: its FSINDEX_HOME, a daemon indexing `tree`.
pub struct Instance {
    pub _tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub tree: PathBuf,
    daemon: Child,
}

impl Instance {
    /// Builds the tree with `make`, starts fsindexd on it, waits until ready.
    pub fn start(make: impl FnOnce(&Path)) -> Instance {
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        std::fs::create_dir_all(&tree).unwrap();
        make(&tree);
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let daemon = spawn_daemon(&tree, &home);
        let inst = Instance {
            _tmp: tmp,
            home,
            tree,
            daemon,
        };
        inst.wait_ready();
        inst
    }

    fn wait_ready(&self) {
        eventually(Duration::from_secs(60), "daemon ready", || {
            let out = self.fsctl(&["status", "--json"]);
            out.status.success()
                && serde_json::from_slice::<Value>(&out.stdout).is_ok_and(|v| v["state"] == "ready")
        });
    }

    /// SIGTERM to the daemon (`kill`, the real program); returns how long
    /// it took to exit, failing after `limit` (then it is killed).
    pub fn terminate(&mut self, limit: Duration) -> Duration {
        let sent = Instant::now();
        let kill = Command::new("kill")
            .args(["-TERM", &self.daemon.id().to_string()])
            .status()
            .expect("run kill");
        assert!(kill.success(), "kill -TERM failed");
        loop {
            if let Some(status) = self.daemon.try_wait().expect("wait for fsindexd") {
                assert!(status.success(), "fsindexd exited with {status} on SIGTERM");
                return sent.elapsed();
            }
            if sent.elapsed() > limit {
                let _ = self.daemon.kill();
                let _ = self.daemon.wait();
                panic!("fsindexd still running {limit:?} after SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A new daemon on the same instance (after [`Instance::terminate`]).
    pub fn restart(&mut self) {
        self.daemon = spawn_daemon(&self.tree, &self.home);
        self.wait_ready();
    }

    pub fn socket(&self) -> PathBuf {
        self.home.join("fsindexd.sock")
    }

    pub fn fsctl(&self, args: &[&str]) -> std::process::Output {
        Command::new(bin_dir().join("fsctl"))
            .args(args)
            .env("FSINDEX_HOME", &self.home)
            .env("FSINDEX_NO_SPAWN", "1")
            .env_remove("FSINDEX_SOCKET")
            .output()
            .expect("run fsctl")
    }

    /// `fsctl ARGS --json`, one object per line.
    pub fn json_lines(&self, args: &[&str]) -> Vec<Value> {
        let mut a = args.to_vec();
        a.push("--json");
        let out = self.fsctl(&a);
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "fsctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect()
    }

    /// The window on this instance, in a harness.
    pub fn window(&self, view: View) -> Harness<'static, App> {
        self.window_at(view, None, egui::vec2(1100.0, 700.0))
    }

    /// The window with `query` typed in at start, at `size` points, with
    /// the system's fonts as the real window has them.
    pub fn window_at(
        &self,
        view: View,
        query: Option<&str>,
        size: egui::Vec2,
    ) -> Harness<'static, App> {
        let options = Options {
            target: Target::Socket(self.socket()),
            spawn: false,
            query: None,
            view,
            settings_path: Some(self.home.join("fsgui.toml")),
            dry_run: true,
        };
        // The harness polls (see `settle`): the wake-up has nothing to do.
        let mut app = App::start(options, std::sync::Arc::new(|_| {})).expect("start the window");
        app.show(view);
        let mut h = Harness::builder()
            .with_size(size)
            .build_ui_state(|ui, app: &mut App| app.ui(ui), app);
        fsgui::fonts::install(&h.ctx)
            .expect("start the font thread")
            .join()
            .expect("the system's fonts");
        // Typed once the fonts are there (kittest fails on a missing glyph).
        if let Some(q) = query {
            h.state_mut().type_query(q);
        }
        h
    }
}

fn spawn_daemon(tree: &Path, home: &Path) -> Child {
    Command::new(bin_dir().join("fsindexd"))
        .arg("--root")
        .arg(tree)
        .env("FSINDEX_HOME", home)
        .env_remove("FSINDEX_SOCKET")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn fsindexd")
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// Polls `done` until it holds, failing with `what` after `limit`.
pub fn eventually(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Steps the window until `done` holds (replies arrive on another thread).
pub fn settle(h: &mut Harness<'static, App>, what: &str, done: impl Fn(&App) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        h.step();
        if done(h.state()) {
            // One more frame: what arrived is drawn.
            h.step();
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The window's search rows (those loaded) as paths.
pub fn shown_paths(app: &App) -> Vec<String> {
    let r = &app.search.results;
    (0..r.total)
        .map_while(|i| r.row(i))
        .map(|row| String::from_utf8_lossy(&row.path).into_owned())
        .collect()
}

/// Writes a file, making its folders.
pub fn write(root: &Path, rel: &str, content: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

/// A small tree with reports, taxes and duplicates.
pub fn sample_tree(root: &Path) {
    for (rel, content) in [
        ("Reports/2025/report-q1.pdf", &b"q1"[..]),
        ("Reports/2025/report-q2.pdf", b"q2 numbers"),
        ("Reports/2024/annual report.odt", b"annual"),
        ("Reports/old/report.txt", b"text report"),
        ("Taxes/2025/w2.pdf", b"wages"),
        ("Taxes/2024/w2.pdf", b"old wages"),
        ("photos/IMG_0001.jpg", &[1u8; 3000]),
        ("photos/IMG_0002.jpg", &[2u8; 5000]),
        ("photos/copy/IMG_0002.jpg", &[2u8; 5000]),
        ("music/song.mp3", &[3u8; 9000]),
        ("music/backup/song.mp3", &[3u8; 9000]),
        ("music/backup/song (1).mp3", &[3u8; 9000]),
        ("notes.md", b"plain"),
        ("src/main.rs", b"fn main() {}"),
    ] {
        write(root, rel, content);
    }
    for i in 0..40 {
        write(
            root,
            &format!("many/file-{i:03}.txt"),
            format!("{i}").as_bytes(),
        );
    }
}
