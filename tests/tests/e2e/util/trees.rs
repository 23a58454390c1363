//! Temp-tree builders: the awkward tree every capability is tested on,
//! wide trees for long scans, files written with given contents and times,
//! shell steps in a tree, and a seeded generator for random changes.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::text;

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
