//! Who sees what in the fleet: database roles mapped to users of a host
//! (`fsctl fleet grant`) see, through PostgreSQL's row-level security,
//! exactly what each user may see on that host. The oracle is GNU `find`
//! run as that user (`setpriv` to its uid and groups: the kernel decides
//! what it may open), before and after a `chmod` and a `chown` on the host
//! ship (as root: to own folders as other users, and to run as them). And a
//! fleet schema of version 1, rows without gates, upgraded in place.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

use crate::util::*;

/// A user of the host, and the database role mapped to it.
struct User {
    role: &'static str,
    password: &'static str,
    uid: u32,
    /// Primary group first.
    gids: &'static [u32],
}

const ALICE: User = User {
    role: "alice_db",
    password: "alice-pw",
    uid: 7001,
    gids: &[7001],
};
const BOB: User = User {
    role: "bob_db",
    password: "bob-pw",
    uid: 7002,
    gids: &[7002, 7100],
};
/// Mapped to alice's uid, but on another host.
const CAROL: User = User {
    role: "carol_db",
    password: "carol-pw",
    uid: 7001,
    gids: &[7001],
};

/// What `user`'s own `find` lists under `root` (the root itself left out).
fn find_as(user: &User, root: &Path) -> BTreeSet<String> {
    let groups: Vec<String> = user.gids.iter().map(u32::to_string).collect();
    let out = Command::new("setpriv")
        .arg(format!("--reuid={}", user.uid))
        .arg(format!("--regid={}", user.gids[0]))
        .arg(format!("--groups={}", groups.join(",")))
        .args(["--", "find"])
        .arg(root)
        .args(["-mindepth", "1", "-print0"])
        .current_dir("/")
        .output()
        .unwrap();
    out.stdout
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

/// `du -s -B1` and `du -s -b` of `path` run as `user` (a folder it cannot
/// read counts its own blocks, as the fleet's du must for its role).
fn du_as(user: &User, path: &Path) -> (u64, u64) {
    let groups: Vec<String> = user.gids.iter().map(u32::to_string).collect();
    let get = |flag: &str| -> u64 {
        let out = Command::new("setpriv")
            .arg(format!("--reuid={}", user.uid))
            .arg(format!("--regid={}", user.gids[0]))
            .arg(format!("--groups={}", groups.join(",")))
            .args(["--", "du", "-s", flag])
            .arg(path)
            .current_dir("/")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        text.split_whitespace().next().unwrap().parse().unwrap()
    };
    (get("-B1"), get("-b"))
}

/// `fsctl fleet du HOST:PATH` as the role behind `url`: bytes, apparent.
fn fleet_du(inst: &Instance, url: &str, path: &Path) -> (u64, u64) {
    let target = format!("h1:{}", path.display());
    let out = fleet(inst, url, &["du", &target, "--json"]);
    assert!(out.status.success(), "fleet du: {}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v["bytes"].as_u64().unwrap(),
        v["apparent_bytes"].as_u64().unwrap(),
    )
}

/// `fsctl fleet ARGS --database URL`.
fn fleet(inst: &Instance, url: &str, args: &[&str]) -> Output {
    let mut a = vec!["fleet"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--database", url]);
    inst.fsctl(&a)
}

/// Every path of `host` that the role behind `url` sees in the fleet (a
/// query that excludes only a name no entry has).
fn fleet_sees(inst: &Instance, url: &str, host: &str) -> BTreeSet<String> {
    let out = fleet(
        inst,
        url,
        &["search", "!zqq-no-such-name", "--host", host, "--json"],
    );
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "fleet search: {}",
        text(&out)
    );
    json_lines(&out)
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .collect()
}

fn role_url(pg: &Postgres, user: &User) -> String {
    format!(
        "postgresql://{}:{}@127.0.0.1:{}/postgres",
        user.role, user.password, pg.port
    )
}

fn chown(args: &[&str], path: &Path) {
    assert!(
        Command::new("chown")
            .args(args)
            .arg(path)
            .status()
            .unwrap()
            .success()
    );
}

fn chmod(mode: u32, path: &Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Waits until each user's role sees in the fleet what its `find` lists,
/// and the superuser everything root's does.
fn converge(inst: &Instance, pg: &Postgres, root: &Path, when: &str) {
    let mut diff = String::new();
    let ok = poll_until(Duration::from_secs(30), || {
        diff.clear();
        for user in [&ALICE, &BOB] {
            let fleet = fleet_sees(inst, &role_url(pg, user), "h1");
            let find = find_as(user, root);
            if fleet != find {
                diff += &format!(
                    "{}: fleet only {:#?}, find only {:#?}\n",
                    user.role,
                    fleet.difference(&find).collect::<Vec<_>>(),
                    find.difference(&fleet).collect::<Vec<_>>()
                );
            }
        }
        let all = fleet_sees(inst, &pg.url_with_password(), "h1");
        let everything: BTreeSet<String> = find_oracle(&Runner::current(), root)
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        if all != everything {
            diff += "the superuser does not see every entry\n";
        }
        diff.is_empty()
    });
    assert!(ok, "{when}:\n{diff}");
}

#[test]
fn mapped_roles_see_in_the_fleet_what_their_users_see_on_the_host() {
    if !is_root() {
        eprintln!("skipped: visibility is tested as root (folders owned by other users)");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    chmod(0o755, t.path());
    let root = t.path().join("tree");
    let w = |rel: &str| write_file(&root, rel, rel.as_bytes());
    w("pub/readme.txt");
    w("pub/sub/a.txt");
    w("pub/deep/locked/x.txt");
    w("alice/diary.txt");
    w("alice/open/inner.txt");
    w("team/plan.txt");
    w("team/private/secret.txt");
    w("bob/notes.txt");
    Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(&root)
        .status()
        .unwrap();
    // alice's own folder, closed to others; a folder open to all inside it.
    chown(&["-R", "7001:7001"], &root.join("alice"));
    chmod(0o700, &root.join("alice"));
    // The team's folder: alice owns it, bob is in its group 7100.
    chown(&["-R", "7001:7100"], &root.join("team"));
    chmod(0o750, &root.join("team"));
    chmod(0o700, &root.join("team/private"));
    // bob's folder: others may pass through but not list it.
    chown(&["-R", "7002:7002"], &root.join("bob"));
    chmod(0o711, &root.join("bob"));
    // root's own, deep inside open folders.
    chmod(0o700, &root.join("pub/deep/locked"));

    let mut pg = Postgres::start();
    let home = t.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[fleet]\ndatabase = \"{}\"\nhost = \"h1\"\npassword_file = \"{}\"\n",
            pg.url(),
            pg.password_file.display()
        ),
    )
    .unwrap();
    let mut inst = Instance::new(home, &[root.as_path()], Runner::current());
    let admin = pg.url_with_password();
    let out = fleet(&inst, &admin, &["init", "--json"]);
    assert!(out.status.success(), "fleet init: {}", text(&out));
    for user in [&ALICE, &BOB, &CAROL] {
        pg.psql(&format!(
            "CREATE ROLE {} LOGIN PASSWORD '{}'",
            user.role, user.password
        ));
    }
    for user in [&ALICE, &BOB] {
        let gids: Vec<String> = user.gids.iter().map(u32::to_string).collect();
        let uid = user.uid.to_string();
        let gids = gids.join(",");
        let out = fleet(
            &inst,
            &admin,
            &[
                "grant", user.role, "--host", "h1", "--uid", &uid, "--gid", &gids, "--json",
            ],
        );
        assert!(out.status.success(), "grant: {}", text(&out));
    }
    // carol is alice on another host: nothing of h1 is hers.
    let out = fleet(
        &inst,
        &admin,
        &[
            "grant", "carol_db", "--host", "h2", "--uid", "7001", "--gid", "7001",
        ],
    );
    assert!(out.status.success(), "grant: {}", text(&out));
    // A role that does not exist is named, not created.
    let out = fleet(
        &inst,
        &admin,
        &[
            "grant",
            "nobody_db",
            "--host",
            "h1",
            "--uid",
            "1",
            "--gid",
            "1",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no role nobody_db"), "{}", text(&out));
    let roles = fleet(&inst, &admin, &["roles", "--json"]);
    let listed: Vec<Value> = json_lines(&roles);
    assert_eq!(listed.len(), 3, "{}", text(&roles));
    assert!(
        listed
            .iter()
            .any(|v| v["role"] == "bob_db" && v["gids"] == serde_json::json!([7002, 7100])),
        "{}",
        text(&roles)
    );

    inst.start();
    converge(&inst, &pg, &root, "after the first ship");
    // What each sees, spelled out (the oracle agrees, above).
    let bob = fleet_sees(&inst, &role_url(&pg, &BOB), "h1");
    let r = |p: &str| root.join(p).to_string_lossy().into_owned();
    assert!(
        bob.contains(&r("team/plan.txt")),
        "bob is in the team's group"
    );
    assert!(
        bob.contains(&r("team/private")),
        "the folder, not what is in it"
    );
    assert!(!bob.contains(&r("team/private/secret.txt")));
    assert!(!bob.contains(&r("alice/diary.txt")));
    assert!(!bob.contains(&r("alice/open/inner.txt")), "closed above");
    assert!(!bob.contains(&r("pub/deep/locked/x.txt")));
    let alice = fleet_sees(&inst, &role_url(&pg, &ALICE), "h1");
    assert!(alice.contains(&r("team/private/secret.txt")));
    assert!(
        !alice.contains(&r("bob/notes.txt")),
        "x without r: not listed"
    );
    let carol = fleet_sees(&inst, &role_url(&pg, &CAROL), "h1");
    assert!(carol.is_empty(), "a role mapped to another host: {carol:?}");
    // The functions that run as the schema's owner answer a role only for
    // itself: bob cannot borrow alice's view.
    let psql_as = |user: &User, sql: &str| -> Output {
        Command::new("psql")
            .arg(role_url(&pg, user))
            .args(["-X", "-A", "-t", "-c", sql])
            .output()
            .unwrap()
    };
    let out = psql_as(
        &BOB,
        "SELECT count(*) FROM fsindex.search('alice_db', NULL, '[]', 0)",
    );
    assert!(
        !out.status.success() && text(&out).contains("not a role of this session"),
        "{}",
        text(&out)
    );
    let out = psql_as(&BOB, "SELECT count(*) FROM fsindex.open_gates('alice_db')");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "0",
        "{}",
        text(&out)
    );
    // Nor read the rows around the policies.
    let out = psql_as(
        &BOB,
        "SELECT count(*) FROM fsindex.entries WHERE path LIKE '%secret%'",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "0",
        "{}",
        text(&out)
    );

    // du as each role counts what its user's own du counts.
    for user in [&ALICE, &BOB] {
        for p in [root.clone(), root.join("team"), root.join("alice")] {
            assert_eq!(
                fleet_du(&inst, &role_url(&pg, user), &p),
                du_as(user, &p),
                "fleet du of {} as {}",
                p.display(),
                user.role
            );
        }
    }

    // chmod on the host: alice opens her folder, the team's closes to its
    // group, and a folder inside an open one closes.
    chmod(0o755, &root.join("alice"));
    chmod(0o700, &root.join("team"));
    chmod(0o700, &root.join("pub/sub"));
    converge(&inst, &pg, &root, "after chmod");
    let bob = fleet_sees(&inst, &role_url(&pg, &BOB), "h1");
    assert!(bob.contains(&r("alice/diary.txt")));
    assert!(!bob.contains(&r("team/plan.txt")));

    // chown alone (the mode unchanged): the team's folder given to bob.
    chown(&["7002:7002"], &root.join("team"));
    converge(&inst, &pg, &root, "after chown");
    let bob = fleet_sees(&inst, &role_url(&pg, &BOB), "h1");
    assert!(bob.contains(&r("team/plan.txt")));

    inst.stop();
    pg.halt();
}

/// A fleet schema of version 1 (rows without gates, shipped by an older
/// daemon) is upgraded by `fsctl fleet init`: until then this daemon says
/// what to run; after, the host reconciles once, its rows carry their
/// gates, and a stale row of the old shipping is gone.
#[test]
fn a_fleet_schema_of_version_1_upgrades_and_every_host_reships() {
    let t = tempfile::tempdir().unwrap();
    chmod(0o755, t.path());
    let root = t.path().join("tree");
    write_file(&root, "open/a.txt", b"a");
    write_file(&root, "shut/b.txt", b"b");
    chmod(0o700, &root.join("shut"));
    let pg = Postgres::start();
    // Version 1 as an older fsctl made it, with one row an older daemon
    // shipped for this host (and its place in the journal).
    let v1 = include_str!("../../../migrations/fleet/0001_fleet.sql");
    pg.psql(&format!(
        "CREATE SCHEMA fsindex;
         CREATE TABLE fsindex.schema_version (version integer PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now());
         {v1}
         INSERT INTO fsindex.schema_version (version) VALUES (1);
         INSERT INTO fsindex.hosts (host, epoch, seq) VALUES ('h1', 7, 3);
         INSERT INTO fsindex.entries (host, id, root, rel, path, folded, name, kind, size,
             blocks, mtime_ns, dev, ino, nlink, mode, flags)
         VALUES ('h1', 999999, '/gone', 'x', '/gone/x', 'x', 'x', 0, 1, 0, 0, 0, 0, 1, 33188, 0);"
    ));
    let home = t.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[fleet]\ndatabase = \"{}\"\nhost = \"h1\"\npassword_file = \"{}\"\n",
            pg.url(),
            pg.password_file.display()
        ),
    )
    .unwrap();
    let mut inst = Instance::new(home, &[root.as_path()], Runner::current());
    inst.start();
    let mut last = Value::Null;
    let told = poll_until(Duration::from_secs(30), || {
        last = inst.status()["fleet"].clone();
        last["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("version 1") && e.contains("fsctl fleet init"))
    });
    assert!(told, "status: {last}");
    let admin = pg.url_with_password();
    let out = fleet(&inst, &admin, &["init", "--json"]);
    assert!(out.status.success(), "fleet init: {}", text(&out));
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["applied"],
        serde_json::json!([2, 3, 4, 5, 6, 7])
    );
    let everything: BTreeSet<String> = find_oracle(&Runner::current(), &root)
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let shipped = poll_until(Duration::from_secs(30), || {
        fleet_sees(&inst, &admin, "h1") == everything
            && pg.psql("SELECT count(*) FROM fsindex.entries WHERE gate = -1 OR id = 999999") == "0"
    });
    assert!(
        shipped,
        "after the upgrade: {:?}",
        fleet_sees(&inst, &admin, "h1")
    );
    // The private folder is the gate of what is in it.
    let shut = pg.psql(&format!(
        "SELECT (SELECT gate FROM fsindex.entries WHERE path = '{0}/shut/b.txt')
              = (SELECT id FROM fsindex.entries WHERE path = '{0}/shut')",
        root.display()
    ));
    assert_eq!(shut, "t");
    inst.stop();
}
