//! config.toml: an invalid file is refused with its line, at start-up and
//! on reload; SIGHUP and `fsctl reload` apply a valid one without a restart.

use std::process::Command;
use std::time::Duration;

use crate::util::{Instance, Runner, eventually, text};

fn roots_line(paths: &[&std::path::Path]) -> String {
    let quoted: Vec<String> = paths
        .iter()
        .map(|p| format!("{:?}", p.display().to_string()))
        .collect();
    format!("roots = [{}]\n", quoted.join(", "))
}

fn hangup(pid: &str) {
    let sent = Command::new("kill").args(["-HUP", pid]).status().unwrap();
    assert!(sent.success());
}

#[test]
fn an_invalid_config_is_refused_with_its_line_and_the_running_one_stays() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    let b = t.path().join("b");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(a.join("alpha.txt"), b"a").unwrap();
    std::fs::write(b.join("bravo.txt"), b"b").unwrap();
    let home = t.path().join("home");
    let mut inst = Instance::new(home.clone(), &[], Runner::current());
    let config = home.join("config.toml");

    // At start-up: the daemon does not start, and says where and why.
    std::fs::write(
        &config,
        format!("{}hashing = \"sometimes\"\n", roots_line(&[&a])),
    )
    .unwrap();
    let out = inst.run_daemon();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("config.toml:2:"), "{err}");
    assert!(err.contains("sometimes"), "{err}");

    std::fs::write(&config, roots_line(&[&a])).unwrap();
    inst.start();
    assert_eq!(inst.search0(&["alpha"]).len(), 1);
    let pid = inst.status()["pid"].as_u64().unwrap().to_string();

    // A typo in a key, on line 3: refused by reload, nothing changes.
    std::fs::write(
        &config,
        format!(
            "{}# the next line is wrong\nrots = [\"{}\"]\n",
            roots_line(&[&a]),
            b.display()
        ),
    )
    .unwrap();
    let o = inst.fsctl(&["reload"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("config.toml:3:"), "{err}");
    assert!(err.contains("rots"), "{err}");
    // SIGHUP with the same file: logged, and the daemon runs on.
    hangup(&pid);
    let log_dir = home.join("logs");
    let logged = || {
        std::fs::read_dir(&log_dir)
            .unwrap()
            .flatten()
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect::<String>()
    };
    eventually(Duration::from_secs(10), "no SIGHUP error logged", || {
        logged().contains("SIGHUP: config not reloaded")
    });
    assert!(logged().contains("config.toml:3:"), "{}", logged());
    let status = inst.status();
    assert_eq!(status["pid"].as_u64().unwrap().to_string(), pid);
    assert_eq!(status["roots"].as_array().unwrap().len(), 1);
    assert!(inst.search0(&["bravo"]).is_empty());

    // SIGHUP with a new root: it is scanned and searchable, same daemon.
    std::fs::write(&config, roots_line(&[&a, &b])).unwrap();
    hangup(&pid);
    eventually(
        Duration::from_secs(20),
        "the new root was not indexed",
        || inst.search0(&["bravo"]).len() == 1,
    );
    inst.wait_ready();
    assert_eq!(inst.search0(&["alpha"]).len(), 1, "the index was kept");
    assert_eq!(inst.status()["pid"].as_u64().unwrap().to_string(), pid);

    // fsctl reload: dropping a root removes it, and says so.
    std::fs::write(&config, roots_line(&[&b])).unwrap();
    let o = inst.fsctl(&["reload"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("removed root"), "{}", text(&o));
    assert!(inst.search0(&["alpha"]).is_empty());
    assert_eq!(inst.search0(&["bravo"]).len(), 1);
    let o = inst.fsctl(&["reload"]);
    assert!(text(&o).contains("no changes"), "{}", text(&o));

    // Exclusions: a bad glob is refused with the reason; a good one takes
    // the file out of the index (a rescan, same daemon).
    std::fs::write(
        &config,
        format!("{}excludes = [\"a[\"]\n", roots_line(&[&b])),
    )
    .unwrap();
    let o = inst.fsctl(&["reload"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("config.toml:2: excludes"), "{}", text(&o));
    std::fs::write(
        &config,
        format!("{}excludes = [\"bravo*\"]\n", roots_line(&[&b])),
    )
    .unwrap();
    let o = inst.fsctl(&["reload"]);
    assert!(o.status.success(), "{}", text(&o));
    eventually(
        Duration::from_secs(20),
        "the excluded file stayed in the index",
        || inst.search0(&["bravo"]).is_empty(),
    );
    assert_eq!(inst.status()["pid"].as_u64().unwrap().to_string(), pid);
}
