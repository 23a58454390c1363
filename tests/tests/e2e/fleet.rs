//! The fleet: daemons ship their indexes into a real PostgreSQL
//! (`util::Postgres`: initdb + pg_ctl on 127.0.0.1), and `fsctl fleet`
//! answers for every host. Oracles: each host's own `fsctl --json`
//! answers, GNU du, GNU find, the test's own grouping of files by their
//! bytes, and the database's rows read back with psql.
//!
//! Each test starts its own server (about a second); the daemons run as
//! the test user, PostgreSQL as `nobody` under root.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::*;

/// A host of the test fleet: its tree and its daemon.
struct Host {
    name: String,
    tree: PathBuf,
    inst: Instance,
}

/// Writes config.toml with `[fleet]` for `host` (password from a file).
fn fleet_config(home: &Path, url: &str, host: &str, password_file: &Path) {
    std::fs::create_dir_all(home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[fleet]\ndatabase = \"{url}\"\nhost = \"{host}\"\npassword_file = \"{}\"\n",
            password_file.display()
        ),
    )
    .unwrap();
}

fn host(tmp: &Path, pg: &Postgres, name: &str) -> Host {
    let tree = tmp.join(name).join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let home = tmp.join(name).join("home");
    fleet_config(&home, &pg.url(), name, &pg.password_file);
    let inst = Instance::new(home, &[tree.as_path()], Runner::current());
    Host {
        name: name.to_owned(),
        tree,
        inst,
    }
}

/// `fsctl fleet ARGS` against `pg` (no daemon needed).
pub(super) fn fleet(inst: &Instance, pg: &Postgres, args: &[&str]) -> std::process::Output {
    let mut a = vec!["fleet"];
    a.extend_from_slice(args);
    let url = pg.url_with_password();
    a.extend_from_slice(&["--database", &url]);
    inst.fsctl(&a)
}

fn fleet_init(inst: &Instance, pg: &Postgres) {
    let out = fleet(inst, pg, &["init", "--json"]);
    assert!(out.status.success(), "fleet init: {}", text(&out));
}

/// The daemon's fleet link, from `fsctl status --json`.
fn link(inst: &Instance) -> Value {
    inst.status()["fleet"].clone()
}

/// Waits until the host's link is connected and has shipped every batch.
pub(super) fn wait_current(inst: &Instance) {
    let mut last = Value::Null;
    let ok = poll_until(Duration::from_secs(60), || {
        last = link(inst);
        last["connected"] == true && last["lag_batches"] == 0 && last["state"] == "current"
    });
    assert!(ok, "fleet link not current: {last}");
}

/// A search result as both sides print it, with the host.
type Hit = (String, String, String, String, u64, String);

fn hits(host: &str, lines: &[Value]) -> BTreeSet<Hit> {
    lines
        .iter()
        .map(|v| {
            (
                host.to_owned(),
                v["path"].as_str().unwrap().to_owned(),
                v["name"].as_str().unwrap().to_owned(),
                v["type"].as_str().unwrap().to_owned(),
                v["size"].as_u64().unwrap(),
                v["mtime"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn local_search(h: &Host, query: &[&str]) -> BTreeSet<Hit> {
    let mut args = vec!["search", "--json", "--limit", "0"];
    args.extend_from_slice(query);
    let out = h.inst.fsctl(&args);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "search {query:?}: {}",
        text(&out)
    );
    hits(&h.name, &json_lines(&out))
}

fn fleet_search(inst: &Instance, pg: &Postgres, query: &[&str]) -> BTreeSet<Hit> {
    let mut args = vec!["search", "--json"];
    args.extend_from_slice(query);
    let out = fleet(inst, pg, &args);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "fleet search {query:?}: {}",
        text(&out)
    );
    json_lines(&out)
        .iter()
        .flat_map(|v| hits(v["host"].as_str().unwrap(), std::slice::from_ref(v)))
        .collect()
}

fn union_search(hosts: &[Host], query: &[&str]) -> BTreeSet<Hit> {
    hosts.iter().flat_map(|h| local_search(h, query)).collect()
}

/// What du says of a path, without the fields only one side has.
fn du_figures(v: &Value) -> (String, u64, u64, u64, u64, String) {
    (
        v["path"].as_str().unwrap().to_owned(),
        v["bytes"].as_u64().unwrap(),
        v["apparent_bytes"].as_u64().unwrap(),
        v["files"].as_u64().unwrap(),
        v["dirs"].as_u64().unwrap(),
        v["type"].as_str().unwrap().to_owned(),
    )
}

fn assert_du_equal(h: &Host, pg: &Postgres, path: &Path) {
    let local = h.inst.json(&["du", path.to_str().unwrap(), "--top", "0"]);
    let target = format!("{}:{}", h.name, path.display());
    let out = fleet(&h.inst, pg, &["du", &target, "--top", "0", "--json"]);
    assert!(out.status.success(), "fleet du {target}: {}", text(&out));
    let remote: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(remote["host"], h.name.as_str());
    assert_eq!(du_figures(&remote), du_figures(&local), "fleet du {target}");
    let kids = |v: &Value| -> BTreeSet<_> {
        v["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(du_figures)
            .collect()
    };
    assert_eq!(kids(&remote), kids(&local), "fleet du {target}: children");
    let (bytes, apparent) = gnu_du(&h.inst.runner, path);
    assert_eq!(
        (
            remote["bytes"].as_u64().unwrap(),
            remote["apparent_bytes"].as_u64().unwrap()
        ),
        (bytes, apparent),
        "fleet du {target} against GNU du"
    );
}

/// Builds one host's tree: names shared across hosts (so a term matches on
/// several), Unicode names in both normal forms and cases, a name that is
/// not UTF-8, a hard link, a symlink, and files whose bytes other hosts
/// also hold.
fn fill(tree: &Path, n: usize) {
    let w = |rel: &str, content: &[u8]| write_file(tree, rel, content);
    w(
        "docs/report-2025.txt",
        format!("report of host {n}").as_bytes(),
    );
    w("docs/notes.md", b"notes");
    w(&format!("docs/host{n}-only.txt"), b"mine");
    w("photos/2025/IMG_0001.jpg", &vec![n as u8; 5000]);
    w("photos/2025/shared.jpg", &[7u8; 12_345]); // on every host
    w("src/proj/main.rs", b"fn main() {}");
    w("Cafe\u{301}.txt", b"decomposed");
    w("ÄRGER.md", b"upper");
    w("straße.txt", b"sharp s");
    w(
        &format!("copies/same-{n}.bin"),
        b"the same bytes on two hosts",
    );
    if n == 1 {
        w("copies/twice-a.dat", b"twice on one host");
        w("copies/twice-b.dat", b"twice on one host");
    }
    if n == 2 {
        std::fs::hard_link(
            tree.join("docs/notes.md"),
            tree.join("photos/notes-link.md"),
        )
        .unwrap();
        std::os::unix::fs::symlink("../docs", tree.join("src/docs-link")).unwrap();
    }
    if n == 3 {
        let bad = std::ffi::OsStr::from_bytes(b"bad\xffname.txt");
        std::fs::write(tree.join("docs").join(bad), b"not utf-8").unwrap();
        w("copies/other.bin", b"the same bytes on two hosts");
    }
}

/// Files grouped by their bytes, the test's own way: groups of two or more
/// inodes, each a sorted list of `host:path`.
fn content_groups(hosts: &[Host]) -> BTreeSet<Vec<String>> {
    use std::os::unix::fs::MetadataExt;
    // bytes -> inode (host, dev, ino) -> its paths
    type Inodes = BTreeMap<(String, u64, u64), Vec<String>>;
    let mut by_bytes: BTreeMap<Vec<u8>, Inodes> = BTreeMap::new();
    for h in hosts {
        let (_, files) = listing(&h.tree);
        for f in files {
            let m = std::fs::symlink_metadata(&f).unwrap();
            if !m.is_file() || m.len() == 0 {
                continue;
            }
            by_bytes
                .entry(std::fs::read(&f).unwrap())
                .or_default()
                .entry((h.name.clone(), m.dev(), m.ino()))
                .or_default()
                .push(format!("{}:{}", h.name, f.to_string_lossy()));
        }
    }
    by_bytes
        .into_values()
        .filter(|inodes| inodes.len() > 1)
        .map(|inodes| {
            let mut paths: Vec<String> = inodes.into_values().flatten().collect();
            paths.sort();
            paths
        })
        .collect()
}

fn fleet_groups(inst: &Instance, pg: &Postgres) -> BTreeSet<Vec<String>> {
    let out = fleet(inst, pg, &["dupes", "--json"]);
    assert!(out.status.success(), "fleet dupes: {}", text(&out));
    json_lines(&out)
        .iter()
        .map(|g| {
            let mut p: Vec<String> = g["paths"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_owned())
                .collect();
            p.sort();
            p
        })
        .collect()
}

/// Every path of `host`'s rows in the database, byte-exact.
fn db_paths(pg: &Postgres, host: &str, tree: &Path) -> BTreeSet<Vec<u8>> {
    let rows = pg.psql(&format!(
        "SELECT encode(rel, 'hex') FROM fsindex.entries WHERE host = '{host}' AND octet_length(rel) > 0"
    ));
    rows.lines()
        .map(|hex| {
            let rel: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let mut p = tree.as_os_str().as_bytes().to_vec();
            p.push(b'/');
            p.extend_from_slice(&rel);
            p
        })
        .collect()
}

/// Waits until the database holds exactly `find`'s paths for a host.
fn wait_converged(pg: &Postgres, h: &Host) {
    let want = find_oracle(&h.inst.runner, &h.tree);
    let mut got = BTreeSet::new();
    let ok = poll_until(Duration::from_secs(30), || {
        got = db_paths(pg, &h.name, &h.tree);
        got == want
    });
    assert!(ok, "{}'s rows in the fleet: {}", h.name, diff(&want, &got));
}

const QUERIES: &[&[&str]] = &[
    &["txt"],
    &["café"],
    &["CAFÉ"],
    &["ärger"],
    &["STRASSE"],
    &["photos", "2025"],
    &["ext:md"],
    &["ext:txt;jpg"],
    &["docs", "!report"],
    &["report|notes"],
    &["host2"],
    &["/proj/"],
    &["name"],
    &["no-such-thing"],
];

/// Three daemons on three trees, three hosts: fleet search, du and dupes
/// equal the union of the hosts' own answers (and GNU du, and the test's
/// own grouping by bytes); churn on one host shows within seconds; a host
/// stopped while its files change converges when it is back; a host whose
/// index is rebuilt reconciles, its older rows dropped.
#[test]
fn fleet_equals_the_union_of_its_hosts() {
    let tmp = tempfile::tempdir().unwrap();
    let pg = Postgres::start();
    let mut hosts: Vec<Host> = (1..=3)
        .map(|n| host(tmp.path(), &pg, &format!("h{n}")))
        .collect();
    fleet_init(&hosts[0].inst, &pg);
    for (i, h) in hosts.iter_mut().enumerate() {
        fill(&h.tree, i + 1);
        h.inst.start();
    }
    for h in &hosts {
        wait_current(&h.inst);
    }

    for q in QUERIES {
        assert_eq!(
            fleet_search(&hosts[0].inst, &pg, q),
            union_search(&hosts, q),
            "fleet search {q:?}"
        );
    }
    for h in &hosts {
        assert_du_equal(h, &pg, &h.tree);
        assert_du_equal(h, &pg, &h.tree.join("photos"));
    }
    // Hashing for dupes runs after shipping: wait for it.
    let want = content_groups(&hosts);
    assert!(want.len() >= 3, "the trees hold duplicates: {want:?}");
    let mut got = BTreeSet::new();
    let ok = poll_until(Duration::from_secs(30), || {
        got = fleet_groups(&hosts[0].inst, &pg);
        got == want
    });
    assert!(ok, "fleet dupes\n want {want:?}\n got  {got:?}");

    // Churn on one host: seen in fleet search within seconds.
    let h1 = &hosts[0];
    let began = Instant::now();
    write_file(&h1.tree, "docs/fresh-arrival.txt", b"new");
    std::fs::rename(h1.tree.join("photos"), h1.tree.join("pictures")).unwrap();
    std::fs::remove_file(h1.tree.join("docs/notes.md")).unwrap();
    let mut seen = BTreeSet::new();
    let ok = poll_until(Duration::from_secs(10), || {
        seen = fleet_search(&h1.inst, &pg, &["fresh-arrival"]);
        seen.len() == 1
    });
    assert!(ok, "a new file not in fleet search within 10 s: {seen:?}");
    eprintln!("churn to fleet search: {:?}", began.elapsed());
    for q in [
        &["pictures"][..],
        &["photos"],
        &["notes"],
        &["2025"],
        &["pictures/2025/shared"],
    ] {
        let mut fleet_hits = BTreeSet::new();
        let ok = poll_until(Duration::from_secs(10), || {
            fleet_hits = fleet_search(&h1.inst, &pg, q);
            fleet_hits == union_search(&hosts, q)
        });
        assert!(ok, "fleet search {q:?} after churn: {fleet_hits:?}");
    }
    wait_converged(&pg, h1);

    // A host stopped while its files change, then back: converges.
    let h3 = &mut hosts[2];
    h3.inst.stop();
    write_file(&h3.tree, "offline/new-while-away.txt", b"x");
    std::fs::rename(h3.tree.join("docs"), h3.tree.join("documents")).unwrap();
    std::fs::remove_dir_all(h3.tree.join("src")).unwrap();
    h3.inst.start();
    wait_converged(&pg, &hosts[2]);
    wait_current(&hosts[2].inst);
    for q in [&["new-while-away"][..], &["documents"], &["main.rs"]] {
        assert_eq!(
            fleet_search(&hosts[0].inst, &pg, q),
            union_search(&hosts, q),
            "fleet search {q:?} after h3 came back"
        );
    }

    // The index rebuilt while away (a new epoch): reconciled, not replayed.
    let h3 = &mut hosts[2];
    let epoch = pg.psql("SELECT epoch FROM fsindex.hosts WHERE host = 'h3'");
    h3.inst.stop();
    for f in ["index.db", "index.db-wal", "index.db-shm"] {
        let _ = std::fs::remove_file(h3.inst.home.join(f));
    }
    write_file(&h3.tree, "rebuilt/after.txt", b"y");
    std::fs::remove_file(h3.tree.join("ÄRGER.md")).unwrap();
    h3.inst.start();
    wait_current(&hosts[2].inst);
    wait_converged(&pg, &hosts[2]);
    assert_ne!(
        pg.psql("SELECT epoch FROM fsindex.hosts WHERE host = 'h3'"),
        epoch,
        "a rebuilt index is a new epoch"
    );
    assert!(link(&hosts[2].inst)["reconciles"].as_u64().unwrap() >= 1);
    assert_du_equal(&hosts[2], &pg, &hosts[2].tree);
    assert_eq!(
        fleet_search(&hosts[0].inst, &pg, &["ärger"]),
        union_search(&hosts, &["ärger"])
    );

    let out = fleet(&hosts[0].inst, &pg, &["hosts", "--json"]);
    let names: Vec<String> = json_lines(&out)
        .iter()
        .map(|v| v["host"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["h1", "h2", "h3"]);
    for h in &mut hosts {
        h.inst.stop();
    }
}

/// Names in many scripts and spellings, sizes and dates, for the query
/// language's filters; each host's tree differs a little.
fn fill_names(tree: &Path, n: usize) {
    let w = |rel: &str, content: &[u8]| write_file(tree, rel, content);
    w("Résumé.pdf", &vec![b'r'; 1500 * n]);
    w("resume-plain.txt", b"plain");
    w("Re\u{301}sume\u{301}-decomposed.md", b"decomposed");
    w("CAFÉ/menu.txt", b"menu");
    w("naïve/notes.md", b"notes");
    w("ærøskøbing.txt", b"bare letters");
    w("Привет мир.txt", b"cyrillic");
    w("Ελληνικά/σημειώσεις.md", b"greek");
    w("日本語のメモ.txt", b"japanese");
    w(&format!("sizes/small-{n}.bin"), &[1u8; 100]);
    w("sizes/medium.bin", &vec![2u8; 5000]);
    let big = std::fs::File::create(tree.join("sizes/big.bin")).unwrap();
    big.set_len(3 << 20).unwrap();
    // Dates: a file of June 2019 and one of January 2021 (mtime set here).
    for (rel, secs) in [
        ("old/2019.txt", 1_560_600_000),
        ("old/2021.md", 1_610_000_000),
    ] {
        w(rel, b"dated");
        std::fs::File::options()
            .write(true)
            .open(tree.join(rel))
            .unwrap()
            .set_modified(std::time::UNIX_EPOCH + Duration::from_secs(secs))
            .unwrap();
    }
    if n == 2 {
        w("IMG_2019.JPG", b"jpeg");
    }
}

const LANGUAGE: &[&[&str]] = &[
    &["résumé"],
    &["RÉSUMÉ"],
    &["resume"],
    &["accents:ignore", "resume"],
    &["--ignore-accents", "cafe"],
    &["accents:ignore", "aeroskobing"],
    &["accents:ignore", "naive", "ext:md"],
    &["привет"],
    &["ПРИВЕТ", "ext:txt"],
    &["ΕΛΛΗΝΙΚΆ"],
    &["σημειώσεις"],
    &["日本語"],
    &["メモ"],
    &["size:>1kb"],
    &["size:1kb..4kb"],
    &["size:>=3mb", "ext:bin"],
    &["size:<200"],
    &["dm:2019"],
    &["dm:2019-01..2021-06"],
    &["ext:md", "!dm:2021"],
    &["ext:pdf;md;jpg"],
    &["*.md"],
    &["r?sum?.pdf"],
    &["img_*"],
    &["kind:folder"],
    &["kind:folder", "é"],
    &["path:menu"],
    &["\"total due\"|menu"],
    &["!sizes", "bin|pdf"],
];

/// The query language in the fleet: three hosts with accented names in
/// both normal forms, Cyrillic, Greek and Japanese names, sizes and dates;
/// each query's fleet answer equals the union of the hosts' own `fsctl
/// search --json` answers (accents:ignore, size:, dm:, ext:, wildcards,
/// kind:folder, path:, phrases, !, |).
#[test]
fn fleet_search_reads_queries_as_the_hosts_do() {
    let tmp = tempfile::tempdir().unwrap();
    let pg = Postgres::start();
    let mut hosts: Vec<Host> = (1..=3)
        .map(|n| host(tmp.path(), &pg, &format!("h{n}")))
        .collect();
    fleet_init(&hosts[0].inst, &pg);
    for (i, h) in hosts.iter_mut().enumerate() {
        fill_names(&h.tree, i + 1);
        h.inst.start();
    }
    for h in &hosts {
        wait_current(&h.inst);
    }
    let mut empty = 0;
    for q in LANGUAGE {
        let want = union_search(&hosts, q);
        empty += usize::from(want.is_empty());
        assert_eq!(
            fleet_search(&hosts[0].inst, &pg, q),
            want,
            "fleet search {q:?}"
        );
    }
    assert!(
        empty <= 1,
        "the queries find something: {empty} found nothing"
    );
    for h in &mut hosts {
        h.inst.stop();
    }
}

/// A wrong URL, a wrong password, a database without the schema, and the
/// database down at start: the daemon serves its host all along, status
/// says why in one line, and the link catches up once the database is
/// back.
#[test]
fn fleet_link_failures_never_stop_the_daemon() {
    let tmp = tempfile::tempdir().unwrap();
    let mut pg = Postgres::start();
    let searchable = |h: &Host, name: &str| {
        let got = local_search(h, &[name]);
        got.len() == 1
    };
    let wait_error = |h: &Host, needle: &str| {
        let mut last = Value::Null;
        let ok = poll_until(Duration::from_secs(20), || {
            last = link(&h.inst);
            last["connected"] == false
                && last["last_error"]
                    .as_str()
                    .is_some_and(|e| e.contains(needle) && !e.contains('\n'))
        });
        assert!(ok, "{}: fleet status should say {needle:?}: {last}", h.name);
    };

    // The schema is not made yet: told to run fleet init.
    let mut ok_host = host(tmp.path(), &pg, "good");
    write_file(&ok_host.tree, "before.txt", b"1");
    ok_host.inst.start();
    wait_error(&ok_host, "fsctl fleet init");

    // A wrong password.
    let mut bad_pw = host(tmp.path(), &pg, "badpw");
    let wrong = tmp.path().join("wrong-password");
    std::fs::write(&wrong, "not the password\n").unwrap();
    fleet_config(&bad_pw.inst.home, &pg.url(), "badpw", &wrong);
    write_file(&bad_pw.tree, "pw.txt", b"1");
    bad_pw.inst.start();
    wait_error(&bad_pw, "password authentication failed");
    assert!(searchable(&bad_pw, "pw.txt"));

    // A URL where no database listens, and one that is no URL at all.
    let mut bad_url = host(tmp.path(), &pg, "badurl");
    let nowhere = format!("postgresql://postgres@127.0.0.1:{}/postgres", free_port());
    fleet_config(&bad_url.inst.home, &nowhere, "badurl", &pg.password_file);
    write_file(&bad_url.tree, "url.txt", b"1");
    bad_url.inst.start();
    wait_error(&bad_url, "refused");
    assert!(searchable(&bad_url, "url.txt"));
    let mut no_url = host(tmp.path(), &pg, "nourl");
    fleet_config(
        &no_url.inst.home,
        "mysql://db/x",
        "nourl",
        &pg.password_file,
    );
    write_file(&no_url.tree, "nourl.txt", b"1");
    no_url.inst.start();
    wait_error(&no_url, "not a PostgreSQL URL");
    assert!(searchable(&no_url, "nourl.txt"));
    no_url.inst.stop();
    bad_url.inst.stop();

    // The database goes down: the daemon goes on, and says so.
    pg.halt();
    wait_error(&ok_host, "refused");
    write_file(&ok_host.tree, "while-down.txt", b"2");
    let ok = poll_until(Duration::from_secs(10), || {
        searchable(&ok_host, "while-down.txt")
    });
    assert!(ok, "the daemon indexes while the database is down");
    assert!(link(&ok_host.inst)["lag_batches"].as_u64().unwrap() >= 1);

    // A daemon started while the database is down works too.
    let mut late = host(tmp.path(), &pg, "late");
    write_file(&late.tree, "late.txt", b"3");
    late.inst.start();
    wait_error(&late, "refused");
    assert!(searchable(&late, "late.txt"));

    // Back, with the schema: everyone with the right password catches up.
    pg.resume();
    fleet_init(&ok_host.inst, &pg);
    wait_current(&ok_host.inst);
    wait_current(&late.inst);
    for (h, name) in [
        (&ok_host, "before.txt"),
        (&ok_host, "while-down.txt"),
        (&late, "late.txt"),
    ] {
        assert_eq!(
            fleet_search(&h.inst, &pg, &[name]),
            local_search(h, &[name]),
            "{name} in the fleet"
        );
    }
    wait_error(&bad_pw, "password authentication failed");
    assert_eq!(
        pg.psql("SELECT count(*) FROM fsindex.hosts WHERE host = 'badpw'"),
        "0"
    );

    // fsctl fleet finds the database and the password in the instance's
    // config.toml when no --database is given.
    let out = ok_host
        .inst
        .fsctl(&["fleet", "search", "--json", "while-down"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        hits("good", &json_lines(&out)),
        local_search(&ok_host, &["while-down"])
    );

    // Bad input to fsctl fleet itself gets a clear error.
    let out = ok_host
        .inst
        .fsctl(&["fleet", "search", "x", "--config", "/nonexistent.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("no fleet database"), "{}", text(&out));
    // A filter the shipped rows cannot answer is refused by name; a query
    // that does not parse gets the daemon's own message.
    for (q, says) in [
        ("regex:^x", "regex:"),
        ("kind:image", "kind:"),
        ("camera:canon", "media metadata"),
    ] {
        let out = fleet(&ok_host.inst, &pg, &["search", q]);
        assert_eq!(out.status.code(), Some(2), "{q}: {}", text(&out));
        assert!(
            text(&out).contains("not answered by the fleet") && text(&out).contains(says),
            "{q}: {}",
            text(&out)
        );
    }
    let out = fleet(&ok_host.inst, &pg, &["search", "size:>>1mb"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("bad size"), "{}", text(&out));
    // The query is parsed while the connection is made: its mistake is
    // what the user sees, even when no database answers.
    let out = ok_host.inst.fsctl(&[
        "fleet",
        "search",
        "size:>>1mb",
        "--database",
        "postgresql://fsindex@127.0.0.1:1/nowhere",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("bad size") && !text(&out).contains("fleet database"),
        "{}",
        text(&out)
    );
    let out = fleet(&ok_host.inst, &pg, &["du", "good:/no/such/folder"]);
    assert!(text(&out).contains("is not in the fleet"), "{}", text(&out));

    for h in [&mut ok_host, &mut bad_pw, &mut late] {
        h.inst.stop();
    }
}

/// A primary and a synchronous standby; the daemon's URL names both, for
/// the one that takes writes. `kill -9` of the primary while files keep
/// changing, then the standby promoted: the fleet converges on it with
/// nothing lost (its rows equal `find`) and nothing doubled (one row per
/// path, the host's seq equal to what the daemon committed).
#[test]
fn fleet_survives_the_primary_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let mut primary = Postgres::start();
    let standby = primary.standby();
    let url = format!(
        "postgresql://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
        primary.port, standby.port
    );
    let mut h = host(tmp.path(), &primary, "ha");
    fleet_config(&h.inst.home, &url, "ha", &primary.password_file);
    fleet_init(&h.inst, &primary);
    for i in 0..50 {
        write_file(&h.tree, format!("before/f{i:03}.txt"), b"x");
    }
    h.inst.start();
    wait_current(&h.inst);

    // Files keep coming while the primary dies and the standby takes over.
    for i in 0..60 {
        write_file(&h.tree, format!("during/f{i:03}.txt"), b"y");
        if i == 20 {
            primary.kill9();
        }
        if i == 40 {
            standby.promote();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::rename(h.tree.join("before"), h.tree.join("after")).unwrap();
    wait_current(&h.inst);
    wait_converged(&standby, &h);
    assert_eq!(
        standby.psql(
            "SELECT count(*) FROM (SELECT path FROM fsindex.entries GROUP BY host, path HAVING count(*) > 1) d"
        ),
        "0",
        "no path twice"
    );
    h.inst.stop();
}

/// A host's first load is swapped in whole: a reader polling the database
/// all through it sees none of the host's rows, then all of them (as many
/// as `find` lists, plus the root's own), never a part; the rows are then
/// exactly `find`'s paths, and another host's rows stay as they were. The
/// load is in two parts (fleet schema 7), each committed before the attach:
/// a reader sees neither until both are the host's, and no table of the
/// load is left apart after.
#[test]
fn a_first_load_is_seen_whole_or_not_at_all() {
    let tmp = tempfile::tempdir().unwrap();
    let pg = Postgres::start();
    let mut other = host(tmp.path(), &pg, "other");
    let mut big = host(tmp.path(), &pg, "big");
    fleet_init(&other.inst, &pg);
    fill(&other.tree, 1);
    other.inst.start();
    wait_current(&other.inst);
    wait_converged(&pg, &other);
    let others = pg.psql("SELECT count(*) FROM fsindex.items WHERE host = 'other'");
    // Enough rows that the load takes a while (a debug daemon).
    for d in 0..40 {
        for f in 0..500 {
            write_file(&big.tree, format!("d{d:02}/file-{f:04}.txt"), b"");
        }
    }
    let want = find_oracle(&big.inst.runner, &big.tree);
    // Indexed first without the fleet (a link started with the scan ships
    // what is indexed so far, then the rest as journal batches): the load
    // then ships the whole tree at once.
    let config = big.inst.home.join("config.toml");
    let aside = big.inst.home.join("config.fleet");
    std::fs::rename(&config, &aside).unwrap();
    big.inst.start();
    big.inst.stop();
    std::fs::rename(&aside, &config).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let sample = "SELECT (SELECT count(*) FROM fsindex.items WHERE host = 'big') || ' ' || \
                  (SELECT count(*) FROM fsindex.folders WHERE host = 'big') || ' ' || \
                  (SELECT count(*) FROM fsindex.items WHERE host = 'other') || ' ' || \
                  (SELECT count(*) FROM fsindex.loads WHERE NOT attached)";
    let seen: Vec<String> = std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut seen = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                seen.push(pg.psql(sample));
            }
            seen.push(pg.psql(sample));
            seen
        });
        big.inst.start();
        wait_current(&big.inst);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        sampler.join().unwrap()
    });
    let items = (want.len() + 1).to_string(); // the root's own row too
    let folders = (40 + 1).to_string(); // 40 folders and the root
    let mut mid_load = 0;
    for s in &seen {
        let v: Vec<&str> = s.split(' ').collect();
        assert!(
            (v[0] == "0" && v[1] == "0") || (v[0] == items && v[1] == folders),
            "a reader saw part of a load (items, folders): {s} (whole: {items} {folders})"
        );
        assert_eq!(v[2], others, "another host's rows changed: {s}");
        if v[3] == "1" {
            mid_load += 1;
        }
    }
    assert!(
        seen.last()
            .is_some_and(|s| s.starts_with(&format!("{items} {folders} "))),
        "{seen:?}"
    );
    assert!(mid_load > 0, "no read fell during the load: {seen:?}");
    wait_converged(&pg, &big);
    // Queries planned right after the load see its statistics.
    let analysed = pg.psql(
        "SELECT count(*) FROM pg_stat_user_tables s \
         JOIN (SELECT relid FROM pg_partition_tree('fsindex.items') WHERE isleaf \
               UNION ALL SELECT relid FROM pg_partition_tree('fsindex.folders') WHERE isleaf) p \
           ON p.relid = s.relid \
         WHERE s.last_analyze IS NULL",
    );
    assert_eq!(analysed, "0", "partitions never analysed");
    // The big host was loaded in two parts by id (fleet schema 7), its
    // items' partition made of them; nothing of the load is left apart.
    let parts = pg.psql(
        "SELECT string_agg(pg_get_expr(c.relpartbound, c.oid), ' | ' ORDER BY c.oid) \
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         WHERE i.inhparent = (SELECT i2.inhrelid FROM pg_inherits i2 JOIN pg_class c2 \
             ON c2.oid = i2.inhrelid WHERE i2.inhparent = 'fsindex.items'::regclass \
             AND pg_get_expr(c2.relpartbound, c2.oid) = 'FOR VALUES IN (''big'')')",
    );
    assert!(
        parts.starts_with("FOR VALUES FROM (MINVALUE) TO (") && parts.ends_with(") TO (MAXVALUE)"),
        "big's parts: {parts}"
    );
    assert_eq!(
        pg.psql(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = 'fsindex' AND c.relkind IN ('r', 'p') \
               AND c.relname ~ '^(items|folders)_[0-9]' \
               AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = c.oid)"
        ),
        "0",
        "tables of a load left unattached"
    );
    // Each part holds rows.
    let per_part = pg.psql(
        "SELECT string_agg(n::text, ' ') FROM (SELECT count(*) n FROM fsindex.items \
         WHERE host = 'big' GROUP BY tableoid ORDER BY min(id)) t",
    );
    assert_eq!(per_part.split(' ').count(), 2, "rows per part: {per_part}");
    big.inst.stop();
    other.inst.stop();
}

/// A fleet database made by schema 4 (one table for every host) with an
/// older daemon's rows: this daemon says to run `fsctl fleet init`, which
/// applies 5 (a partition per host); the host then loads anew into its
/// own partition, its rows are `find`'s paths, and the old row is gone.
#[test]
fn a_fleet_schema_of_version_4_upgrades_to_partitions() {
    let tmp = tempfile::tempdir().unwrap();
    let pg = Postgres::start();
    let mut h = host(tmp.path(), &pg, "h1");
    fill(&h.tree, 1);
    pg.fleet_schema_upto(4);
    pg.psql(
        "INSERT INTO fsindex.hosts (host, epoch, seq) VALUES ('h1', 7, 3);
         INSERT INTO fsindex.items (host, id, parent_id, name, folded, kind, size, blocks,
             mtime_ns, dev, ino, nlink, mode, flags, gate)
         VALUES ('h1', 999999, NULL, '/gone', '', 1, 0, 0, 0, 0, 0, 1, 16877, 0, 0);
         INSERT INTO fsindex.folders (host, id, gate, root, path, folded, rel)
         VALUES ('h1', 999999, 0, '/gone', '/gone', '', '');",
    );
    h.inst.start();
    let mut last = Value::Null;
    let told = poll_until(Duration::from_secs(30), || {
        last = link(&h.inst);
        last["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("version 4") && e.contains("fsctl fleet init"))
    });
    assert!(told, "status: {last}");
    let out = fleet(&h.inst, &pg, &["init", "--json"]);
    assert!(out.status.success(), "fleet init: {}", text(&out));
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["applied"],
        serde_json::json!([5, 6, 7])
    );
    wait_current(&h.inst);
    wait_converged(&pg, &h);
    assert_eq!(
        pg.psql("SELECT count(*) FROM fsindex.items WHERE id = 999999"),
        "0"
    );
    assert_eq!(
        pg.psql(
            "SELECT string_agg(c.relname || ':' || pg_get_expr(c.relpartbound, c.oid), ',') \
             FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
             WHERE i.inhparent = 'fsindex.items'::regclass"
        )
        .split(':')
        .nth(1),
        Some("FOR VALUES IN ('h1')")
    );
    // A search goes through the partitions as through the table.
    assert_eq!(
        fleet_search(&h.inst, &pg, &["report"]),
        local_search(&h, &["report"])
    );
    h.inst.stop();
}

/// The kind of `host`'s partition of `fsindex.items`: `r`, one table
/// (schema 5's load), or `p`, a table of parts (schema 7's); and how many
/// parts.
fn items_partition(pg: &Postgres, host: &str) -> (String, String) {
    let kind = pg.psql(&format!(
        "SELECT c.relkind FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         WHERE i.inhparent = 'fsindex.items'::regclass \
           AND pg_get_expr(c.relpartbound, c.oid) = 'FOR VALUES IN (''{host}'')'"
    ));
    let parts = pg.psql(&format!(
        "SELECT count(*) FROM pg_partition_tree((SELECT i.inhrelid FROM pg_inherits i \
         JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'fsindex.items'::regclass \
           AND pg_get_expr(c.relpartbound, c.oid) = 'FOR VALUES IN (''{host}'')')) WHERE isleaf"
    ));
    (kind, parts)
}

/// A fleet database of schema 6 whose host was loaded into one table:
/// `fsctl fleet init` applies 7 and the host keeps its rows and ships on
/// into them, with no new load; its next load (forced here by an epoch
/// PostgreSQL no longer matches, as a rebuilt index would) is in two parts,
/// the old table dropped, and its rows are `find`'s and search as the
/// host's own.
#[test]
fn a_fleet_schema_of_version_6_upgrades_to_loads_in_parts() {
    let tmp = tempfile::tempdir().unwrap();
    let pg = Postgres::start();
    let mut h = host(tmp.path(), &pg, "h1");
    fill(&h.tree, 1);
    pg.fleet_schema_upto(6);
    h.inst.start();
    wait_current(&h.inst);
    wait_converged(&pg, &h);
    assert_eq!(items_partition(&pg, "h1"), ("r".into(), "1".into()));
    let loads = link(&h.inst)["reconciles"].as_u64().unwrap();

    let out = fleet(&h.inst, &pg, &["init", "--json"]);
    assert!(out.status.success(), "fleet init: {}", text(&out));
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["applied"],
        serde_json::json!([7])
    );
    write_file(&h.tree, "after-upgrade/report-7.txt", b"seven");
    wait_current(&h.inst);
    wait_converged(&pg, &h);
    assert_eq!(
        link(&h.inst)["reconciles"].as_u64(),
        Some(loads),
        "the upgrade made a load"
    );
    assert_eq!(items_partition(&pg, "h1"), ("r".into(), "1".into()));

    pg.psql("UPDATE fsindex.hosts SET epoch = -1 WHERE host = 'h1'");
    let mut last = Value::Null;
    let reloaded = poll_until(Duration::from_secs(60), || {
        last = link(&h.inst);
        last["reconciles"].as_u64() == Some(loads + 1)
            && last["state"] == "current"
            && last["lag_batches"] == 0
    });
    assert!(reloaded, "no second load: {last}");
    wait_converged(&pg, &h);
    assert_eq!(items_partition(&pg, "h1"), ("p".into(), "2".into()));
    assert_eq!(
        pg.psql(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = 'fsindex' AND c.relname ~ '^items_[0-9]+$'"
        ),
        "1",
        "the old table was not dropped"
    );
    for q in [&["report"][..], &["txt"], &["7"]] {
        assert_eq!(fleet_search(&h.inst, &pg, q), local_search(&h, q), "{q:?}");
    }
    h.inst.stop();
}

/// The libraries a binary asks the dynamic loader for, as `readelf -d`
/// reads its dynamic section (none for a static binary).
fn needed(bin: &Path) -> Vec<String> {
    let out = std::process::Command::new("readelf")
        .arg("-d")
        .arg(bin)
        .output()
        .expect("readelf (binutils)");
    assert!(out.status.success(), "readelf -d {}", bin.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| Some(l.split_once('[')?.1.trim_end_matches(']').to_owned()))
        .collect()
}

/// `fsctl` starts for every query, and loading the system's OpenSSL cost
/// 1.1-1.6 ms of each start (`benches/fsctl-ab.sh`): only `fsctl-fleet`,
/// which runs `fsctl fleet` (TLS and all; the other fleet tests go through
/// it), links it. What the user sees when the
/// helper is missing: one line naming it, exit 2, and every other command
/// as before; found in `../libexec/fsindex/` as a package puts it.
#[test]
fn fsctl_leaves_the_fleets_tls_to_its_helper() {
    let bins = bin_dir();
    let fsctl_needs = needed(&bins.join("fsctl"));
    assert!(
        !fsctl_needs
            .iter()
            .any(|l| l.starts_with("libssl") || l.starts_with("libcrypto")),
        "fsctl links TLS: {fsctl_needs:?}"
    );
    let helper_needs = needed(&bins.join("fsctl-fleet"));
    assert!(
        helper_needs.is_empty() || helper_needs.iter().any(|l| l.starts_with("libssl")),
        "fsctl-fleet without libssl: {helper_needs:?}"
    );

    let tmp = tempfile::tempdir().unwrap();
    let alone = tmp.path().join("bin");
    std::fs::create_dir_all(&alone).unwrap();
    std::fs::copy(bins.join("fsctl"), alone.join("fsctl")).unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(alone.join("fsctl"))
            .args(args)
            .env("FSINDEX_HOME", &home)
            .env("FSINDEX_NO_SPAWN", "1")
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap()
    };
    // Nothing listens on port 1: the helper, once found, says so.
    let hosts = [
        "fleet",
        "hosts",
        "--database",
        "postgresql://u@127.0.0.1:1/x",
    ];
    let out = run(&hosts);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.lines().count() == 1 && err.contains("fsctl-fleet") && err.contains("not found"),
        "{err}"
    );
    let out = run(&["--version"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("fsctl "));

    let libexec = tmp.path().join("libexec/fsindex");
    std::fs::create_dir_all(&libexec).unwrap();
    std::os::unix::fs::symlink(bins.join("fsctl-fleet"), libexec.join("fsctl-fleet")).unwrap();
    let out = run(&hosts);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("fsctl: the fleet database:") && err.contains("refused"),
        "{err}"
    );
    // Run by hand, its usage errors read as fsctl's.
    let out = std::process::Command::new(libexec.join("fsctl-fleet"))
        .args(["fleet", "search"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Usage: fsctl fleet search"), "{err}");
}
