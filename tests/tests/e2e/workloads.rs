//! Real programs at work in a watched root: tar, git, rsync, `cp -al`, `ln`,
//! editors' saves, SQLite in WAL mode, folders moved out and back, case-only
//! renames, `chmod 000`, hostile names, paths longer than PATH_MAX, sensitive
//! files and excluded folders. After each workload the index is compared
//! with oracles this test computes itself, never with `fsctl verify` (which
//! shares the daemon's walk):
//!
//! - the listing: GNU `find ROOT -mindepth 1 -printf '%P\0'` (byte-exact,
//!   deeper than PATH_MAX) against `fsctl search --sync -0 '*'`;
//! - each entry: type, size, link count, inode, mtime and permission bits
//!   as find prints them, against the Stat RPC (paths as bytes);
//! - sizes: `du -s -B1` and `du -s -b` against `fsctl du --sync --json`
//!   for the root and every folder the workload touched.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fsindex_proto::v1 as pb;
use serde_json::Value;

use crate::util::{
    self, Instance, Rng, Runner, diff_first, gnu_du, grpc, indexed_rel, listing, lossy, sh, text,
    watch_backend, write_file,
};

/// What GNU find says about one entry (`%y %s %n %i %T@ %m`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    kind: u8,
    size: u64,
    nlink: u64,
    ino: u64,
    /// Modification time in nanoseconds since the epoch.
    mtime_ns: i128,
    /// Permission bits (`%m`).
    mode: u32,
}

/// find's `%T@` in nanoseconds. find prints `tv_sec.tv_nsec` as two
/// numbers, so 0.1 s before the epoch is `-1.9000000000`.
fn parse_time(t: &str) -> i128 {
    let (secs, frac) = t.split_once('.').unwrap_or((t, "0"));
    let nsec: String = frac.chars().chain(std::iter::repeat('0')).take(9).collect();
    secs.parse::<i128>().unwrap() * 1_000_000_000 + nsec.parse::<i128>().unwrap()
}

/// Every entry under `root` with its figures, relative paths as keys, as
/// `runner` sees them (GNU find walks with openat: no PATH_MAX limit).
fn find_meta(runner: &Runner, root: &Path) -> BTreeMap<Vec<u8>, Seen> {
    let out = runner
        .command("find")
        .arg(root)
        .args(["-mindepth", "1", "-printf", "%P\\0%y %s %n %i %T@ %m\\0"])
        .output()
        .unwrap();
    let mut fields = out.stdout.split(|&b| b == 0);
    let mut all = BTreeMap::new();
    while let (Some(path), Some(meta)) = (fields.next(), fields.next()) {
        let meta = std::str::from_utf8(meta).unwrap();
        let f: Vec<&str> = meta.split(' ').collect();
        let num = |i: usize| f[i].parse::<u64>().unwrap();
        all.insert(
            path.to_vec(),
            Seen {
                kind: f[0].as_bytes()[0],
                size: num(1),
                nlink: num(2),
                ino: num(3),
                mtime_ns: parse_time(f[4]),
                mode: u32::from_str_radix(f[5], 8).unwrap(),
            },
        );
    }
    all
}

/// find's type letter as the index names it.
fn type_of(letter: u8) -> (pb::EntryType, &'static str) {
    match letter {
        b'f' => (pb::EntryType::File, "file"),
        b'd' => (pb::EntryType::Dir, "dir"),
        b'l' => (pb::EntryType::Symlink, "symlink"),
        _ => (pb::EntryType::Other, "other"),
    }
}

fn join(root: &Path, rel: &[u8]) -> PathBuf {
    if rel.is_empty() {
        root.to_owned()
    } else {
        root.join(OsStr::from_bytes(rel))
    }
}

/// A path for a message: long ones shortened in the middle.
fn show(p: &[u8]) -> String {
    let s = lossy(p);
    if s.len() <= 200 {
        format!("{s:?}")
    } else {
        format!(
            "{:?}…{:?} ({} bytes)",
            &s[..s.floor_char_boundary(60)],
            &s[s.ceil_char_boundary(s.len() - 100)..],
            p.len()
        )
    }
}

/// What the Stat RPC's answer `r` on `path` gets wrong against find's
/// figures `seen`, as a line for the user.
fn stat_differs(
    rel: &[u8],
    seen: &Seen,
    path: &[u8],
    r: Result<tonic::Response<pb::StatResponse>, tonic::Status>,
) -> Option<String> {
    let r = match r {
        Err(e) => {
            return Some(format!(
                "  fsctl info {} fails: {} ({:?})",
                show(rel),
                brief(e.message()),
                e.code()
            ));
        }
        Ok(r) => r.into_inner(),
    };
    let (kind, kind_name) = type_of(seen.kind);
    let mut diffs = Vec::new();
    if r.path != path {
        diffs.push(format!("path {}", show(&r.path)));
    }
    if r.r#type != kind as i32 {
        diffs.push(format!("type {:?} (find: {kind_name})", r.r#type()));
    }
    // A folder's own size is left to du.
    if kind != pb::EntryType::Dir && r.size != seen.size {
        diffs.push(format!("size {} (find: {})", r.size, seen.size));
    }
    if r.nlink != seen.nlink {
        diffs.push(format!("links {} (find: {})", r.nlink, seen.nlink));
    }
    if r.inode != seen.ino {
        diffs.push(format!("inode {} (find: {})", r.inode, seen.ino));
    }
    // SQLite writes its -shm file through mmap: the kernel moves its mtime
    // without any inotify event, so no watcher can know it.
    if r.mtime_ns as i128 != seen.mtime_ns && !rel.ends_with(b"-shm") {
        diffs.push(format!("mtime_ns {} (find: {})", r.mtime_ns, seen.mtime_ns));
    }
    // A symlink's own mode means nothing on Linux.
    if r.mode & 0o7777 != seen.mode && kind != pb::EntryType::Symlink {
        diffs.push(format!(
            "mode {:o} (find: {:o})",
            r.mode & 0o7777,
            seen.mode
        ));
    }
    (!diffs.is_empty()).then(|| format!("  fsctl info {} says {}", show(rel), diffs.join(", ")))
}

/// An error text for a message: long ones (they echo long paths) cut in
/// the middle.
fn brief(t: &str) -> String {
    let t = t.trim();
    if t.len() <= 300 {
        t.to_owned()
    } else {
        format!(
            "{}…{}",
            &t[..t.floor_char_boundary(120)],
            &t[t.ceil_char_boundary(t.len() - 160)..]
        )
    }
}

/// A watched root with a ready daemon, and scratch space outside it.
struct Case {
    tmp: tempfile::TempDir,
    root: PathBuf,
    inst: Instance,
    /// Other roots of the instance: their entries are not this case's.
    others: Vec<PathBuf>,
}

impl Case {
    /// `build` fills the root before the daemon starts; `config` is written
    /// to config.toml; `env` is given to the daemon.
    fn start_with(
        build: impl FnOnce(&Path),
        config: Option<&str>,
        env: impl FnOnce(&Path) -> Vec<(String, String)>,
        unprivileged: bool,
    ) -> Case {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        build(&root);
        let runner = if unprivileged {
            Runner::unprivileged(&[&root], tmp.path())
        } else {
            Runner::current()
        };
        let mut inst = Instance::new(tmp.path().join("home"), &[&root], runner);
        if let Some(c) = config {
            std::fs::write(inst.home.join("config.toml"), c).unwrap();
        }
        inst.env = env(&root);
        inst.start();
        Case {
            tmp,
            root,
            inst,
            others: Vec::new(),
        }
    }

    fn start(build: impl FnOnce(&Path)) -> Case {
        Case::start_with(build, None, |_| Vec::new(), false)
    }

    /// Scratch space outside the root.
    fn outside(&self, rel: &str) -> PathBuf {
        self.tmp.path().join("outside").join(rel)
    }

    fn p(&self, rel: &str) -> PathBuf {
        join(&self.root, rel.as_bytes())
    }

    /// The index equals the walk, less the entries under `hidden` (paths
    /// relative to the root that must never be listed), entry by entry; and
    /// `fsctl du` equals GNU du for the root and every folder of `dirs`.
    /// Every difference is collected before failing.
    fn check(&self, after: &str, hidden: &[&[u8]], dirs: &[&str]) {
        let mut problems = Vec::new();
        self.compare(after, hidden, dirs, &mut problems);
        assert!(
            problems.is_empty(),
            "after {after}:\n{}",
            problems.join("\n")
        );
    }

    /// The daemon logged no error (a write that fails drops its batch).
    fn no_errors(&self, after: &str) {
        let log = self.inst.log();
        let errors: Vec<&str> = log.lines().filter(|l| l.contains(" ERROR ")).collect();
        assert!(
            errors.is_empty(),
            "the daemon logged errors by {after}:\n{}",
            errors.join("\n")
        );
    }

    /// [`Case::check`]'s comparisons, adding to `problems`.
    fn compare(&self, after: &str, hidden: &[&[u8]], dirs: &[&str], problems: &mut Vec<String>) {
        self.listing(after, hidden, problems);
        for d in std::iter::once(&"").chain(dirs) {
            self.du(after, &self.p(d), problems);
        }
    }

    fn listing(&self, after: &str, hidden: &[&[u8]], problems: &mut Vec<String>) {
        let under = |p: &[u8], h: &[u8]| {
            p == h || (p.len() > h.len() && p.starts_with(h) && p[h.len()] == b'/')
        };
        let disk: BTreeMap<Vec<u8>, Seen> = find_meta(&self.inst.runner, &self.root)
            .into_iter()
            .filter(|(p, _)| !hidden.iter().any(|h| under(p, h)))
            .collect();
        let expected: BTreeSet<Vec<u8>> = disk.keys().cloned().collect();
        let mut got = indexed_rel(&self.inst, &self.root);
        for o in &self.others {
            let mut theirs = b"!outside!".to_vec();
            theirs.extend_from_slice(o.as_os_str().as_bytes());
            theirs.push(b'/');
            got.retain(|p| !p.starts_with(&theirs));
        }
        if expected != got {
            problems.push(format!(
                "fsctl search -0 '*' lists {} entries, find lists {} (after {after}):\n{}",
                got.len(),
                expected.len(),
                diff_first(&expected, &got, 20)
            ));
        }
        for h in hidden {
            if got.iter().any(|p| under(p, h)) {
                problems.push(format!(
                    "{} must never be listed, yet fsctl search -0 '*' lists it",
                    show(h)
                ));
            }
        }
        // Each entry's figures, from the Stat RPC against find's.
        let both: Vec<(Vec<u8>, Seen)> =
            disk.into_iter().filter(|(p, _)| got.contains(p)).collect();
        let root = self.root.clone();
        // Four requests in flight: the daemon answers them in parallel.
        let mut chunks: Vec<Vec<(Vec<u8>, Seen)>> = vec![Vec::new(); 4];
        for (i, e) in both.into_iter().enumerate() {
            chunks[i % 4].push(e);
        }
        let mut wrong: Vec<(Vec<u8>, String)> = grpc(&self.inst, async move |c| {
            let mut tasks = tokio::task::JoinSet::new();
            for chunk in chunks {
                let mut c = c.clone();
                let root = root.clone();
                tasks.spawn(async move {
                    let mut wrong = Vec::new();
                    for (rel, seen) in chunk {
                        let path = join(&root, &rel).into_os_string().into_vec();
                        let r = c.stat(pb::StatRequest { path: path.clone() }).await;
                        if let Some(msg) = stat_differs(&rel, &seen, &path, r) {
                            wrong.push((rel, msg));
                        }
                    }
                    wrong
                });
            }
            let mut wrong = Vec::new();
            while let Some(done) = tasks.join_next().await {
                wrong.extend(done.unwrap());
            }
            wrong
        });
        wrong.sort();
        let wrong: Vec<String> = wrong.into_iter().map(|(_, m)| m).collect();
        if !wrong.is_empty() {
            let n = wrong.len();
            let mut msg = format!(
                "{n} entries have figures other than find's (after {after}); the first 20:\n"
            );
            msg.push_str(&wrong[..n.min(20)].join("\n"));
            problems.push(msg);
        }
    }

    /// `fsctl du PATH` against `du -s -B1 PATH` and `du -s -b PATH`.
    fn du(&self, after: &str, path: &Path, problems: &mut Vec<String>) {
        let (blocks, apparent) = gnu_du(&self.inst.runner, path);
        let shown = show(path.as_os_str().as_bytes());
        let v = match self.du_json(path) {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!(
                    "fsctl du {shown} fails after {after} (du -s -B1 says {blocks}): {}",
                    brief(&e)
                ));
                return;
            }
        };
        if v["bytes"].as_u64() != Some(blocks) {
            problems.push(format!(
                "fsctl du says {} allocated bytes, du -s -B1 says {blocks} for {shown} after {after}",
                v["bytes"]
            ));
        }
        if v["apparent_bytes"].as_u64() != Some(apparent) {
            problems.push(format!(
                "fsctl du says {} apparent bytes, du -s -b says {apparent} for {shown} after {after}",
                v["apparent_bytes"]
            ));
        }
    }

    fn du_json(&self, path: &Path) -> Result<Value, String> {
        let out = self
            .inst
            .fsctl_cmd(&["du", "--sync", "--json", "--top", "0"])
            .arg(path)
            .output()
            .unwrap();
        if !out.status.success() {
            return Err(text(&out));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("bad JSON ({e}): {}", text(&out)))
    }

    /// `fsctl info PATH --json` and the Stat RPC answer on `rel`, byte-exact,
    /// with find's figures.
    fn info_exact(&self, rel: &[u8], disk: &BTreeMap<Vec<u8>, Seen>) -> Vec<String> {
        let mut problems = Vec::new();
        let path = join(&self.root, rel);
        let Some(seen) = disk.get(rel) else {
            return vec![format!("{} is not on disk (test bug)", show(rel))];
        };
        let (kind, kind_name) = type_of(seen.kind);
        let out = self
            .inst
            .fsctl_cmd(&["info", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        if !out.status.success() {
            problems.push(format!(
                "fsctl info {} fails: {}",
                show(rel),
                brief(&text(&out))
            ));
        } else {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            let want = lossy(path.as_os_str().as_bytes());
            if v["path"].as_str() != Some(want.as_str()) {
                problems.push(format!(
                    "fsctl info {} prints path {} (expected {want:?})",
                    show(rel),
                    v["path"]
                ));
            }
            if v["type"].as_str() != Some(kind_name)
                || v["inode"].as_u64() != Some(seen.ino)
                || (kind != pb::EntryType::Dir && v["size"].as_u64() != Some(seen.size))
                || v["nlink"].as_u64() != Some(seen.nlink)
            {
                problems.push(format!(
                    "fsctl info {} says type {} inode {} size {} links {}; find: {kind_name} {} {} {}",
                    show(rel),
                    v["type"],
                    v["inode"],
                    v["size"],
                    v["nlink"],
                    seen.ino,
                    seen.size,
                    seen.nlink
                ));
            }
        }
        let bytes = path.as_os_str().as_bytes().to_vec();
        let r = grpc(&self.inst, async |c| {
            c.stat(pb::StatRequest {
                path: bytes.clone(),
            })
            .await
        });
        match r {
            Err(e) => problems.push(format!(
                "Stat({}) fails: {} ({:?})",
                show(rel),
                brief(e.message()),
                e.code()
            )),
            Ok(r) => {
                let r = r.into_inner();
                if r.path != bytes || r.r#type != kind as i32 || r.inode != seen.ino {
                    problems.push(format!(
                        "Stat({}) answers path {} type {:?} inode {} (expected the same bytes, {kind_name}, {})",
                        show(rel),
                        show(&r.path),
                        r.r#type(),
                        r.inode,
                        seen.ino
                    ));
                }
            }
        }
        problems
    }
}

/// Bytes of a varied, deterministic size.
fn bytes(seed: usize) -> Vec<u8> {
    vec![b'a' + (seed % 26) as u8; (seed * 7919) % 23_000]
}

/// `dirs` folders of `files` files each, under `at`.
fn populate(at: &Path, dirs: usize, files: usize, salt: usize) {
    for d in 0..dirs {
        let dir = at
            .join(format!("pkg{d:02}"))
            .join(["lib", "doc", "src"][d % 3]);
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..files {
            std::fs::write(
                dir.join(format!("file{f:03}.dat")),
                bytes(d * files + f + salt),
            )
            .unwrap();
        }
    }
}

const NONE: &[&[u8]] = &[];

/// A ustar archive of `dirs` folders of `files` files each, like the
/// trees [`populate`] makes, written straight to `at` (no files to create
/// first: file creation is the slow part on a busy machine).
fn tarball(at: &Path, dirs: usize, files: usize, salt: usize) {
    fn header(name: &str, typeflag: u8, size: usize) -> [u8; 512] {
        let mut h = [0u8; 512];
        let mut put = |at: usize, v: &[u8]| h[at..at + v.len()].copy_from_slice(v);
        put(0, name.as_bytes());
        put(
            100,
            if typeflag == b'5' {
                b"0000755\0"
            } else {
                b"0000644\0"
            },
        );
        put(108, b"0000000\0");
        put(116, b"0000000\0");
        put(124, format!("{size:011o}\0").as_bytes());
        put(136, format!("{:011o}\0", 1_700_000_000).as_bytes());
        put(148, b"        ");
        put(156, &[typeflag]);
        put(257, b"ustar\0");
        put(263, b"00");
        let sum: u32 = h.iter().map(|&b| b as u32).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        h
    }
    let mut out = Vec::new();
    for d in 0..dirs {
        let dir = format!("./pkg{d:02}/{}", ["lib", "doc", "src"][d % 3]);
        out.extend_from_slice(&header(&format!("./pkg{d:02}/"), b'5', 0));
        out.extend_from_slice(&header(&format!("{dir}/"), b'5', 0));
        for f in 0..files {
            let body = bytes(d * files + f + salt);
            out.extend_from_slice(&header(&format!("{dir}/file{f:03}.dat"), b'0', body.len()));
            out.extend_from_slice(&body);
            out.resize(out.len().next_multiple_of(512), 0);
        }
    }
    out.resize(out.len() + 1024, 0);
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    std::fs::write(at, out).unwrap();
}

#[test]
fn tar_extracts_thousands_of_files() {
    let c = Case::start(|_| {});
    let (a, b) = (c.outside("a.tar"), c.outside("b.tar"));
    tarball(&a, 30, 100, 0);
    tarball(&b, 35, 60, 17);
    // The archives hold what they should (GNU tar reads them).
    let listed = sh(c.tmp.path(), &format!("tar -tf {} | wc -l", a.display()));
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "3060");

    let unpacked = c.p("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    sh(&unpacked, &format!("tar -xf {}", a.display()));
    c.check(
        "tar -x of 3,000 files",
        NONE,
        &["unpacked", "unpacked/pkg00", "unpacked/pkg07/doc"],
    );
    // A second archive over the first: files replaced with other sizes,
    // new folders.
    sh(&unpacked, &format!("tar -xf {}", b.display()));
    c.check(
        "a second tar -x over the first",
        NONE,
        &[
            "unpacked",
            "unpacked/pkg01/doc",
            "unpacked/pkg33",
            "unpacked/pkg34/doc",
        ],
    );
    sh(&c.root, "rm -r unpacked/pkg1*");
    c.check("rm -r of ten unpacked folders", NONE, &["unpacked"]);
}

#[test]
fn git_commit_checkout_between_branches_and_gc() {
    let c = Case::start(|_| {});
    let repo = c.p("repo");
    populate(&repo, 10, 20, 3);
    let git = |args: &str| {
        sh(
            &repo,
            &format!(
                "GIT_CONFIG_NOSYSTEM=1 HOME={home} GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org \
                 GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org \
                 git -c gc.auto=0 -c maintenance.auto=false {args}",
                home = c.tmp.path().display()
            ),
        )
    };
    git("init -q -b main");
    git("add -A");
    git("commit -q -m one");
    let dirs = ["repo", "repo/.git", "repo/.git/objects", "repo/pkg03"];
    c.check("git init, add and commit", NONE, &dirs);

    git("checkout -q -b feature");
    // Other sizes, deletions, a new folder.
    for f in 0..20 {
        write_file(&repo, format!("pkg03/lib/file{f:03}.dat"), &bytes(f + 5000));
    }
    sh(&repo, "rm -r pkg04 pkg05/src/file01*");
    populate(&repo.join("feature-only"), 4, 15, 99);
    git("add -A");
    git("commit -q -m two");
    c.check("a commit on a second branch", NONE, &dirs);

    git("checkout -q main");
    c.check(
        "git checkout back to main",
        NONE,
        &["repo", "repo/pkg03", "repo/pkg04", "repo/pkg05/src"],
    );
    git("gc -q");
    c.check(
        "git gc",
        NONE,
        &[
            "repo",
            "repo/.git",
            "repo/.git/objects",
            "repo/.git/objects/pack",
        ],
    );
    git("checkout -q feature");
    c.check(
        "git checkout feature after gc",
        NONE,
        &["repo", "repo/pkg03/lib", "repo/feature-only"],
    );
    // A local clone hard-links the object files of the first repository.
    sh(
        &c.root,
        "GIT_CONFIG_NOSYSTEM=1 git -c gc.auto=0 clone -q repo clone",
    );
    c.check(
        "git clone of a local repository (its objects hard-linked)",
        NONE,
        &["repo", "clone", "repo/.git/objects", "clone/.git/objects"],
    );
}

#[test]
fn rsync_delete_twice_with_different_sources() {
    let c = Case::start(|_| {});
    let one = c.outside("one");
    populate(&one, 12, 40, 0);
    write_file(&one, "only-in-one/keep.txt", b"one");
    let two = c.outside("two");
    populate(&two, 9, 50, 31);
    write_file(&two, "only-in-two/new.txt", b"two");
    symlink("pkg00", two.join("link-to-pkg00")).unwrap();

    std::fs::create_dir(c.p("mirror")).unwrap();
    let rsync = |from: &Path| {
        sh(
            &c.root,
            &format!("rsync -a --delete {}/ mirror/", from.display()),
        )
    };
    rsync(&one);
    c.check(
        "rsync -a --delete from a first source",
        NONE,
        &["mirror", "mirror/pkg00", "mirror/only-in-one"],
    );
    rsync(&two);
    c.check(
        "rsync -a --delete from a second source",
        NONE,
        &[
            "mirror",
            "mirror/pkg00",
            "mirror/pkg08/src",
            "mirror/only-in-two",
        ],
    );
    // rsnapshot's way: a second snapshot hard-links what did not change.
    sh(
        &c.root,
        &format!(
            "rsync -a --delete {}/ snap1/ && rsync -a --delete --link-dest=../snap1 {}/ snap2/",
            one.display(),
            one.display()
        ),
    );
    write_file(
        &one,
        "pkg00/lib/changed.dat",
        b"only in the second snapshot",
    );
    sh(
        &c.root,
        &format!(
            "rsync -a --delete --link-dest=../snap2 {}/ snap3/",
            one.display()
        ),
    );
    c.check(
        "rsync --link-dest snapshots (rsnapshot)",
        NONE,
        &["snap1", "snap2", "snap3", "snap3/pkg00"],
    );
}

#[test]
fn hard_links_made_removed_and_moved_keep_du_exact() {
    let c = Case::start(|root| populate(&root.join("src"), 8, 60, 7));
    let dirs = [
        "src",
        "backup",
        "src/pkg00",
        "backup/pkg00",
        "src/pkg01/doc",
        "backup/pkg01/doc",
    ];
    sh(&c.root, "cp -al src backup");
    c.check("cp -al src backup", NONE, &dirs);

    sh(&c.root, "rm src/pkg00/lib/file0* backup/pkg01/doc/file01*");
    c.check("rm of some of the links", NONE, &dirs);

    // A linked file moved across folders: its twin stays behind.
    sh(
        &c.root,
        "mv backup/pkg02/src/file005.dat src/pkg01/doc/moved-twin.dat",
    );
    c.check(
        "mv of a hard-linked file across folders",
        NONE,
        &["src/pkg01", "backup/pkg02", "src/pkg02/src"],
    );

    // ln to a second name, then the first name removed.
    sh(
        &c.root,
        "ln src/pkg03/lib/file010.dat src/second-name.dat && rm src/pkg03/lib/file010.dat",
    );
    c.check(
        "ln to a second name and rm of the first",
        NONE,
        &["src/pkg03", "backup/pkg03"],
    );

    sh(&c.root, "rm -r src");
    c.check("rm -r of the original tree", NONE, &["backup"]);
}

/// pnpm's layout with the store outside the root: another project linking
/// a store file raises the link count of the indexed copy.
#[test]
fn a_link_made_and_removed_outside_the_root() {
    let c = Case::start(|root| {
        write_file(root, "proj/node_modules/dep/index.js", &[b'j'; 3000]);
        write_file(root, "proj/src/main.js", b"require('dep')");
    });
    let elsewhere = c.outside("store/index.js");
    std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
    std::fs::hard_link(c.p("proj/node_modules/dep/index.js"), &elsewhere).unwrap();
    // The first extra link of a file, made outside every root, raises no
    // event anywhere the daemon watches (inotify tells the folder where it
    // happened and the inode itself, and a file with one link has no watch
    // of its own): GUIDE.md documents a scan as the remedy. du is right
    // meanwhile either way (the inode is counted once).
    let out = c
        .inst
        .fsctl(&["scan", "--wait", c.p("proj").to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    c.check(
        "ln of an indexed file to a path outside the root, then fsctl scan",
        NONE,
        &["proj"],
    );
    // From then on the file has a watch of its own (inotify): more links
    // made or removed outside the root show at once. The notify backend
    // has no watch on a single file (FSEvents and ReadDirectoryChangesW
    // watch folders), so there the guide's remedy, a scan, is what shows
    // them.
    let rescan_if_notify = || {
        if watch_backend().as_deref() == Some("notify") {
            let out = c
                .inst
                .fsctl(&["scan", "--wait", c.p("proj").to_str().unwrap()]);
            assert!(out.status.success(), "{}", text(&out));
        }
    };
    let again = c.outside("store/index-2.js");
    std::fs::hard_link(c.p("proj/node_modules/dep/index.js"), &again).unwrap();
    rescan_if_notify();
    c.check("a second link outside the root", NONE, &["proj"]);
    std::fs::remove_file(&elsewhere).unwrap();
    rescan_if_notify();
    c.check("rm of one link outside the root", NONE, &["proj"]);
    std::fs::remove_file(&again).unwrap();
    rescan_if_notify();
    c.check("rm of the last link outside the root", NONE, &["proj"]);
}

/// Regression: a file's own watch (inotify's, on its inode) was known by
/// the last link it was added through; once that link's folder left the
/// root, a link made or removed elsewhere was looked for at the old path
/// alone, and the indexed link kept its old count. The fuzz met it as a
/// folder moved out and back and its link removed before the daemon
/// scanned it again.
#[test]
fn link_counts_follow_the_inode_after_the_watched_link_left_the_root() {
    let c = Case::start(|root| {
        write_file(root, "a.dat", &[b'a'; 3000]);
        std::fs::create_dir(root.join("d")).unwrap();
    });
    // Made while watching: the link in d is the one the watch is added
    // through last (its folder's event comes after the root's).
    std::fs::hard_link(c.p("a.dat"), c.p("d/b.dat")).unwrap();
    c.check("ln a.dat d/b.dat", NONE, &["d"]);
    let away = c.outside("d");
    std::fs::create_dir_all(away.parent().unwrap()).unwrap();
    std::fs::rename(c.p("d"), &away).unwrap();
    c.check("mv d out of the root", NONE, &[]);
    // The notify backend has no watch on a single file: there a scan
    // shows links made or removed outside the root (as in
    // a_link_made_and_removed_outside_the_root).
    let rescan_if_notify = || {
        if watch_backend().as_deref() == Some("notify") {
            let out = c.inst.fsctl(&["scan", "--wait", c.root.to_str().unwrap()]);
            assert!(out.status.success(), "{}", text(&out));
        }
    };
    let third = c.outside("c.dat");
    std::fs::hard_link(c.p("a.dat"), &third).unwrap();
    rescan_if_notify();
    c.check("ln a.dat to a third name outside the root", NONE, &[]);
    std::fs::remove_file(away.join("b.dat")).unwrap();
    rescan_if_notify();
    c.check("rm of the link that left the root with d", NONE, &[]);
    std::fs::remove_file(&third).unwrap();
    rescan_if_notify();
    c.check("rm of the third name: one link left", NONE, &[]);
}

#[test]
fn writes_through_one_hard_link_show_under_every_name() {
    // The links exist before the daemon starts, so the scan knows them;
    // only writes happen while watching.
    let c = Case::start(|root| {
        write_file(root, "a/shared.log", &[b'x'; 1000]);
        std::fs::create_dir(root.join("b")).unwrap();
        std::fs::hard_link(root.join("a/shared.log"), root.join("b/twin.log")).unwrap();
        write_file(root, "a/other.bin", &[b'o'; 5000]);
        std::fs::hard_link(root.join("a/other.bin"), root.join("a/other-twin.bin")).unwrap();
    });
    c.check("a scan of a tree with hard links", NONE, &["a", "b"]);
    // Appended through a/, truncated through the twin in the same folder.
    sh(
        &c.root,
        "head -c 300000 /dev/zero >> a/shared.log && : > a/other-twin.bin",
    );
    c.check(
        "an append through a/shared.log (b/twin.log is the same file) and a truncate through a/other-twin.bin (a/other.bin is the same file)",
        NONE,
        &["a", "b"],
    );
    sh(
        &c.root,
        "chmod 640 b/twin.log && touch -d 2001-01-01 a/other.bin",
    );
    c.check(
        "a chmod through b/twin.log and a touch through a/other.bin",
        NONE,
        &["a", "b"],
    );
}

#[test]
fn editor_saves_replace_files_by_rename() {
    let c = Case::start(|root| {
        for i in 0..40 {
            write_file(root, format!("notes/note{i:02}.md"), &bytes(i));
        }
    });
    let notes = c.p("notes");
    for i in 0..20 {
        // Write a temporary file beside the original, rename it over.
        let tmp = notes.join(format!(".note{i:02}.md.swp-tmp"));
        std::fs::write(&tmp, bytes(i + 300)).unwrap();
        std::fs::rename(&tmp, notes.join(format!("note{i:02}.md"))).unwrap();
    }
    c.check(
        "writes to a temporary file renamed over the original",
        NONE,
        &["notes"],
    );

    for i in 20..40 {
        // vim: probe file 4913, original renamed to file~, new file written,
        // backup deleted.
        let file = notes.join(format!("note{i:02}.md"));
        let backup = notes.join(format!("note{i:02}.md~"));
        let probe = notes.join("4913");
        std::fs::write(&probe, b"").unwrap();
        std::fs::remove_file(&probe).unwrap();
        std::fs::rename(&file, &backup).unwrap();
        std::fs::write(&file, bytes(i + 700)).unwrap();
        std::fs::remove_file(&backup).unwrap();
    }
    c.check("vim's backup dance", NONE, &["notes"]);

    // sed -i: a temporary file in the folder renamed over the original.
    sh(&notes, "sed -i 's/a/bb/g' note00.md note01.md note02.md");
    c.check("sed -i on three files", NONE, &["notes"]);

    // A backup kept (backup=yes): file~ stays beside the new file.
    let file = notes.join("note05.md");
    std::fs::rename(&file, notes.join("note05.md~")).unwrap();
    std::fs::write(&file, b"kept a backup").unwrap();
    c.check("a save that keeps file~", NONE, &["notes"]);
}

/// Renames that meet within one burst, before the daemon has applied any:
/// logrotate's chain, two files renamed onto one name (the last wins), a
/// rename of a rename, and a folder moved onto the name another one just
/// left. Each is a Move the index learns of only when the burst is applied.
#[test]
fn renames_that_meet_in_one_burst() {
    let c = Case::start(|root| {
        for (i, n) in ["app.log", "app.log.1", "app.log.2", "app.log.3"]
            .iter()
            .enumerate()
        {
            write_file(root, format!("logs/{n}"), &bytes(i + 1));
        }
        write_file(root, "a/first", &bytes(10));
        write_file(root, "a/second", &bytes(11));
        write_file(root, "a/third", &bytes(12));
        write_file(root, "d1/inside/f", &bytes(13));
        write_file(root, "d2/g", &bytes(14));
        write_file(root, "d5/h", &bytes(15));
        write_file(root, "a/fourth", &bytes(16));
        write_file(root, "e1/old", &bytes(17));
    });
    sh(
        &c.root,
        "cd logs && mv app.log.3 app.log.4 && mv app.log.2 app.log.3 && mv app.log.1 app.log.2 \
         && mv app.log app.log.1 && echo new > app.log && cd .. \
         && mv a/first a/x && mv a/second a/x \
         && mv a/third a/y && mv a/y a/z \
         && mv d1 d3 && mv d2 d1 \
         && mv d5 d6 && mv a/fourth d6/moved && mv d6/h d6/h2 \
         && mv e1 e2 && mkdir e1 && echo q > e1/q && mv e1 e3",
    );
    // The last two renames' events name d6 by its old name d5: its watch
    // is renamed only when the batch is applied.
    let after = "logrotate, two renames onto one name, a rename of a rename, a folder onto a freed name, renames into a just-renamed folder, a new folder under a just-freed name renamed on";
    c.check(after, NONE, &["logs", "a", "d1", "d3", "d6", "e2", "e3"]);
    c.no_errors(after);
}

/// A folder moved out of the root and another put under its name in the
/// same burst: the new folder holds other entries and needs watching, though
/// its path, kind and perhaps its times are those of the one indexed.
#[test]
fn a_folder_replaced_by_another_under_its_name() {
    let c = Case::start(|root| populate(&root.join("proj"), 3, 10, 1));
    let away = c.outside("old");
    std::fs::create_dir_all(&away).unwrap();
    sh(
        &c.root,
        &format!(
            "mv proj {away}/proj && mkdir proj && echo x > proj/new.txt && mkdir proj/sub && echo y > proj/sub/f",
            away = away.display()
        ),
    );
    c.check("mv proj out; mkdir proj; files in it", NONE, &["proj"]);
    // Watched: what happens in it now shows too.
    write_file(&c.root, "proj/sub/later", b"later");
    c.check("a file made in the new folder", NONE, &["proj"]);
    // A copy of the old one in its place (cp -a keeps the times).
    sh(
        &c.root,
        &format!(
            "mv proj {away}/second && cp -a {away}/proj proj",
            away = away.display()
        ),
    );
    c.check(
        "mv proj out; cp -a of the first one back",
        NONE,
        &["proj", "proj/pkg01"],
    );
}

/// A root's own folder has no watched parent: when it is deleted, moved
/// away or replaced while the daemon runs, only the root's own watch tells.
/// What the user sees: its entries leave search and du at once (du says the
/// folder is gone), `status` shows the root as an error saying so, `--sync`
/// still answers for the other root and leaves no cookie file anywhere, and
/// a folder back at the path (made anew, moved back, or swapped in) is
/// indexed afresh, exactly. The moved-away tree's changes never show.
#[test]
fn a_root_deleted_moved_away_or_replaced_while_watched() {
    let tmp = tempfile::tempdir().unwrap();
    let keep = tmp.path().join("keep");
    let root = tmp.path().join("root");
    populate(&keep, 2, 4, 1);
    populate(&root, 3, 10, 2);
    let inst = Instance::new(tmp.path().join("home"), &[&keep, &root], Runner::current());
    let mut c = Case {
        tmp,
        root,
        inst,
        others: vec![keep.clone()],
    };
    c.inst.start();
    // What the index lists under one root (the other's are `!outside!`).
    let under = |c: &Case, dir: &Path| -> BTreeSet<Vec<u8>> {
        let mut got = indexed_rel(&c.inst, dir);
        got.retain(|p| !p.starts_with(b"!outside!"));
        got
    };
    let keep_listing = |c: &Case| {
        let (dirs, others) = listing(&keep);
        let walked: BTreeSet<Vec<u8>> = dirs[1..]
            .iter()
            .chain(&others)
            .map(|p| {
                p.strip_prefix(&keep)
                    .unwrap()
                    .as_os_str()
                    .as_bytes()
                    .to_vec()
            })
            .collect();
        assert_eq!(under(c, &keep), walked, "the other root");
    };
    let root_state = |c: &Case| {
        let status = c.inst.status();
        let r = status["roots"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["path"] == c.root.to_str().unwrap())
            .cloned()
            .unwrap();
        (r["state"].as_str().unwrap().to_owned(), r.to_string())
    };
    let gone = |c: &Case, after: &str| {
        util::eventually(
            Duration::from_secs(10),
            &format!("after {after}, status never said the root is gone"),
            || {
                let (state, shown) = root_state(c);
                state == "error" && shown.contains("is gone")
            },
        );
        // Nothing is left to do until it is back: the daemon is ready.
        let status = c.inst.status();
        assert_eq!(status["state"], "ready", "after {after}: {status}");
        let left: Vec<String> = under(c, &c.root).iter().map(|p| lossy(p)).collect();
        assert!(left.is_empty(), "after {after}, still listed: {left:?}");
        let du = c.inst.fsctl(&["du", c.root.to_str().unwrap()]);
        assert!(
            !du.status.success() && text(&du).contains("its root's folder is gone"),
            "after {after}, fsctl du: {}",
            text(&du)
        );
        keep_listing(c);
    };
    c.check("the start", NONE, &["pkg00"]);

    sh(c.tmp.path(), "rm -rf root");
    gone(&c, "rm -rf of the root");
    write_file(&keep, "pkg00/lib/later.txt", b"later");
    keep_listing(&c);

    // Made anew: found within a second or so and indexed whole.
    std::fs::create_dir(&c.root).unwrap();
    populate(&c.root, 2, 3, 7);
    util::eventually(
        Duration::from_secs(10),
        "the new root folder was never scanned",
        || root_state(&c).0 == "ready",
    );
    c.check("mkdir of the root again", NONE, &["pkg01"]);
    write_file(&c.root, "pkg01/doc/watched.txt", b"watched");
    c.check("a file made in it", NONE, &[]);

    // Moved away: what happens in it there never shows under the root.
    let away = c.outside("moved");
    std::fs::create_dir_all(away.parent().unwrap()).unwrap();
    std::fs::rename(&c.root, &away).unwrap();
    gone(&c, "mv of the root out");
    write_file(&away, "pkg00/lib/there.txt", b"there");
    util::sync(&c.inst);
    gone(&c, "a write in the moved-away root");

    // Moved back, then swapped for another folder in one go.
    std::fs::rename(&away, &c.root).unwrap();
    util::eventually(
        Duration::from_secs(10),
        "the moved-back root was never scanned",
        || root_state(&c).0 == "ready",
    );
    c.check("mv of the root back", NONE, &["pkg00"]);
    let second = c.outside("second");
    sh(
        c.tmp.path(),
        &format!(
            "mv root {} && mkdir -p root/fresh && echo x > root/fresh/one.txt",
            second.display()
        ),
    );
    util::eventually(
        Duration::from_secs(10),
        "the swapped-in root was never scanned",
        || root_state(&c).0 == "ready" && under(&c, &c.root).len() == 2,
    );
    write_file(&second, "pkg00/lib/old-tree.txt", b"old");
    write_file(&c.root, "fresh/two.txt", b"two");
    c.check("the root swapped for another folder", NONE, &["fresh"]);
    keep_listing(&c);

    let cookies = sh(c.tmp.path(), "find . -name '.fsindex-cookie-*'");
    assert_eq!(text(&cookies).trim(), "", "cookie files left behind");
    c.no_errors("a root deleted, moved away and replaced");
}

#[test]
fn sqlite_database_in_wal_mode_written_in_a_loop() {
    let c = Case::start(|root| std::fs::create_dir(root.join("data")).unwrap());
    let db_path = c.p("data/app.sqlite");
    let db = rusqlite::Connection::open(&db_path).unwrap();
    let mode: String = db
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    db.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)")
        .unwrap();
    for i in 0..300 {
        db.execute(
            "INSERT INTO t (body) VALUES (?1)",
            [vec![(i % 251) as u8; 1000 + (i * 37) % 3000]],
        )
        .unwrap();
        if i % 50 == 49 {
            db.execute("DELETE FROM t WHERE id % 3 = 0", []).unwrap();
        }
    }
    assert!(db_path.with_extension("sqlite-wal").exists());
    c.check("300 transactions on an open WAL database", NONE, &["data"]);

    db.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    c.check("a truncating WAL checkpoint", NONE, &["data"]);
    for i in 0..100 {
        db.execute(
            "UPDATE t SET body = ?1 WHERE id % 7 = ?2",
            (vec![1u8; 2000 + i], (i % 7) as i64),
        )
        .unwrap();
    }
    db.close().unwrap();
    c.check("closing the database (the WAL is removed)", NONE, &["data"]);
}

#[test]
fn folder_moved_out_and_back_and_case_only_renames() {
    let c = Case::start(|root| {
        populate(&root.join("proj"), 6, 20, 11);
        write_file(root, "proj/Readme.md", b"readme");
        write_file(root, "proj/Docs/guide.md", b"guide");
    });
    let away = c.outside("proj-away");
    std::fs::create_dir_all(away.parent().unwrap()).unwrap();
    std::fs::rename(c.p("proj"), &away).unwrap();
    c.check("a folder moved out of the root", NONE, &[]);
    // Changed while away: none of it may leak in, all of it must come back.
    write_file(&away, "changed-while-away.txt", b"x");
    std::fs::rename(&away, c.p("proj-back")).unwrap();
    c.check(
        "the folder moved back under another name",
        NONE,
        &["proj-back", "proj-back/pkg02"],
    );

    std::fs::rename(c.p("proj-back/Readme.md"), c.p("proj-back/README.md")).unwrap();
    std::fs::rename(c.p("proj-back/Docs"), c.p("proj-back/docs")).unwrap();
    c.check(
        "case-only renames of a file and a folder",
        NONE,
        &["proj-back", "proj-back/docs"],
    );

    // A folder renamed over an empty one (rename(2) replaces it), and a
    // symlink replaced by a folder of the same name.
    std::fs::create_dir(c.p("empty-target")).unwrap();
    symlink("proj-back", c.p("was-a-link")).unwrap();
    c.check("an empty folder and a symlink made", NONE, &[]);
    sh(
        &c.root,
        "mv -T proj-back/pkg01 empty-target && rm was-a-link && mkdir was-a-link && echo x > was-a-link/now-a-folder \
         && rm -r proj-back/pkg04 && ln -s ../empty-target proj-back/pkg04",
    );
    c.check(
        "mv -T of a folder over an empty one, a symlink replaced by a folder, a folder by a symlink",
        NONE,
        &["proj-back", "empty-target", "was-a-link"],
    );
    // Renames to a name that is equal once normalised (NFC to NFD), or
    // once decoded lossily (one invalid byte for another).
    let pb = c.p("proj-back");
    std::fs::write(pb.join("caf\u{e9}.txt"), b"nfc").unwrap();
    std::fs::write(pb.join(OsStr::from_bytes(b"bad\xff.txt")), b"bad").unwrap();
    c.check(
        "an NFC name and a name with an invalid byte made",
        NONE,
        &[],
    );
    std::fs::rename(pb.join("caf\u{e9}.txt"), pb.join("cafe\u{301}.txt")).unwrap();
    std::fs::rename(
        pb.join(OsStr::from_bytes(b"bad\xff.txt")),
        pb.join(OsStr::from_bytes(b"bad\xfe.txt")),
    )
    .unwrap();
    c.check(
        "renames from NFC to NFD and from one invalid byte to another",
        NONE,
        &["proj-back"],
    );

    // Two folders and two files swap names through a temporary name.
    sh(
        &c.root,
        "mv proj-back/pkg02 proj-back/swap.tmp && mv proj-back/pkg03 proj-back/pkg02 && mv proj-back/swap.tmp proj-back/pkg03 \
         && mv proj-back/README.md x.tmp && mv proj-back/docs/guide.md proj-back/README.md && mv x.tmp proj-back/docs/guide.md",
    );
    c.check(
        "two folders and two files swapping names",
        NONE,
        &[
            "proj-back",
            "proj-back/pkg02",
            "proj-back/pkg03",
            "proj-back/docs",
        ],
    );

    // A deploy's atomic symlink swap: ln -sfn makes a new link and renames
    // it over the old one (GNU ln does exactly that with -f on a symlink).
    sh(
        &c.root,
        "mkdir -p releases/v1 releases/v2 && echo one > releases/v1/app && echo two-two > releases/v2/app \
         && ln -sfn releases/v1 current && ln -sfn releases/v2 current.tmp && mv -T current.tmp current",
    );
    c.check("an atomic symlink swap", NONE, &["releases"]);
    let disk = find_meta(&c.inst.runner, &c.root);
    let problems = c.info_exact(b"current", &disk);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(
        c.inst.search0(&["guide.md"]),
        [c.p("proj-back/docs/guide.md").as_os_str().as_bytes()],
        "fsctl search guide.md after the case-only rename of Docs to docs"
    );
}

#[test]
fn chmod_000_on_a_folder_and_back() {
    // As a user that permission bits apply to (root reads mode 000 folders).
    let c = Case::start_with(
        |root| {
            populate(&root.join("open"), 3, 10, 5);
            write_file(root, "open/locked-later/inner.txt", b"inside");
            write_file(root, "open/locked-later/sub/deeper.txt", b"deeper");
        },
        None,
        |_| Vec::new(),
        true,
    );
    let folder = c.p("open/locked-later");
    let mode = |m: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(m)).unwrap();
    };
    let incomplete = |after: &str, want: bool| {
        let v = c.du_json(&c.p("open")).unwrap();
        assert_eq!(
            v["incomplete"].as_bool(),
            Some(want),
            "fsctl du open says \"incomplete\": {} after {after} (du: {})",
            v["incomplete"],
            if want {
                "cannot read open/locked-later"
            } else {
                "reads everything"
            }
        );
    };
    mode(0o000);
    let after = "chmod 000 open/locked-later";
    c.check(after, NONE, &["open", "open/locked-later"]);
    incomplete(after, true);
    mode(0o755);
    let after = "chmod 755 open/locked-later (back)";
    c.check(after, NONE, &["open", "open/locked-later"]);
    incomplete(after, false);
    // Files' and whole trees' modes, as chmod and chmod -R change them.
    sh(
        &c.root,
        "chmod 600 open/pkg00/lib/file000.dat && chmod 4755 open/pkg01/doc/file001.dat && chmod -R go-rwx open/pkg02",
    );
    c.check("chmod of files and chmod -R go-rwx", NONE, &["open"]);
}

/// Names that break naive code: each is created while the daemon watches
/// (and once before it starts, for the scan).
fn hostile_names() -> Vec<Vec<u8>> {
    let mut names: Vec<Vec<u8>> = [
        "new\nline.txt",
        "-leading-dash",
        "--help",
        "star*ques?pipe|bang!colon:dq\"sq'back\\slash",
        "caf\u{e9}.txt",
        "cafe\u{301}.txt",
        "invoice\u{202e}fdp.exe",
        "\u{1f600} party \u{1f389}.txt",
        "trailing space ",
        "tab\there",
        " leading space",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    for n in [&b"\n"[..], b"-", b"~", b" "] {
        names.push(n.to_vec());
    }
    names.push(b"bad\xff".to_vec());
    // The same lossy text as the one above: only the bytes tell them apart.
    names.push(b"bad\xfe".to_vec());
    names.push(b"bad\xef\xbf\xbd".to_vec()); // U+FFFD itself, valid UTF-8
    // One name in three cases: three files on a case-sensitive file system.
    for n in ["Same.txt", "same.txt", "SAME.txt"] {
        names.push(n.as_bytes().to_vec());
    }
    names.push(b"latin1-\xe9t\xe9.txt".to_vec());
    names.push([b"L".repeat(251), b".txt".to_vec()].concat());
    // 255 bytes of two-byte characters and one more byte.
    names.push([b"\xc3\xa9".repeat(127), b"e".to_vec()].concat());
    names
}

fn make_hostile(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for (i, n) in hostile_names().iter().enumerate() {
        std::fs::write(dir.join(OsStr::from_bytes(n)), bytes(i + 1)).unwrap();
    }
    let sub = dir.join(OsStr::from_bytes(b"folder\nwith \xff odd name"));
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("inner.txt"), b"inner").unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(dir.join("a fifo"))
            .status()
            .unwrap()
            .success()
    );
    symlink("does-not-exist", dir.join("dangling")).unwrap();
    symlink("self-loop", dir.join("self-loop")).unwrap();
    symlink("loop-b", dir.join("loop-a")).unwrap();
    symlink("loop-a", dir.join("loop-b")).unwrap();
    symlink(OsStr::from_bytes(b"bad\xff"), dir.join("link-to-bad")).unwrap();
    sh(dir, "truncate -s 1G sparse.img");
    // A unix socket, and (as root) device nodes, as in a chroot or a
    // debootstrap tree.
    drop(std::os::unix::net::UnixListener::bind(dir.join("a socket")).unwrap());
    if crate::util::is_root() {
        sh(dir, "mknod chardev c 1 3 && mknod blockdev b 7 200");
    } else {
        std::fs::write(dir.join("chardev"), b"").unwrap();
        std::fs::write(dir.join("blockdev"), b"").unwrap();
    }
}

/// Every hostile entry under `dir`, relative to the root.
fn hostile_rels(dir: &str) -> Vec<Vec<u8>> {
    let mut rels: Vec<Vec<u8>> = hostile_names();
    for extra in [
        &b"folder\nwith \xff odd name"[..],
        b"folder\nwith \xff odd name/inner.txt",
        b"a fifo",
        b"dangling",
        b"self-loop",
        b"loop-a",
        b"link-to-bad",
        b"sparse.img",
        b"a socket",
        b"chardev",
        b"blockdev",
    ] {
        rels.push(extra.to_vec());
    }
    rels.into_iter()
        .map(|r| [dir.as_bytes(), b"/", &r].concat())
        .collect()
}

#[test]
fn hostile_names_fifos_symlinks_and_sparse_files() {
    let c = Case::start(|root| make_hostile(&root.join("scanned")));
    make_hostile(&c.p("live"));
    c.check(
        "hostile names, a fifo, symlinks and a sparse file made while watching",
        NONE,
        &["scanned", "live"],
    );
    let mut problems = Vec::new();
    let disk = find_meta(&c.inst.runner, &c.root);
    for dir in ["scanned", "live"] {
        for rel in hostile_rels(dir) {
            problems.extend(c.info_exact(&rel, &disk));
        }
    }
    // A folder's listing over gRPC carries the names byte-exact.
    for dir in ["scanned", "live"] {
        let path = c.p(dir).into_os_string().into_vec();
        let r = grpc(&c.inst, async |cl| {
            cl.list(pb::ListRequest {
                path: path.clone(),
                ..Default::default()
            })
            .await
        });
        let expected: BTreeSet<Vec<u8>> = std::fs::read_dir(c.p(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().as_bytes().to_vec())
            .collect();
        match r {
            Err(e) => problems.push(format!("List({dir}) fails: {}", brief(e.message()))),
            Ok(r) => {
                let got: BTreeSet<Vec<u8>> =
                    r.into_inner().entries.into_iter().map(|e| e.name).collect();
                if got != expected {
                    problems.push(format!(
                        "List({dir}) names differ from readdir:\n{}",
                        diff_first(&expected, &got, 20)
                    ));
                }
            }
        }
    }
    // Both spellings of café are one word to search.
    let found: BTreeSet<Vec<u8>> = c.inst.search0(&["caf\u{e9}.txt"]).into_iter().collect();
    let want: BTreeSet<Vec<u8>> = ["scanned", "live"]
        .iter()
        .flat_map(|d| ["caf\u{e9}.txt", "cafe\u{301}.txt"].map(|n| c.p(d).join(n)))
        .map(|p| p.into_os_string().into_vec())
        .collect();
    if found != want {
        problems.push(format!(
            "fsctl search café.txt (NFC) must find both spellings:\n{}",
            diff_first(&want, &found, 20)
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // Blocks that change without the size: a sparse file written in the
    // middle, space preallocated past the end.
    sh(
        &c.p("live"),
        "dd if=/dev/urandom of=sparse.img bs=64K count=16 seek=8192 conv=notrunc status=none \
         && fallocate -n -l 4M sparse.img && : > prealloc.bin && fallocate -n -l 3M prealloc.bin",
    );
    c.check(
        "a write into the middle of a sparse file and fallocate --keep-size",
        NONE,
        &["live"],
    );

    // Times before the epoch and far ahead (tar and rsync restore such
    // times; touch sets them), on a file, a folder and a symlink itself.
    sh(
        &c.p("live"),
        "touch -d '1901-12-14 00:00:00.123456789 UTC' -- -leading-dash \
         && touch -d '2200-02-28 12:00:00.5 UTC' tab*here \
         && touch -d '1969-12-31 23:59:59.9 UTC' 'folder
'* \
         && touch -h -d '1970-01-01 00:00:00 UTC' dangling",
    );
    c.check(
        "touch -d of times before 1970 and after 2038",
        NONE,
        &["live"],
    );

    // Renamed while watching: a folder and a file, to other odd names.
    let live = c.p("live");
    let odd = |b: &[u8]| live.join(OsStr::from_bytes(b));
    std::fs::rename(
        odd(b"folder\nwith \xff odd name"),
        odd(b"renamed\xfe\nfolder"),
    )
    .unwrap();
    std::fs::rename(odd(b"bad\xff"), odd(b"moved \xff\xfe")).unwrap();
    std::fs::rename(odd(b"same.txt"), odd(b"sAmE.txt")).unwrap();
    c.check("renames to other odd names", NONE, &["live"]);
    let disk = find_meta(&c.inst.runner, &c.root);
    let mut problems = Vec::new();
    for rel in [
        &b"live/renamed\xfe\nfolder/inner.txt"[..],
        b"live/moved \xff\xfe",
        b"live/sAmE.txt",
        b"live/bad\xfe",
    ] {
        problems.extend(c.info_exact(rel, &disk));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // And removed while watching.
    sh(&c.root, "rm -r live");
    c.check("rm -r of the hostile names", NONE, &["scanned"]);
}

/// A chain of 230 folders of 20-byte names (4,830 bytes of path) under
/// `top`, made with relative steps, with `file` at the bottom.
fn deep_chain(top: &Path, file: &str) {
    std::fs::create_dir_all(top).unwrap();
    sh(
        top,
        &format!(
            "for i in $(seq -w 1 230); do mkdir lvl-$i-abcdefghijkl && cd -P lvl-$i-abcdefghijkl || exit 1; done; \
             printf 'at the bottom' > {file}; head -c 100000 /dev/zero > big-bottom.bin"
        ),
    );
}

fn deep_path(top: &Path, file: &str) -> Vec<u8> {
    let mut p = top.as_os_str().as_bytes().to_vec();
    for i in 1..=230 {
        p.extend_from_slice(format!("/lvl-{i:03}-abcdefghijkl").as_bytes());
    }
    p.push(b'/');
    p.extend_from_slice(file.as_bytes());
    p
}

#[test]
fn paths_longer_than_path_max() {
    let c = Case::start(|root| deep_chain(&root.join("deep-scanned"), "zq-deepest-scanned.txt"));
    deep_chain(&c.p("deep-live"), "zq-deepest-live.txt");
    let mut problems = Vec::new();
    for (top, file) in [
        ("deep-scanned", "zq-deepest-scanned.txt"),
        ("deep-live", "zq-deepest-live.txt"),
    ] {
        let want = deep_path(&c.p(top), file);
        assert!(want.len() > 4096);
        let out = c.inst.fsctl(&["search", "--sync", "-0", file]);
        let found: Vec<&[u8]> = out
            .stdout
            .split(|&b| b == 0)
            .filter(|s| !s.is_empty())
            .collect();
        if found != [want.as_slice()] {
            problems.push(format!(
                "fsctl search {file} finds {:?}, expected the one file {} bytes deep under {top}",
                found.iter().map(|p| show(p)).collect::<Vec<_>>(),
                want.len()
            ));
        }
    }
    // info and ls at the bottom of the chain.
    let disk = find_meta(&c.inst.runner, &c.root);
    for (top, file) in [
        ("deep-scanned", "zq-deepest-scanned.txt"),
        ("deep-live", "zq-deepest-live.txt"),
    ] {
        let full = deep_path(&c.p(top), file);
        let rel = full[c.root.as_os_str().len() + 1..].to_vec();
        problems.extend(c.info_exact(&rel, &disk));
        let bottom = full[..full.len() - file.len() - 1].to_vec();
        let r = grpc(&c.inst, async |cl| {
            cl.list(pb::ListRequest {
                path: bottom.clone(),
                ..Default::default()
            })
            .await
        });
        let want = vec![b"big-bottom.bin".to_vec(), file.as_bytes().to_vec()];
        match r {
            Err(e) => problems.push(format!(
                "fsctl ls of the bottom folder of {top} fails: {}",
                brief(e.message())
            )),
            Ok(r) => {
                let mut got: Vec<Vec<u8>> =
                    r.into_inner().entries.into_iter().map(|e| e.name).collect();
                got.sort();
                if got != want {
                    problems.push(format!(
                        "fsctl ls of the bottom folder of {top} lists {:?}, expected {:?}",
                        got.iter().map(|n| lossy(n)).collect::<Vec<_>>(),
                        want.iter().map(|n| lossy(n)).collect::<Vec<_>>()
                    ));
                }
            }
        }
    }
    // du of folders whose own path is longer than PATH_MAX: GNU du cannot
    // be given such a path, but prints every folder beneath one it can.
    for top in ["deep-scanned", "deep-live"] {
        let gnu = |flag: &str| -> BTreeMap<Vec<u8>, u64> {
            let out = std::process::Command::new("du")
                .args(["-0", flag])
                .arg(c.p(top))
                .output()
                .unwrap();
            out.stdout
                .split(|&b| b == 0)
                .filter(|l| !l.is_empty())
                .map(|l| {
                    let tab = l.iter().position(|&b| b == b'\t').unwrap();
                    let n = std::str::from_utf8(&l[..tab]).unwrap().parse().unwrap();
                    (l[tab + 1..].to_vec(), n)
                })
                .collect()
        };
        let (blocks, apparent) = (gnu("-B1"), gnu("-b"));
        for level in [200, 230] {
            let mut path = c.p(top).into_os_string().into_vec();
            for i in 1..=level {
                path.extend_from_slice(format!("/lvl-{i:03}-abcdefghijkl").as_bytes());
            }
            let out = c
                .inst
                .fsctl_cmd(&["du", "--sync", "--json"])
                .arg(OsStr::from_bytes(&path))
                .output()
                .unwrap();
            let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            let (b, a) = (blocks.get(&path), apparent.get(&path));
            if !out.status.success()
                || v["bytes"].as_u64().as_ref() != b
                || v["apparent_bytes"].as_u64().as_ref() != a
            {
                problems.push(format!(
                    "fsctl du of the folder {level} levels down {top} ({} bytes of path) says {} allocated, {} apparent; du says {b:?}, {a:?}{}",
                    path.len(),
                    v["bytes"],
                    v["apparent_bytes"],
                    if out.status.success() {
                        String::new()
                    } else {
                        format!(" (fsctl: {})", brief(&text(&out)))
                    }
                ));
            }
        }
    }
    let after = "a chain of 230 folders (4,830 bytes of path)";
    c.compare(
        after,
        NONE,
        &[
            "deep-scanned",
            "deep-live",
            "deep-live/lvl-001-abcdefghijkl",
        ],
        &mut problems,
    );
    assert!(
        problems.is_empty(),
        "after {after}:\n{}",
        problems.join("\n")
    );
    sh(&c.root, "rm -r deep-live");
    c.check(
        "rm -r of a chain deeper than PATH_MAX",
        NONE,
        &["deep-scanned"],
    );
}

#[test]
fn sensitive_files_count_in_du_but_are_never_listed() {
    let c = Case::start(|root| {
        write_file(root, "keys/id_rsa", &[b'k'; 3000]);
        write_file(root, "keys/.env", &[b'e'; 10_000]);
        write_file(root, "keys/notes.txt", b"plain");
        write_file(root, ".ssh/id_rsa", &[b'k'; 2600]);
        write_file(root, ".ssh/known_hosts", &[b'h'; 9000]);
        write_file(root, ".ssh/config", b"Host *");
        // Whole folders of the tiers: SKIP `secrets*`, BLOCK `.ssh/*`.
        write_file(root, "app/secrets-store/db.txt", &[b's'; 7000]);
        write_file(root, "app/secrets-store/more/api.txt", &[b's'; 70_000]);
        write_file(root, "app/main.py", b"print()");
        write_file(root, ".ssh/old-keys/one", &[b'1'; 5000]);
    });
    let hidden: &[&[u8]] = &[
        b"keys/id_rsa",
        b"keys/.env",
        b".ssh/id_rsa",
        b".ssh/known_hosts",
        b".ssh/config",
        b".ssh/old-keys",
        b"app/secrets-store",
    ];
    c.check(
        "a scan of folders holding id_rsa, .env, a secrets folder and .ssh",
        hidden,
        &["keys", ".ssh", "app"],
    );

    write_file(&c.root, "keys/id_ed25519", &[b'k'; 400]);
    write_file(&c.root, "keys/zq-deploy.key", &[b'k'; 900]);
    write_file(&c.root, "keys/.env.production", &[b'p'; 50_000]);
    std::fs::write(c.p("keys/.env"), [b'e'; 30_000]).unwrap();
    std::fs::remove_file(c.p("keys/id_rsa")).unwrap();
    write_file(&c.root, ".ssh/authorized_keys", &[b'a'; 12_000]);
    write_file(&c.root, "app/secrets-store/more/new.txt", &[b'n'; 40_000]);
    write_file(&c.root, "app/secrets-2/x.txt", &[b'x'; 9000]);
    std::fs::remove_dir_all(c.p(".ssh/old-keys")).unwrap();
    let hidden: &[&[u8]] = &[
        b"keys/id_ed25519",
        b"keys/zq-deploy.key",
        b"keys/.env",
        b"keys/.env.production",
        b".ssh/id_rsa",
        b".ssh/known_hosts",
        b".ssh/config",
        b".ssh/authorized_keys",
        b"app/secrets-store",
        b"app/secrets-2",
    ];
    c.check(
        "BLOCK and SKIP files and folders created, grown and removed while watching",
        hidden,
        &["keys", ".ssh", "app"],
    );
    // Their sizes count; their names are never written anywhere: not in
    // the database, its WAL, or the logs.
    let mut leaks = Vec::new();
    let mut stack = vec![c.inst.home.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(content) = std::fs::read(&p) {
                // Names that match a pattern without being one: the
                // patterns themselves may well be logged.
                for name in [
                    "zq-deploy.key",
                    "known_hosts",
                    "authorized_keys",
                    ".env.production",
                    "old-keys",
                    "secrets-store",
                    "secrets-2",
                ] {
                    if content.windows(name.len()).any(|w| w == name.as_bytes()) {
                        leaks.push(format!("{name} is written in {}", p.display()));
                    }
                }
            }
        }
    }
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
}

/// The daemon's environment with its home at `root/home`, so that the
/// default exclusions (cache and trash) fall inside the root.
fn home_in_root(root: &Path) -> Vec<(String, String)> {
    let home = root.join("home");
    vec![
        ("HOME".into(), home.display().to_string()),
        (
            "XDG_CACHE_HOME".into(),
            home.join(".cache").display().to_string(),
        ),
        (
            "XDG_DATA_HOME".into(),
            home.join(".local/share").display().to_string(),
        ),
    ]
}

/// A BLOCK file (a key, a certificate: never listed) hard-linked into
/// several folders, as `cp -al` of a project with a Python venv does with
/// certifi's cacert.pem: each folder's unlisted sizes count it, and du
/// counts the inode once, as GNU du does (it used to count it once per
/// folder: 282,624 bytes too many for one cacert.pem).
#[test]
fn a_blocked_file_hard_linked_into_several_folders() {
    let c = Case::start(|root| {
        let certs = root.join("proj/venv/certifi");
        std::fs::create_dir_all(&certs).unwrap();
        std::fs::write(certs.join("cacert.pem"), vec![b'c'; 100_000]).unwrap();
        std::fs::write(certs.join("core.py"), b"where = 1").unwrap();
        std::fs::create_dir_all(root.join("proj/keys")).unwrap();
        std::fs::write(root.join("proj/keys/id_rsa"), vec![b'k'; 3000]).unwrap();
        std::fs::hard_link(certs.join("cacert.pem"), root.join("proj/keys/ca-copy.pem")).unwrap();
    });
    let blocked = |top: &str| -> Vec<Vec<u8>> {
        ["venv/certifi/cacert.pem", "keys/id_rsa", "keys/ca-copy.pem"]
            .iter()
            .map(|f| format!("{top}/{f}").into_bytes())
            .collect()
    };
    let hidden = blocked("proj");
    let hidden: Vec<&[u8]> = hidden.iter().map(|h| h.as_slice()).collect();
    c.check("a scan", &hidden, &["proj", "proj/keys", "proj/venv"]);
    // The copy is made while watching.
    sh(
        &c.root,
        "cp -al proj backup && ln proj/keys/id_rsa backup/id_rsa",
    );
    let mut both = blocked("proj");
    both.extend(blocked("backup"));
    both.push(b"backup/id_rsa".to_vec());
    let both: Vec<&[u8]> = both.iter().map(|h| h.as_slice()).collect();
    c.check(
        "cp -al proj backup",
        &both,
        &["proj", "backup", "backup/keys", "backup/venv/certifi"],
    );
    sh(&c.root, "rm -rf proj/keys");
    c.check("rm -rf of one copy's keys", &both, &["proj", "backup"]);
}

/// uv (and pnpm, and cargo's sccache...) hard-link files from a cache into
/// projects: the cache is excluded, its files are also indexed under the
/// project. du counts each inode once, wherever it meets it first.
#[test]
fn an_excluded_cache_hard_linked_into_a_project() {
    let c = Case::start_with(
        |root| {
            populate(&root.join("home/.cache/uv/archive-v0/abc"), 2, 30, 3);
            populate(&root.join("home/proj/.venv/lib/site-packages"), 1, 5, 8);
            let venv = root.join("home/proj/.venv/lib/site-packages");
            for d in 0..2 {
                let sub = ["lib", "doc"][d];
                for f in 0..30 {
                    let from = root
                        .join(format!("home/.cache/uv/archive-v0/abc/pkg{d:02}/{sub}"))
                        .join(format!("file{f:03}.dat"));
                    let to = venv.join(format!("linked-{d}-{f:03}.dat"));
                    std::fs::hard_link(from, to).unwrap();
                }
            }
        },
        None,
        home_in_root,
        false,
    );
    let mut problems = Vec::new();
    c.listing("a scan", &[b"home/.cache"], &mut problems);
    // Give the low-priority measuring walk its moment after ready (the du
    // checks below report it if it never comes).
    let cache = c.p("home/.cache");
    util::poll_until(Duration::from_secs(15), || {
        let v = c.du_json(&c.p("home")).unwrap_or(Value::Null);
        v["children"].as_array().is_some_and(|rows| {
            rows.iter().any(|r| {
                r["path"] == cache.to_str().unwrap()
                    && r.get("measured_at").is_some_and(|m| !m.is_null())
            })
        })
    });
    for d in ["home", "home/proj", "home/proj/.venv", ""] {
        c.du(
            "a scan of a cache hard-linked into a project",
            &c.p(d),
            &mut problems,
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn excluded_folders_are_du_rows_of_their_own() {
    let c = Case::start_with(
        |root| {
            populate(&root.join("home/.cache/pip"), 3, 20, 40);
            write_file(
                root,
                "home/.local/share/Trash/files/old.iso",
                &[b't'; 300_000],
            );
            write_file(root, "home/.local/share/kept.txt", b"kept");
            write_file(root, "home/Documents/a.txt", b"a");
            populate(&root.join("proj/build-out"), 2, 25, 70);
            write_file(root, "proj/main.c", b"int main;");
        },
        Some("excludes = [\"build-out/\"]\n"),
        home_in_root,
        false,
    );
    let hidden: &[&[u8]] = &[
        b"home/.cache",
        b"home/.local/share/Trash",
        b"proj/build-out",
    ];
    let mut problems = Vec::new();
    c.listing(
        "a scan with trash, cache and build-out excluded",
        hidden,
        &mut problems,
    );
    let pairs = [
        ("home", "home/.cache"),
        ("home/.local/share", "home/.local/share/Trash"),
        ("proj", "proj/build-out"),
    ];
    // The excluded row of `child` in `fsctl du PARENT --json`, and all rows.
    let row = |parent: &str, child: &str| -> (Value, Value) {
        let v = c.du_json(&c.p(parent)).unwrap_or(Value::Null);
        let child = c.p(child);
        let row = v["children"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["path"] == child.to_str().unwrap()))
            .cloned()
            .unwrap_or(Value::Null);
        (row, v["children"].clone())
    };
    // Measured by a low-priority walk: give it a moment after ready (a
    // row still unmeasured after that is a problem reported below).
    util::poll_until(Duration::from_secs(15), || {
        pairs.iter().all(|(p, ch)| {
            row(p, ch)
                .0
                .get("measured_at")
                .is_some_and(|m| !m.is_null())
        })
    });
    for (parent, child) in pairs {
        let (row, rows) = row(parent, child);
        if row.get("measured_at").is_none_or(Value::is_null) {
            problems.push(format!(
                "fsctl du {parent} --json has no row for the excluded {child} with \"excluded\": true and a \"measured_at\" (waited 15 s after ready); its rows: {rows}"
            ));
            continue;
        }
        let (blocks, _) = gnu_du(&c.inst.runner, &c.p(child));
        if row["excluded"] != true {
            problems.push(format!(
                "fsctl du {parent} --json: the row of {child} says \"excluded\": {}, expected true: {row}",
                row["excluded"]
            ));
        }
        if row["bytes"].as_u64() != Some(blocks) {
            problems.push(format!(
                "fsctl du says {} allocated bytes, du -s -B1 says {blocks} for the excluded {child}",
                row["bytes"]
            ));
        }
    }
    for (parent, _) in pairs {
        c.du("a scan with excluded folders", &c.p(parent), &mut problems);
    }
    c.du("a scan with excluded folders", &c.root, &mut problems);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Thousands of random operations, each kind a real program or system call
/// makes, in bursts with nothing waited for in between; a kill -9 of the
/// daemon in the middle with more changes made while it is down. After each
/// burst the index must equal find, the Stat RPC and GNU du (the root and
/// three random folders). `FSINDEX_FUZZ_SEED=N` replays one run;
/// `FSINDEX_FUZZ_ROUNDS` makes it longer.
#[test]
fn random_operations_in_bursts_keep_the_index_exact() {
    let seed: u64 = std::env::var("FSINDEX_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x005e_edf5_1dec);
    let rounds: usize = std::env::var("FSINDEX_FUZZ_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    // Checks after every operation, to find which one a failure follows.
    let each = std::env::var_os("FSINDEX_FUZZ_EACH").is_some();
    let mut c = Case::start(|root| populate(&root.join("seed"), 6, 25, 11));
    let mut rng = Rng(seed | 1);
    let names: Vec<Vec<u8>> = [
        b"a".as_slice(),
        b"b.txt",
        b"Notes.md",
        b"photo 01.jpg",
        b"caf\xc3\xa9",
        b"\xff\xfe raw",
        b"new\nline",
        b"deep",
        b"x.tar.gz",
        b"UPPER",
        b"upper",
        b"-dash",
    ]
    .iter()
    .map(|n| n.to_vec())
    .collect();
    let stash = c.outside("stash");
    std::fs::create_dir_all(&stash).unwrap();
    let mut log: Vec<String> = Vec::new();
    let mut linked = false;
    // The notify backend (FSEvents, ReadDirectoryChangesW) has no watch on
    // a single file, so link counts changed by links made or removed
    // where no watched folder sees it show after a scan
    // (a_link_made_and_removed_outside_the_root): see "mv back" below.
    let notify = watch_backend().as_deref() == Some("notify");
    let top = c.root.clone();
    let r = |p: &Path| lossy(p.strip_prefix(&top).unwrap_or(p).as_os_str().as_bytes());
    for round in 0..rounds {
        if round == rounds / 2 {
            c.inst.kill9();
        }
        for step in 0..250 {
            let (dirs, others) = listing(&c.root);
            let name = OsStr::from_bytes(rng.pick(&names).unwrap()).to_owned();
            let dir = rng.pick(&dirs).unwrap().clone();
            let other_dir = rng.pick(&dirs).unwrap().clone();
            let file = rng.pick(&others).cloned();
            let sub = (dirs.len() > 1).then(|| dirs[1 + rng.below(dirs.len() - 1)].clone());
            let n = rng.below(18);
            let what = match (n, &file, &sub) {
                (0..=2, _, _) => {
                    let size = [0, 1, 4095, 4096, 70_000][rng.below(5)];
                    let _ = std::fs::write(dir.join(&name), vec![b'z'; size]);
                    format!("write {size} B to {}", r(&dir.join(&name)))
                }
                (3, Some(f), _) => {
                    use std::io::Write;
                    let _ = std::fs::OpenOptions::new()
                        .append(true)
                        .open(f)
                        .and_then(|mut h| h.write_all(&[b'y'; 1000]));
                    format!("append to {}", r(f))
                }
                (4, Some(f), _) => {
                    let len = [0, 10, 1 << 20][rng.below(3)];
                    let _ = std::fs::OpenOptions::new()
                        .write(true)
                        .open(f)
                        .and_then(|h| h.set_len(len));
                    format!("truncate {} to {len}", r(f))
                }
                (5, Some(f), _) => {
                    // An editor's save: a new file renamed over the old.
                    let tmp = f.with_extension("swp~");
                    let _ = std::fs::write(&tmp, b"saved").and_then(|_| std::fs::rename(&tmp, f));
                    format!("save {} by rename", r(f))
                }
                (6, Some(f), _) => {
                    let _ = std::fs::rename(f, other_dir.join(&name));
                    format!("mv {} {}", r(f), r(&other_dir.join(&name)))
                }
                (7, _, Some(s)) => {
                    // Into its own subtree fails, as it should.
                    let _ = std::fs::rename(s, other_dir.join(&name));
                    format!("mv {}/ {}", r(s), r(&other_dir.join(&name)))
                }
                (8, _, _) => {
                    let _ = std::fs::create_dir_all(dir.join(&name).join("p").join(&name));
                    format!("mkdir -p in {}", r(&dir))
                }
                (9, Some(f), _) => {
                    let _ = std::fs::remove_file(f);
                    format!("rm {}", r(f))
                }
                (10, _, Some(s)) if rng.below(3) == 0 => {
                    let _ = std::fs::remove_dir_all(s);
                    format!("rm -r {}", r(s))
                }
                (11, Some(f), _) => {
                    linked = true;
                    let _ = std::fs::hard_link(f, other_dir.join(&name));
                    format!("ln {} {}", r(f), r(&other_dir.join(&name)))
                }
                (12, Some(f), _) => {
                    let _ = symlink(f, other_dir.join(&name));
                    format!("ln -s {} {}", r(f), r(&other_dir.join(&name)))
                }
                (13, Some(f), _) => {
                    use std::os::unix::fs::PermissionsExt;
                    let mode = [0o600, 0o644, 0o755, 0o400][rng.below(4)];
                    let _ = std::fs::set_permissions(f, std::fs::Permissions::from_mode(mode));
                    format!("chmod {mode:o} {}", r(f))
                }
                (14, Some(f), _) => {
                    let t = std::time::SystemTime::UNIX_EPOCH
                        + Duration::from_secs(1_000_000_000 + rng.below(1 << 20) as u64);
                    let _ = std::fs::File::options()
                        .write(true)
                        .open(f)
                        .and_then(|h| h.set_modified(t));
                    format!("touch -d {}", r(f))
                }
                (15, _, Some(s)) => {
                    // Out of the root and, some bursts later, back. A link
                    // made in a folder that leaves the root before the
                    // daemon saw it is a link made outside the root: no
                    // event tells (see a_link_made_and_removed_outside_the_root
                    // and GUIDE.md), so the daemon catches up first.
                    if linked && c.inst.daemon_pid().is_some() {
                        util::sync(&c.inst);
                        linked = false;
                    }
                    let away = stash.join(format!("{round}-{step}"));
                    let _ = std::fs::rename(s, &away);
                    format!("mv {} out", r(s))
                }
                (16, _, _) => {
                    let back: Vec<PathBuf> = std::fs::read_dir(&stash)
                        .unwrap()
                        .flatten()
                        .map(|e| e.path())
                        .collect();
                    if let Some(b) = rng.pick(&back) {
                        // A link in it to a file in the root, removed before
                        // the daemon has scanned the folder, lowers that
                        // file's count where no watched folder sees it: only
                        // the inode's own watch (inotify) tells. Under
                        // notify the daemon catches up first.
                        let holds_links = notify && {
                            use std::os::unix::fs::MetadataExt;
                            listing(b)
                                .1
                                .iter()
                                .any(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.nlink() > 1))
                        };
                        let _ = std::fs::rename(b, dir.join(&name));
                        if holds_links && c.inst.daemon_pid().is_some() {
                            util::sync(&c.inst);
                        }
                    }
                    format!("mv back to {}", r(&dir.join(&name)))
                }
                // Into its own subtree too: cp refuses that only after
                // copying part of the source into the copy it is making
                // (linking copies it made, never removing anything).
                (17, _, Some(s)) => {
                    sh(
                        &c.root,
                        &format!(
                            "cp -a -- '{}' '{}' 2>/dev/null; true",
                            s.display(),
                            other_dir.join("copy").display()
                        ),
                    );
                    format!("cp -a {} {}", r(s), r(&other_dir.join("copy")))
                }
                _ => continue,
            };
            log.push(format!("{round}.{step} {what}"));
            if each && c.inst.daemon_pid().is_some() {
                c.check(&format!("{round}.{step} {what}"), NONE, &[]);
            }
        }
        if round == rounds / 2 {
            c.inst.start();
        }
        // Shown only when the test fails: the whole burst, to replay by hand.
        eprintln!("burst {round}:\n{}", log.join("\n"));
        log.clear();
        let (dirs, _) = listing(&c.root);
        let rels: Vec<String> = (0..3)
            .filter_map(|_| rng.pick(&dirs[1..]).cloned())
            .filter_map(|d| {
                d.strip_prefix(&c.root)
                    .ok()
                    .and_then(|r| r.to_str().map(str::to_owned))
            })
            .collect();
        let rels: Vec<&str> = rels.iter().map(String::as_str).collect();
        let restarted = if round == rounds / 2 {
            ", the daemon killed before it and started after it"
        } else {
            ""
        };
        let after = format!(
            "burst {round} of seed {seed}{restarted} (replay: FSINDEX_FUZZ_SEED={seed}); its operations are in its stderr"
        );
        c.no_errors(&after);
        c.check(&after, NONE, &rels);
    }
}
