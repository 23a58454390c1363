//! `fsctl service`, completions and man pages. This container runs no
//! systemd: install must write the unit where systemd would look, say that
//! systemd is not running, and succeed. On a machine that does run systemd
//! the user-unit test writes under `FSINDEX_SERVICE_ROOT` instead, so a test
//! never enables a real service.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::util::bin_dir;

const BOOTED: &str = "/run/systemd/system";

/// fsctl with a private HOME, XDG_CONFIG_HOME and FSINDEX_HOME under `tmp`.
fn fsctl(tmp: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin_dir().join("fsctl"));
    cmd.args(args)
        .env("HOME", tmp.join("home"))
        .env("XDG_CONFIG_HOME", tmp.join("config"))
        .env("FSINDEX_HOME", tmp.join("instance"))
        .env("FSINDEX_NO_SPAWN", "1")
        .env_remove("FSINDEX_SOCKET")
        .env_remove("FSINDEX_SERVICE_ROOT");
    cmd
}

fn ok(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run fsctl");
    assert_ok(&out);
    String::from_utf8(out.stdout).unwrap()
}

fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn json(cmd: &mut Command) -> Value {
    let text = ok(cmd);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad JSON ({e}): {text}"))
}

fn daemon_path() -> PathBuf {
    std::fs::canonicalize(bin_dir().join("fsindexd")).unwrap()
}

fn exec_start(unit: &str) -> &str {
    unit.lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("an ExecStart= line")
}

/// `systemd-analyze verify` on a written unit, when the tool is here:
/// exit 0 and no complaint about the unit.
fn verify_unit(unit: &Path, user: bool, tmp: &Path) {
    if Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_err()
    {
        return;
    }
    let runtime = tmp.join("xdg-runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    let mut cmd = Command::new("systemd-analyze");
    if user {
        cmd.arg("--user");
    }
    let out = cmd
        .args(["verify", "--man=no"])
        .arg(unit)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("XDG_CONFIG_HOME", tmp.join("config"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !err.contains("fsindexd"),
        "systemd-analyze verify {}: {}\n{err}",
        unit.display(),
        out.status
    );
}

#[test]
fn service_install_writes_the_user_unit_and_reports_no_systemd() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let booted = Path::new(BOOTED).exists();
    let prefix = tmp.join("prefix");
    let with_env = |args: &[&str]| {
        let mut c = fsctl(tmp, args);
        if booted {
            c.env("FSINDEX_SERVICE_ROOT", &prefix);
        }
        c
    };
    let mut unit = tmp.join("config/systemd/user/fsindexd.service");
    if booted {
        unit = prefix.join(unit.strip_prefix("/").unwrap());
    }

    let first = ok(&mut with_env(&["service", "install"]));
    assert!(
        first.contains(&format!("wrote {}", unit.display())),
        "{first}"
    );
    if booted {
        assert!(first.contains("FSINDEX_SERVICE_ROOT is set"), "{first}");
    } else {
        assert!(first.contains("systemd is not running"), "{first}");
    }
    let text = std::fs::read_to_string(&unit).expect("the unit was written");
    assert_eq!(Path::new(exec_start(&text)), daemon_path());
    assert!(text.contains("Type=notify\n") && text.contains("WantedBy=default.target\n"));
    verify_unit(&unit, true, tmp);

    // Idempotent: the second install finds it unchanged.
    let second = ok(&mut with_env(&["service", "install"]));
    assert!(
        second.contains(&format!("unchanged {}", unit.display())),
        "{second}"
    );
    assert_eq!(std::fs::read_to_string(&unit).unwrap(), text);

    let st = json(&mut with_env(&["service", "status", "--json"]));
    assert_eq!(st["installed"], true, "{st}");
    assert_eq!(st["up_to_date"], true, "{st}");
    assert_eq!(st["manager"], "systemd");
    assert_eq!(st["scope"], "user");
    assert_eq!(st["unit"], unit.to_str().unwrap());
    assert_eq!(st["manager_running"], false);
    assert_eq!(st["enabled"], false);
    assert_eq!(st["exec"], daemon_path().to_str().unwrap());
    let human = ok(&mut with_env(&["service", "status"]));
    assert!(
        human.contains(&format!("{} (installed, up to date)", unit.display())),
        "{human}"
    );

    // A unit that differs (an older fsindexd path) is reported, then rewritten.
    std::fs::write(&unit, text.replace(exec_start(&text), "/old/fsindexd")).unwrap();
    let st = json(&mut with_env(&["service", "status", "--json"]));
    assert_eq!(st["up_to_date"], false, "{st}");
    let again = json(&mut with_env(&["service", "install", "--json"]));
    assert_eq!(again["changed"], true, "{again}");
    assert_eq!(std::fs::read_to_string(&unit).unwrap(), text);

    let gone = ok(&mut with_env(&["service", "uninstall"]));
    assert!(
        gone.contains(&format!("removed {}", unit.display())),
        "{gone}"
    );
    assert!(!unit.exists());
    let twice = json(&mut with_env(&["service", "uninstall", "--json"]));
    assert_eq!(twice["removed"], false, "{twice}");
    let st = json(&mut with_env(&["service", "status", "--json"]));
    assert_eq!(st["installed"], false, "{st}");
}

#[test]
fn service_install_system_unit_under_a_root_prefix() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let prefix = tmp.join("root");
    let run = |args: &[&str]| {
        let mut c = fsctl(tmp, args);
        c.env("FSINDEX_SERVICE_ROOT", &prefix);
        c
    };
    let unit = prefix.join("etc/systemd/system/fsindexd.service");

    let out = json(&mut run(&["service", "install", "--system", "--json"]));
    assert_eq!(out["scope"], "system", "{out}");
    assert_eq!(out["unit"], unit.to_str().unwrap());
    assert_eq!(out["changed"], true);
    let steps: Vec<&str> = out["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        steps.contains(&format!("wrote {}", unit.display()).as_str()),
        "{steps:?}"
    );
    assert!(
        steps.iter().any(|s| s.contains("not contacting systemd")),
        "{steps:?}"
    );

    let text = std::fs::read_to_string(&unit).unwrap();
    assert_eq!(
        exec_start(&text),
        format!("{} --system", daemon_path().display())
    );
    for line in [
        "Type=notify",
        "WatchdogSec=90s",
        "Restart=on-failure",
        "StateDirectory=fsindex",
        "RuntimeDirectory=fsindex",
        "LogsDirectory=fsindex",
        "ProtectSystem=strict",
        "ProtectHome=read-only",
        "PrivateTmp=yes",
        "NoNewPrivileges=yes",
        "IOSchedulingClass=idle",
        "WantedBy=multi-user.target",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line}:\n{text}");
    }
    verify_unit(&unit, false, tmp);

    let again = json(&mut run(&["service", "install", "--system", "--json"]));
    assert_eq!(again["changed"], false, "{again}");
    let st = json(&mut run(&["service", "status", "--system", "--json"]));
    assert_eq!(st["installed"], true, "{st}");
    assert_eq!(st["up_to_date"], true, "{st}");

    // An enablement link left by `systemctl enable` goes with the unit.
    let wants = prefix.join("etc/systemd/system/multi-user.target.wants");
    std::fs::create_dir_all(&wants).unwrap();
    std::os::unix::fs::symlink(&unit, wants.join("fsindexd.service")).unwrap();
    let st = json(&mut run(&["service", "status", "--system", "--json"]));
    assert_eq!(st["enabled"], true, "{st}");
    let gone = ok(&mut run(&["service", "uninstall", "--system"]));
    assert!(
        gone.contains(&format!("removed {}", unit.display())),
        "{gone}"
    );
    assert!(!unit.exists());
    assert!(wants.join("fsindexd.service").symlink_metadata().is_err());
}

#[test]
fn service_completions_and_man_pages_mention_real_subcommands() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = ok(&mut fsctl(tmp, &["completions", shell]));
        assert!(
            script.contains("search") && script.contains("service"),
            "{shell}: {script}"
        );
    }
    let bad = fsctl(tmp, &["completions", "nosuchshell"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));

    let page = ok(&mut fsctl(tmp, &["man"]));
    assert!(page.contains(".TH fsctl 1"), "{page}");
    assert!(page.contains("search") && page.contains("service"));

    let dir = tmp.join("man");
    let listed = ok(&mut fsctl(tmp, &["man", "--dir", dir.to_str().unwrap()]));
    for name in ["fsctl.1", "fsctl-search.1", "fsctl-service-install.1"] {
        let path = dir.join(name);
        assert!(
            listed.contains(&format!("wrote {}", path.display())),
            "{listed}"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(".ie") && text.contains(".SH NAME"),
            "{name}"
        );
    }
    let install = std::fs::read_to_string(dir.join("fsctl-service-install.1")).unwrap();
    assert!(install.contains("\\-\\-system"), "{install}");

    // The daemon's page, from its own clap definition.
    let out = Command::new(bin_dir().join("fsindexd"))
        .arg("--generate-man")
        .arg(&dir)
        .env("FSINDEX_HOME", tmp.join("instance"))
        .output()
        .unwrap();
    assert_ok(&out);
    let page = std::fs::read_to_string(dir.join("fsindexd.1")).unwrap();
    assert!(
        page.contains(".TH fsindexd 1") && page.contains("\\-\\-root"),
        "{page}"
    );
    assert!(
        !page.contains("generate\\-man"),
        "the packagers' flag stays hidden"
    );
}

/// Each thread of a process: name, tid and nice value
/// (`/proc/PID/task/TID/stat`, field 19).
fn thread_nice(pid: u64) -> Vec<(String, String, i64)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_owned();
        // After ") ": state is field 3, nice field 19.
        let nice = stat[close + 2..]
            .split_whitespace()
            .nth(16)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        out.push((name, task.file_name().to_string_lossy().into_owned(), nice));
    }
    out
}

#[test]
fn background_workers_run_at_low_priority_and_requests_do_not() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    crate::util::wide_tree(&root, 20, 20);
    let mut inst = crate::util::Instance::new(
        t.path().join("home"),
        &[&root],
        crate::util::Runner::current(),
    );
    inst.start();
    let pid = inst.status()["pid"].as_u64().unwrap();
    let threads = thread_nice(pid);
    let thread = |name: &str| {
        threads
            .iter()
            .find(|(n, _, _)| n == name)
            .cloned()
            .unwrap_or_else(|| panic!("no thread {name}: {threads:?}"))
    };
    // Background workers run at nice 19 and idle I/O; the scanner thread
    // keeps the daemon's own priority, for the scans a client waits on,
    // and runs the others on a thread that lowers itself (the walk's
    // threads during such scans are checked in `priority.rs`).
    for worker in ["fsindex-content", "fsindex-media"] {
        assert_eq!(thread(worker).2, 19, "{worker}: {threads:?}");
        if let Ok(o) = Command::new("ionice")
            .args(["-p", &thread(worker).1])
            .output()
        {
            assert_eq!(
                String::from_utf8_lossy(&o.stdout).trim(),
                "idle",
                "{worker}"
            );
        }
    }
    assert_eq!(thread("fsindex-scan").2, 0, "{threads:?}");
    assert_eq!(thread("fsindex-writer").2, 0, "{threads:?}");
    assert_eq!(thread("tokio-rt-worker").2, 0, "{threads:?}");
}
