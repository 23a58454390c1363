//! The query language: every filter and operator against an oracle that
//! recomputes the semantics from GNU `find` on the same tree.

use std::collections::BTreeSet;
use std::path::Path;

use crate::util::{Instance, Runner, diff, fold, json_lines, lossy};

/// One entry as `find -printf` reports it.
#[derive(Debug)]
struct Seen {
    path: Vec<u8>,
    rel: String,
    name: String,
    dir: bool,
    size: u64,
    mtime: i64,
}

fn walk(root: &Path) -> Vec<Seen> {
    let out = std::process::Command::new("find")
        .arg(root)
        .args(["-mindepth", "1", "-printf", "%y %s %T@ %p\\0"])
        .output()
        .unwrap();
    let prefix = root.to_str().unwrap().len() + 1;
    out.stdout
        .split(|&b| b == 0)
        .filter(|r| !r.is_empty())
        .map(|rec| {
            let text = String::from_utf8_lossy(rec).into_owned();
            let mut it = text.splitn(4, ' ');
            let (ty, size, t) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
            let nth_space = rec
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b' ')
                .nth(2)
                .unwrap()
                .0;
            let path = rec[nth_space + 1..].to_vec();
            let rel = lossy(&path[prefix..]);
            let name = rel.rsplit('/').next().unwrap().to_owned();
            let secs: f64 = t.parse().unwrap();
            Seen {
                path,
                rel,
                name,
                dir: ty == "d",
                size: size.parse().unwrap(),
                mtime: secs as i64,
            }
        })
        .collect()
}

fn build(root: &Path) {
    let w = |p: &str, bytes: usize| {
        let path = root.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, vec![b'z'; bytes]).unwrap();
    };
    w("Taxes/2025/w2.pdf", 3000);
    w("Taxes/2024/return.PDF", 50_000);
    w("photos/IMG_1234.jpg", 200_000);
    w("photos/IMG_99.jpeg", 10);
    w("photos/holiday.PNG", 2_000_000);
    w("music/song.flac", 5000);
    w("video/clip.mkv", 7000);
    w("src/main.rs", 100);
    w("src/lib.rs", 20_000);
    w("src.tar.gz", 1024);
    w("notes.md", 1025);
    w("ext:pdf in name.txt", 1);
    w("ärger/ÄRGER.txt", 5);
    w("Straße.md", 7);
    w("draft-report.docx", 40_000);
    w("final-report.docx", 40_000);
    w("README", 12);
    w("readme.txt", 12);
    std::fs::create_dir_all(root.join("empty folder")).unwrap();
    let bad = root.join(std::ffi::OsStr::new(unsafe_free_bad_name()));
    std::fs::write(bad, b"x").unwrap();
    w("music/jingle.flac", 50);
    // Dated files: 2020, and 2023-03-15.
    for (p, date) in [
        ("old/ancient.txt", "2020-05-05 12:00"),
        ("old/tiny.pdf", "2020-07-01 12:00"),
        ("old/march.log", "2023-03-15 10:00"),
    ] {
        w(p, 10);
        assert!(
            std::process::Command::new("touch")
                .args(["-d", date])
                .arg(root.join(p))
                .status()
                .unwrap()
                .success()
        );
    }
}

/// A name that is not UTF-8.
fn unsafe_free_bad_name() -> &'static std::ffi::OsStr {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(b"bad\xffname.bin")
}

fn ext_of(name: &str, e: &str) -> bool {
    let (n, e) = (fold(name), fold(e));
    n.len() > e.len() + 1 && n.ends_with(&e) && n.as_bytes()[n.len() - e.len() - 1] == b'.'
}

fn day(s: &str) -> i64 {
    // Local midnight as the daemon sees it (the tests run with the machine's TZ).
    let out = std::process::Command::new("date")
        .args(["-d", s, "+%s"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn every_filter_and_operator_equals_the_oracle() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    build(&tree);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let all = walk(&tree);
    let select = |f: &dyn Fn(&Seen) -> bool| -> BTreeSet<Vec<u8>> {
        all.iter()
            .filter(|s| f(s))
            .map(|s| s.path.clone())
            .collect()
    };
    let has = |s: &Seen, t: &str| fold(&s.rel).contains(&fold(t));
    let under = |s: &Seen, d: &str| s.rel.starts_with(&format!("{d}/"));
    let (y2020, y2021) = (day("2020-01-01"), day("2021-01-01"));
    let (m2023_03, m2023_04) = (day("2023-03-01"), day("2023-04-01"));
    let today = day("today 00:00");

    let cases: Vec<(Vec<String>, BTreeSet<Vec<u8>>)> = vec![
        (
            vec!["ext:pdf".into()],
            select(&|s| !s.dir && ext_of(&s.name, "pdf")),
        ),
        (
            vec!["ext:jpg;jpeg".into()],
            select(&|s| !s.dir && (ext_of(&s.name, "jpg") || ext_of(&s.name, "jpeg"))),
        ),
        (
            vec!["ext:tar.gz".into()],
            select(&|s| !s.dir && ext_of(&s.name, "tar.gz")),
        ),
        // The filter word inside a name is just text when quoted.
        (vec!["\"ext:pdf\"".into()], select(&|s| has(s, "ext:pdf"))),
        (
            vec!["size:>1kb".into()],
            select(&|s| !s.dir && s.size > 1024),
        ),
        (
            vec!["size:>=1kb".into()],
            select(&|s| !s.dir && s.size >= 1024),
        ),
        (
            vec!["size:<100".into()],
            select(&|s| !s.dir && s.size < 100),
        ),
        (
            vec!["size:1kb..40000".into()],
            select(&|s| !s.dir && (1024..=40_000).contains(&s.size)),
        ),
        (
            vec!["size:1.5mb..2mb".into()],
            select(&|s| !s.dir && (1_572_864..=2_097_152).contains(&s.size)),
        ),
        (
            vec!["dm:2020".into()],
            select(&|s| (y2020..y2021).contains(&s.mtime)),
        ),
        (
            vec!["dm:2023-03".into()],
            select(&|s| (m2023_03..m2023_04).contains(&s.mtime)),
        ),
        (
            vec!["dm:2020..2023-03".into()],
            select(&|s| (y2020..m2023_04).contains(&s.mtime)),
        ),
        (
            vec!["dm:today".into()],
            select(&|s| s.mtime >= today && s.mtime < today + 86_400),
        ),
        (vec!["dm:<2021".into()], select(&|s| s.mtime < y2021)),
        (
            vec!["kind:image".into()],
            select(&|s| !s.dir && ["jpg", "jpeg", "png"].iter().any(|e| ext_of(&s.name, e))),
        ),
        (vec!["kind:folder".into()], select(&|s| s.dir)),
        (
            vec!["kind:document".into()],
            select(&|s| !s.dir && ["pdf", "docx"].iter().any(|e| ext_of(&s.name, e))),
        ),
        (
            vec!["kind:audio|kind:video".into()],
            select(&|s| s.name.ends_with(".flac") || s.name.ends_with(".mkv")),
        ),
        (
            vec![format!("in:{}", tree.join("photos").display())],
            select(&|s| under(s, "photos")),
        ),
        (
            vec![
                format!("!in:{}", tree.join("Taxes").display()),
                "pdf".into(),
            ],
            select(&|s| !under(s, "Taxes") && s.rel != "Taxes" && has(s, "pdf")),
        ),
        (
            vec!["path:taxes/2025".into()],
            select(&|s| has(s, "taxes/2025")),
        ),
        (
            vec!["report".into(), "!draft".into()],
            select(&|s| has(s, "report") && !has(s, "draft")),
        ),
        (
            vec!["invoice|w2|return".into()],
            select(&|s| has(s, "invoice") || has(s, "w2") || has(s, "return")),
        ),
        (
            vec!["*.jpg".into()],
            select(&|s| fold(&s.name).ends_with(".jpg")),
        ),
        (
            vec!["IMG_????.jpg".into()],
            select(&|s| s.name == "IMG_1234.jpg"),
        ),
        (
            vec!["*report*".into()],
            select(&|s| fold(&s.name).contains("report")),
        ),
        (
            vec!["regex:^img_\\d{4}\\.jpg$".into()],
            select(&|s| s.name == "IMG_1234.jpg"),
        ),
        (
            vec!["regex:\\.(md|txt)$".into()],
            select(&|s| {
                let n = s.name.to_lowercase();
                n.ends_with(".md") || n.ends_with(".txt")
            }),
        ),
        (
            vec!["case:README".into()],
            select(&|s| s.rel.contains("README")),
        ),
        (
            vec!["case:readme".into()],
            select(&|s| s.rel.contains("readme")),
        ),
        (vec!["ÄRGER".into()], select(&|s| has(s, "ärger"))),
        (vec!["STRASSE".into()], select(&|s| has(s, "straße"))),
        (
            vec!["bad".into(), "ext:bin".into()],
            select(&|s| has(s, "bad") && !s.dir && ext_of(&s.name, "bin")),
        ),
        (
            vec!["\"empty folder\"".into()],
            select(&|s| has(s, "empty folder")),
        ),
        (vec!["!e".into()], select(&|s| !has(s, "e"))),
        // Filters on an entry's own figures together with others, in
        // either order (the daemon checks them last, only where the
        // others matched).
        (
            vec!["size:>1kb".into(), "ext:pdf".into()],
            select(&|s| !s.dir && s.size > 1024 && ext_of(&s.name, "pdf")),
        ),
        (
            vec!["ext:pdf".into(), "size:<=1kb".into()],
            select(&|s| !s.dir && s.size <= 1024 && ext_of(&s.name, "pdf")),
        ),
        (
            vec!["dm:<2021".into(), "kind:document|kind:folder".into()],
            select(&|s| {
                s.mtime < y2021 && (s.dir || ["pdf", "docx"].iter().any(|e| ext_of(&s.name, e)))
            }),
        ),
        (
            vec!["kind:audio|kind:video".into(), "size:<100|dm:2020".into()],
            select(&|s| {
                (s.name.ends_with(".flac") || s.name.ends_with(".mkv"))
                    && ((!s.dir && s.size < 100) || (y2020..y2021).contains(&s.mtime))
            }),
        ),
        (
            vec!["e".into(), "size:>=1kb".into(), "!kind:document".into()],
            select(&|s| {
                has(s, "e")
                    && !s.dir
                    && s.size >= 1024
                    && !["pdf", "docx"].iter().any(|e| ext_of(&s.name, e))
            }),
        ),
    ];
    for (query, expected) in cases {
        assert!(!expected.is_empty(), "the tree has answers for {query:?}");
        let args: Vec<&str> = query.iter().map(String::as_str).collect();
        let got: BTreeSet<Vec<u8>> = inst.search0(&args).into_iter().collect();
        assert_eq!(expected, got, "query {query:?}:\n{}", diff(&expected, &got));
        // --count agrees.
        let mut a = vec!["search", "--count"];
        a.extend(&args);
        let out = inst.fsctl(&a);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            expected.len().to_string(),
            "--count {query:?}"
        );
    }
}

#[test]
fn malformed_queries_are_refused_with_the_bad_part() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    build(&tree);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    for (q, want) in [
        ("size:>abc", "bad size `>abc` in `size:>abc`"),
        ("\"unclosed", "unclosed quote"),
        ("regex:(", "bad regex `(`"),
        ("colour:red", "unknown filter `colour:`"),
        ("kind:spaceship", "unknown kind `spaceship`"),
        ("dm:someday", "bad date `someday`"),
        ("in:/definitely/not/a/root", "is not under any root"),
    ] {
        let out = inst.fsctl(&["search", q]);
        assert_eq!(out.status.code(), Some(2), "{q}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{q}: {err}");
        assert_eq!(err.lines().count(), 1, "{q}: {err}");
    }
}

#[test]
fn sort_reverse_and_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    build(&tree);
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let sizes = |args: &[&str]| -> Vec<u64> {
        let out = inst.fsctl(args);
        json_lines(&out)
            .iter()
            .map(|l| l["size"].as_u64().unwrap())
            .collect()
    };
    let down = sizes(&["search", "ext:jpg;jpeg;png", "--sort", "size", "--json"]);
    let up = sizes(&[
        "search",
        "ext:jpg;jpeg;png",
        "--sort",
        "size",
        "--reverse",
        "--json",
    ]);
    assert_eq!(down, [2_000_000, 200_000, 10]);
    assert_eq!(up, [10, 200_000, 2_000_000]);
    let first = sizes(&[
        "search",
        "ext:jpg;jpeg;png",
        "--sort",
        "size",
        "--reverse",
        "--limit",
        "1",
        "--json",
    ]);
    assert_eq!(first, [10]);
}
