//! Oracles: what the index should hold, computed without fsindex (GNU
//! `find` and `du`, the test's own walk, the search semantics restated),
//! and diffs that show where an answer and its oracle part.

use std::collections::BTreeSet;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::instance::Runner;
use super::lossy;

/// Every path under `root` as `find` sees it when run by `runner`
/// (independent of fsindex's walker), root excluded.
pub fn find_oracle(runner: &Runner, root: &Path) -> BTreeSet<Vec<u8>> {
    let out = runner
        .command("find")
        .arg(root)
        .arg("-mindepth")
        .arg("1")
        .arg("-print0")
        .output()
        .unwrap();
    out.stdout
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// The entries of `all` whose path relative to `root`, folded, contains
/// every term (the DESIGN's search semantics, computed independently).
pub fn search_oracle(all: &BTreeSet<Vec<u8>>, root: &Path, terms: &[&str]) -> BTreeSet<Vec<u8>> {
    let prefix = root.as_os_str().as_bytes().len() + 1;
    let terms: Vec<String> = terms.iter().map(|t| fold(t)).collect();
    all.iter()
        .filter(|p| {
            let rel = fold(&String::from_utf8_lossy(&p[prefix..]));
            terms.iter().all(|t| rel.contains(t.as_str()))
        })
        .cloned()
        .collect()
}

/// `s` in NFC with full case folding: how search compares names and terms.
pub fn fold(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let nfc: String = s.nfc().collect();
    caseless::default_case_fold_str(&nfc).nfc().collect()
}

/// `du -s -B1` and `du -s -b` of `path`, as `runner` (GNU du is the oracle).
pub fn gnu_du(runner: &Runner, path: &Path) -> (u64, u64) {
    let get = |flag: &str| {
        let out = runner
            .command("du")
            .arg("-s")
            .arg(flag)
            .arg(path)
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&out.stdout);
        s.split_whitespace()
            .next()
            .unwrap_or_else(|| panic!("du {flag} {}: no output", path.display()))
            .parse::<u64>()
            .unwrap()
    };
    (get("-B1"), get("-b"))
}

/// Every folder and every other entry under `root` as the test's own walk
/// sees them now (links not followed; `root` is the first folder).
pub fn listing(root: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut dirs = vec![root.to_owned()];
    let mut others = Vec::new();
    let mut i = 0;
    while i < dirs.len() {
        if let Ok(rd) = std::fs::read_dir(&dirs[i]) {
            for e in rd.flatten() {
                match e.file_type() {
                    Ok(t) if t.is_dir() => dirs.push(e.path()),
                    Ok(_) => others.push(e.path()),
                    Err(_) => {}
                }
            }
        }
        i += 1;
    }
    (dirs, others)
}

/// Shows set differences readably.
pub fn diff(expected: &BTreeSet<Vec<u8>>, got: &BTreeSet<Vec<u8>>) -> String {
    let missing: Vec<String> = expected.difference(got).map(|p| lossy(p)).collect();
    let extra: Vec<String> = got.difference(expected).map(|p| lossy(p)).collect();
    format!("missing {missing:#?}\nextra {extra:#?}")
}

/// The first `n` paths missing from `got` and the first `n` extra in it,
/// one per line, quoted so that newlines and odd bytes stay visible.
pub fn diff_first(expected: &BTreeSet<Vec<u8>>, got: &BTreeSet<Vec<u8>>, n: usize) -> String {
    let show = |set: Vec<&Vec<u8>>| -> String {
        let total = set.len();
        let mut s: String = set
            .iter()
            .take(n)
            .map(|p| {
                let shown = lossy(p);
                let shown = if shown.len() > 160 {
                    format!(
                        "{}…{} ({} bytes)",
                        &shown[..shown.floor_char_boundary(60)],
                        &shown[shown.ceil_char_boundary(shown.len() - 80)..],
                        p.len()
                    )
                } else {
                    shown
                };
                format!("    {shown:?}\n")
            })
            .collect();
        if total > n {
            s.push_str(&format!("    … and {} more\n", total - n));
        }
        s
    };
    let missing: Vec<&Vec<u8>> = expected.difference(got).collect();
    let extra: Vec<&Vec<u8>> = got.difference(expected).collect();
    format!(
        "  {} missing from the index:\n{}  {} in the index but not on disk:\n{}",
        missing.len(),
        show(missing),
        extra.len(),
        show(extra)
    )
}
