//! Extraction throughput over a real tree (default `/usr/share/doc`): files
//! per second and MB of text per second, by kind, with failures by reason.
//!
//! The example is its own sandbox child, as the daemon will be
//! (`current_exe --extract`):
//!
//! ```text
//! cargo run --release -p fsindex-extract --example throughput -- /usr/share/doc
//! ```

use fsindex_extract::{Pool, SandboxConfig, kind_for_name};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Tally {
    files: u64,
    ok: u64,
    text_bytes: u64,
    time: Duration,
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    let first = args.next();
    if first.as_deref() == Some(std::ffi::OsStr::new("--extract")) {
        fsindex_extract::child_main();
    }
    let root = first.map_or_else(|| PathBuf::from("/usr/share/doc"), PathBuf::from);
    let mut files = Vec::new();
    walk(&root, &mut files);
    let exe = std::env::current_exe().expect("current_exe");
    let mut command = std::process::Command::new(exe);
    command.arg("--extract");
    let pool = Pool::new(command, SandboxConfig::default(), 1);

    let mut by_kind: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut failures: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut skipped = 0u64;
    let start = Instant::now();
    for f in &files {
        let Some(kind) = kind_for_name(f.file_name().unwrap_or_default().as_encoded_bytes()) else {
            skipped += 1;
            continue;
        };
        let t = Instant::now();
        let r = pool.extract(f, kind);
        let tally = by_kind.entry(kind.name()).or_default();
        tally.files += 1;
        tally.time += t.elapsed();
        match r {
            Ok(e) => {
                tally.ok += 1;
                tally.text_bytes += e.text.len() as u64;
            }
            Err(e) => *failures.entry(e.reason()).or_default() += 1,
        }
    }
    let total = start.elapsed().as_secs_f64();
    let (n, bytes): (u64, u64) = by_kind
        .values()
        .fold((0, 0), |(n, b), t| (n + t.files, b + t.text_bytes));
    println!(
        "{}: {} files seen, {} never read by name (images, archives, ...)",
        root.display(),
        files.len(),
        skipped
    );
    println!(
        "{:<11} {:>7} {:>7} {:>10} {:>9} {:>9}",
        "kind", "files", "ok", "text MB", "files/s", "MB/s"
    );
    for (k, t) in &by_kind {
        let s = t.time.as_secs_f64().max(1e-9);
        println!(
            "{:<11} {:>7} {:>7} {:>10.2} {:>9.0} {:>9.1}",
            k,
            t.files,
            t.ok,
            t.text_bytes as f64 / 1e6,
            t.files as f64 / s,
            t.text_bytes as f64 / 1e6 / s
        );
    }
    println!(
        "{:<11} {:>7} {:>7} {:>10.2} {:>9.0} {:>9.1}   ({total:.2} s)",
        "all",
        n,
        by_kind.values().map(|t| t.ok).sum::<u64>(),
        bytes as f64 / 1e6,
        n as f64 / total,
        bytes as f64 / 1e6 / total
    );
    println!("failures by reason: {failures:?}");
}

/// Every regular file under `dir`, symlinks not followed.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            walk(&e.path(), out);
        } else if t.is_file() {
            out.push(e.path());
        }
    }
}
