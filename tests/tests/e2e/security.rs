//! Security: machine-wide mode answers each user with what they could see,
//! TCP needs the token, path arguments cannot escape a root, and the
//! instance's files are private.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

use crate::util::{self, Instance, Runner, Watch, free_port, json_lines, text, write_file};

/// Names that must never reach the unprivileged caller.
const HIDDEN: [&str; 3] = ["zqhidden-report", "zqhidden-inner", "zqhidden-copy"];

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// A caller that is not root, talking to the machine-wide daemon's socket.
pub(crate) struct Visitor {
    pub(crate) runner: Runner,
    socket: std::path::PathBuf,
}

/// A temp folder every user may enter, and the tree's path in it; none
/// (the test is skipped) when not root, as machine-wide mode needs.
pub(crate) fn system_tree() -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    if !util::is_root() {
        eprintln!("skipped: machine-wide mode is tested as root");
        return None;
    }
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = t.path().join("tree");
    Some((t, root))
}

/// Runs `chmod`/`chown` with these arguments on `path`.
pub(crate) fn change(cmd: &str, args: &[&str], path: &Path) {
    assert!(
        Command::new(cmd)
            .args(args)
            .arg(path)
            .status()
            .unwrap()
            .success()
    );
}

/// A machine-wide daemon (`--system`) on `root`, its home in `t/home`, and
/// an unprivileged visitor with a scratch folder in `t/scratch`.
pub(crate) fn start_system(t: &Path, root: &Path) -> (Instance, Visitor) {
    let home = t.join("home");
    let mut inst = Instance::new(home.clone(), &[root], Runner::current());
    inst.args = vec!["--system".into()];
    inst.start();
    let scratch = t.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let visitor = Visitor {
        runner: Runner::unprivileged(&[], &scratch),
        socket: home.join("fsindexd.sock"),
    };
    (inst, visitor)
}

impl Visitor {
    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let mut c = self.runner.command(self.runner.bin("fsctl"));
        c.args(args)
            .arg("--socket")
            .arg(&self.socket)
            .env("FSINDEX_NO_SPAWN", "1")
            .env_remove("FSINDEX_HOME")
            .env_remove("FSINDEX_SOCKET");
        c
    }
    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
}

#[test]
fn machine_wide_mode_never_shows_a_user_what_is_inside_a_folder_they_cannot_open() {
    let Some((t, root)) = system_tree() else {
        return;
    };
    let w = |p: &str, data: &[u8]| write_file(&root, p, data);
    let same = vec![42u8; 20_000];
    w("pub/notes.txt", b"open to all");
    w("pub/copy-one.bin", &same);
    w("pub/copy-two.bin", &same);
    w("pub/sub/deeper.txt", b"also open");
    w("priv/zqhidden-report.txt", &[1u8; 9000]);
    w("priv/zqhidden-inner/zqhidden-deep.bin", &[2u8; 30_000]);
    w("priv/zqhidden-copy.bin", &same);
    // Every other path is readable by all; `priv` belongs to someone else
    // and is 0700.
    change("chmod", &["-R", "a+rX"], &root);
    let private = root.join("priv");
    change("chown", &["-R", "12345:12345"], &private);
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();

    let (inst, visitor) = start_system(t.path(), &root);
    // The socket is open to every user; the index is not.
    let socket = visitor.socket.clone();
    assert_eq!(mode(&socket), 0o666);
    assert_eq!(mode(&t.path().join("home/index.db")) & 0o077, 0);
    assert_eq!(inst.status()["system"], true);
    let r = |p: &str| root.join(p).to_string_lossy().into_owned();
    let mut seen = String::new();
    let mut ask = |args: &[&str]| -> Output {
        let o = visitor.run(args);
        seen.push_str(&text(&o));
        o
    };

    // search: the folder itself is visible (its parent is open), nothing in it.
    let o = ask(&["search", "zqhidden", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = ask(&["search", "priv", "--limit", "0", "--json"]);
    let paths: Vec<String> = json_lines(&o)
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(paths, vec![r("priv")], "only the folder itself");
    let o = ask(&["search", "deeper", "--json"]);
    assert_eq!(json_lines(&o).len(), 1, "{}", text(&o));
    // The same search by root finds them: the filter is per caller.
    let all = inst.search0(&["zqhidden"]);
    assert_eq!(all.len(), 4, "root sees the private entries");

    // stat: a hidden path answers exactly like one that does not exist.
    // (Asked by name, so the name is echoed: kept out of `seen`.)
    let hidden = visitor.run(&["info", &r("priv/zqhidden-report.txt")]);
    let absent = visitor.run(&["info", &r("priv/zqhidden-nothing.txt")]);
    assert_eq!(hidden.status.code(), Some(2));
    assert_eq!(absent.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&hidden.stderr).replace("zqhidden-report", "X"),
        String::from_utf8_lossy(&absent.stderr).replace("zqhidden-nothing", "X"),
    );
    // ls: the folder is listed by its parent, and refuses to be opened.
    let o = ask(&["ls", &r(""), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("priv"));
    let o = ask(&["ls", &r("priv")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // tree and map show the folder, never its content.
    let o = ask(&["tree", &r(""), "--depth", "4"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = ask(&["map", &r(""), "--budget", "4000"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("pub"));

    // du: what GNU du counts when run by the same user (priv's own blocks,
    // not what is inside), and marked incomplete.
    let (bytes, apparent) = util::gnu_du(&visitor.runner, &root);
    let o = ask(&["du", &r(""), "--json"]);
    let du: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(du["bytes"].as_u64(), Some(bytes), "{du}");
    assert_eq!(du["apparent_bytes"].as_u64(), Some(apparent), "{du}");
    assert_eq!(du["incomplete"], true, "{du}");
    let (priv_bytes, _) = util::gnu_du(&visitor.runner, &private);
    let row = du["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == r("priv"))
        .cloned()
        .unwrap();
    assert_eq!(row["bytes"].as_u64(), Some(priv_bytes), "{row}");
    let o = ask(&["du", &r(""), "--all", "--top", "0", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    // dupes: the two open copies are a group; the private copy is not in it.
    let o = ask(&["dupes", &r(""), "--json"]);
    let groups = json_lines(&o);
    assert_eq!(groups.len(), 1, "{}", text(&o));
    assert_eq!(groups[0]["paths"].as_array().unwrap().len(), 2);
    // verify, status, roots: nothing from inside either.
    for args in [
        vec!["verify", &r("")[..]],
        vec!["status", "--json"],
        vec!["roots", "list"],
    ] {
        ask(&args);
    }
    // Changing the daemon is root's.
    let o = ask(&["roots", "add", "/tmp"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("root"));
    let o = ask(&["reload"]);
    assert_eq!(o.status.code(), Some(2));

    // watch: a change inside the private folder is not streamed, one
    // beside it is.
    let mut watch = Watch::subscribe(visitor.cmd(&["watch", &r(""), "--json"]));
    std::fs::write(private.join("zqhidden-new.txt"), b"x").unwrap();
    std::fs::write(root.join("pub/visible-new.txt"), b"x").unwrap();
    let path_has = |ev: &Value, name: &str| ev["path"].as_str().is_some_and(|p| p.contains(name));
    watch.until(Duration::from_secs(10), "event for visible-new", |ev| {
        path_has(ev, "visible-new")
    });
    // Events stream in the order they are applied, so once a change made
    // after both writes has come through, a wrongly streamed private event
    // would have come before it (no sleep on a guess).
    std::fs::write(root.join("pub/visible-barrier.txt"), b"x").unwrap();
    watch.until(Duration::from_secs(10), "event for visible-barrier", |ev| {
        path_has(ev, "visible-barrier")
    });
    let streamed: String = watch.seen.iter().map(|e| format!("{e}\n")).collect();
    assert!(streamed.contains("visible-new"), "{streamed}");
    seen.push_str(&streamed);

    for name in HIDDEN.iter().chain(&["zqhidden-deep", "zqhidden-new"]) {
        assert!(
            !seen.contains(name),
            "the unprivileged caller was shown {name}:\n{seen}"
        );
    }
}

/// Machine-wide mode caches what `lstat` says of watched folders (issue 16);
/// a chmod must still show in the very next unprivileged answer, with no
/// `--sync` and no wait in between: closing a folder hides what is in it
/// at once, opening it shows it at once, as GNU du run by the same user
/// counts.
#[test]
fn machine_wide_mode_sees_a_chmod_in_the_very_next_answer() {
    let Some((t, root)) = system_tree() else {
        return;
    };
    let w = |p: &str, data: &[u8]| write_file(&root, p, data);
    w("open/readme.txt", b"open to all");
    w("open/shut/zqflip-report.txt", &[1u8; 9000]);
    w("open/shut/inner/zqflip-deep.bin", &[2u8; 30_000]);
    w("open/shut/inner/more/zqflip-deeper.bin", &[3u8; 5_000]);
    w("other/side.txt", b"beside");
    change("chmod", &["-R", "a+rX"], &root);
    let shut = root.join("open/shut");
    let inner = shut.join("inner");
    change("chown", &["-R", "12345:12345"], &shut);

    let (_inst, visitor) = start_system(t.path(), &root);
    // Everything the visitor is told, checked against what it could see.
    let check = |folder: &Path, open: bool, round: &str| {
        for top in [&root, &root.join("open")] {
            let (bytes, apparent) = util::gnu_du(&visitor.runner, top);
            let o = visitor.run(&["du", &top.to_string_lossy(), "--json"]);
            assert!(o.status.success(), "{round}: {}", text(&o));
            let du: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(du["bytes"].as_u64(), Some(bytes), "{round}: {du}");
            assert_eq!(
                du["apparent_bytes"].as_u64(),
                Some(apparent),
                "{round}: {du}"
            );
            assert_eq!(du["incomplete"], !open, "{round}: {du}");
        }
        let o = visitor.run(&["search", "zqflip", "--limit", "0", "--json"]);
        let found: Vec<String> = json_lines(&o)
            .iter()
            .map(|v| v["path"].as_str().unwrap().to_owned())
            .collect();
        let inside = |p: &String| Path::new(p).starts_with(folder);
        if open {
            assert_eq!(found.len(), 3, "{round}: {found:?}");
        } else {
            assert!(!found.iter().any(inside), "{round}: {found:?}");
        }
        let o = visitor.run(&["ls", &folder.to_string_lossy(), "--json"]);
        assert_eq!(o.status.success(), open, "{round}: {}", text(&o));
    };

    // Warm: every folder open and examined once.
    check(&shut, true, "all open");
    for (folder, round) in [(&shut, 1), (&inner, 2), (&shut, 3)] {
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o750)).unwrap();
        check(
            folder,
            false,
            &format!("round {round}: {} closed", folder.display()),
        );
        // Asked twice: the second answer comes from what the first learnt.
        check(folder, false, &format!("round {round}: again"));
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
        check(
            folder,
            true,
            &format!("round {round}: {} opened", folder.display()),
        );
        check(folder, true, &format!("round {round}: again"));
    }
    // chown: the visitor (nobody) made owner of a folder with no bits for
    // its owner is shut out of it, as the kernel decides.
    std::fs::set_permissions(&shut, std::fs::Permissions::from_mode(0o055)).unwrap();
    check(&shut, true, "0055, owned by someone else");
    Command::new("chown")
        .arg(format!("{}", util::NOBODY))
        .arg(&shut)
        .status()
        .unwrap();
    check(&shut, false, "0055, owned by the visitor");
}

fn grpc_status(url: &str, token: Option<&str>) -> Result<(), tonic::Code> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let target = fsindex_client::Target::Url {
            url: url.to_owned(),
            token: token.map(str::to_owned),
        };
        let mut c = fsindex_client::connect(&target).await.unwrap();
        c.status(fsindex_proto::v1::StatusRequest::default())
            .await
            .map(|_| ())
            .map_err(|s| s.code())
    })
}

#[test]
fn tcp_refuses_every_request_without_the_right_token() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("hello.txt"), b"hi").unwrap();
    let port = free_port();
    let mut inst = Instance::new(t.path().join("home"), &[&root], Runner::current());
    inst.args = vec!["--listen".into(), format!("127.0.0.1:{port}")];
    inst.start();
    let token_file = inst.home.join("token");
    assert_eq!(mode(&token_file), 0o600, "the token is private");
    let token = std::fs::read_to_string(&token_file).unwrap();
    assert!(token.trim().len() >= 32);
    let url = format!("http://127.0.0.1:{port}");
    assert_eq!(inst.status()["listen"], format!("127.0.0.1:{port}"));

    // The RPC itself: no token, a wrong one, the right one.
    assert_eq!(grpc_status(&url, None), Err(tonic::Code::Unauthenticated));
    assert_eq!(
        grpc_status(
            &url,
            Some("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
        ),
        Err(tonic::Code::Unauthenticated)
    );
    assert_eq!(grpc_status(&url, Some(token.trim())), Ok(()));

    // fsctl: what the user sees.
    let fsctl = |extra: &[&str], env: &[(&str, &str)]| {
        let mut c = Command::new(util::bin_dir().join("fsctl"));
        c.args(["--endpoint", &url])
            .args(extra)
            .args(["search", "hello"])
            .env("FSINDEX_HOME", t.path().join("elsewhere"))
            .env_remove("FSINDEX_TOKEN");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let o = fsctl(&[], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("token"),
        "{}",
        text(&o)
    );
    let o = fsctl(&[], &[("FSINDEX_TOKEN", "wrong")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("wrong token"),
        "{}",
        text(&o)
    );
    let o = fsctl(&["--token-file", token_file.to_str().unwrap()], &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("hello.txt"));
    let o = fsctl(&[], &[("FSINDEX_TOKEN", token.trim())]);
    assert!(o.status.success(), "{}", text(&o));
    inst.stop();

    // A restart keeps the token.
    inst.start();
    assert_eq!(std::fs::read_to_string(&token_file).unwrap(), token);
    assert_eq!(grpc_status(&url, Some(token.trim())), Ok(()));
}

#[test]
fn listening_beyond_loopback_is_refused_unless_the_config_allows_it() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    std::fs::create_dir_all(&root).unwrap();
    let mut inst = Instance::new(t.path().join("home"), &[&root], Runner::current());
    inst.args = vec!["--listen".into(), "0.0.0.0:0".into()];
    let out = inst.run_daemon();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a loopback address"), "{err}");
    assert!(!inst.home.join("fsindexd.sock").exists());

    // In the config file, the error names the line.
    std::fs::write(
        inst.home.join("config.toml"),
        "# comment\nwatch = true\nlisten = \"0.0.0.0:7700\"\n",
    )
    .unwrap();
    inst.args.clear();
    let out = inst.run_daemon();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("config.toml:3:"), "{err}");
    assert!(err.contains("allow_remote"), "{err}");
}

#[test]
fn paths_cannot_escape_a_root_and_do_not_tell_what_exists() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    std::fs::create_dir_all(root.join("inside")).unwrap();
    std::fs::write(root.join("inside/file.txt"), b"x").unwrap();
    std::fs::create_dir_all(t.path().join("outside")).unwrap();
    std::fs::write(t.path().join("outside/real.txt"), b"secret").unwrap();
    symlink(t.path().join("outside"), root.join("link-out")).unwrap();
    let mut inst = Instance::new(t.path().join("home"), &[&root], Runner::current());
    inst.start();
    let r = |p: &str| format!("{}/{p}", root.display());

    // An existing and a missing file beyond `..` or a symlink: the same
    // answer, NOT_FOUND (exit 2), whichever exists.
    for cmd in [
        &["info"][..],
        &["ls"],
        &["du"],
        &["tree"],
        &["map"],
        &["scan"],
        &["verify"],
    ] {
        let ask = |p: &str| {
            let mut a = cmd.to_vec();
            a.push(p);
            inst.fsctl(&a)
        };
        for (real, fake) in [
            (r("../outside/real.txt"), r("../outside/none.txt")),
            (
                r("inside/../../outside/real.txt"),
                r("inside/../../outside/none.txt"),
            ),
            (r("link-out/real.txt"), r("link-out/none.txt")),
        ] {
            let (a, b) = (ask(&real), ask(&fake));
            assert_eq!(a.status.code(), Some(2), "{cmd:?} {real}: {}", text(&a));
            assert_eq!(b.status.code(), Some(2), "{cmd:?} {fake}: {}", text(&b));
            assert_eq!(
                String::from_utf8_lossy(&a.stderr).replace("real", "X"),
                String::from_utf8_lossy(&b.stderr).replace("none", "X"),
                "{cmd:?}: the answer tells whether {real} exists"
            );
        }
    }
    // The same over gRPC directly, where no client resolves anything first.
    let socket = inst.home.join("fsindexd.sock");
    let stat = |p: String| -> (tonic::Code, String) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let target = fsindex_client::Target::Socket(socket.clone());
            let mut c = fsindex_client::connect(&target).await.unwrap();
            let e = c
                .stat(fsindex_proto::v1::StatRequest {
                    path: p.into_bytes(),
                })
                .await
                .unwrap_err();
            (e.code(), e.message().to_owned())
        })
    };
    for (real, fake) in [
        (r("../outside/real.txt"), r("../outside/none.txt")),
        (
            r("inside/../../outside/real.txt"),
            r("inside/../../outside/none.txt"),
        ),
        (r("link-out/real.txt"), r("link-out/none.txt")),
    ] {
        let (a, b) = (stat(real.clone()), stat(fake));
        assert_eq!(a.0, tonic::Code::NotFound, "{real}: {a:?}");
        assert_eq!(b.0, tonic::Code::NotFound);
        assert_eq!(a.1.replace("real", "X"), b.1.replace("none", "X"));
    }

    // The symlink itself is an entry like any other.
    let o = inst.fsctl(&["info", &r("link-out"), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    // Scanning through the symlink would have walked outside the root.
    let o = inst.fsctl(&["scan", &r("link-out"), "--wait"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(inst.search0(&["real.txt"]).is_empty());
}

#[test]
fn the_instance_files_are_private() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    std::fs::create_dir_all(&root).unwrap();
    let home = t.path().join("home");
    let mut inst = Instance::new(home.clone(), &[&root], Runner::current());
    inst.start();
    assert_eq!(mode(&home), 0o700);
    assert_eq!(mode(&home.join("fsindexd.sock")), 0o600);
    assert_eq!(mode(&home.join("index.db")), 0o600);
    assert_eq!(mode(&home.join("logs")), 0o700);
}

/// A user's made-up path of 40,000 parts: the machine-wide daemon checked
/// each folder above it one level at a time, recursively, and kept every
/// prefix (a stack overflow: the daemon died for every user). It is now
/// not found, and the same daemon answers.
#[test]
fn a_users_very_long_path_neither_kills_nor_swells_a_machine_wide_daemon() {
    let Some((t, root)) = system_tree() else {
        return;
    };
    write_file(&root, "open/readme.txt", b"open to all");
    change("chmod", &["-R", "a+rX"], &root);
    let (inst, visitor) = start_system(t.path(), &root);
    let pid = inst.status()["pid"].clone();
    let long = format!("{}{}", root.display(), "/a".repeat(40_000));
    for cmd in ["info", "du", "ls", "tree", "map"] {
        let o = visitor.run(&[cmd, &long]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("not in the index") || err.contains("cannot see"),
            "{cmd}: {}",
            &err[..err.len().min(300)]
        );
        assert!(err.len() < 2000, "{cmd}: the message is bounded");
    }
    assert_eq!(inst.status()["pid"], pid, "the same daemon answers");
}

// `fsctl cat` in machine-wide mode reads for a user only what the user
// could read with `cat`: a file without read permission for them, or in a
// folder they cannot enter, is refused (the latter as if it did not exist),
// and the oracle is the kernel's answer to the same user's own `cat`.
#[test]
fn machine_wide_mode_reads_a_files_text_only_for_who_may_read_it() {
    let Some((t, root)) = system_tree() else {
        return;
    };
    let w = |p: &str, data: &[u8]| write_file(&root, p, data);
    w("open/notes.txt", b"zqopen notes for everyone");
    w("open/private.txt", b"zqprivate notes of root");
    w("shut/inside.txt", b"zqinside a shut folder");
    change("chmod", &["-R", "a+rX"], &root);
    change("chmod", &["600"], &root.join("open/private.txt"));
    change("chmod", &["700"], &root.join("shut"));

    let (_inst, visitor) = start_system(t.path(), &root);
    for (rel, want) in [
        ("open/notes.txt", Some("zqopen notes for everyone")),
        ("open/private.txt", None),
        ("shut/inside.txt", None),
    ] {
        let p = root.join(rel);
        // The oracle: the visitor's own cat.
        let own = visitor.runner.command("cat").arg(&p).output().unwrap();
        assert_eq!(own.status.success(), want.is_some(), "cat {rel}");
        let o = visitor.run(&["cat", &p.to_string_lossy()]);
        match want {
            Some(t) => {
                assert!(o.status.success(), "{rel}: {}", text(&o));
                assert_eq!(String::from_utf8_lossy(&o.stdout).trim_end(), t);
            }
            None => {
                assert!(!o.status.success(), "{rel}: {}", text(&o));
                assert!(
                    o.stdout.is_empty() && !text(&o).contains("zq"),
                    "{rel}: {}",
                    text(&o)
                );
            }
        }
    }
    let o = visitor.run(&["cat", &root.join("open/private.txt").to_string_lossy()]);
    assert!(
        text(&o).contains("you may not read this file"),
        "{}",
        text(&o)
    );
}
