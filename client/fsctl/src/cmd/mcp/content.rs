//! `search_file_content` without a content index: a bounded parallel scan of
//! the files the index selects, stopping at a result count or a time budget.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::text::{decode, looks_binary};

/// Files larger than this are not scanned (counted as skipped).
pub const MAX_FILE: u64 = 8 << 20;
/// A matched line is cut to this many characters.
const MAX_LINE_CHARS: usize = 400;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContentMatch {
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
}

#[derive(Debug, Default)]
pub struct ScanOutcome {
    pub matches: Vec<ContentMatch>,
    pub files_scanned: u64,
    pub files_skipped: u64,
    /// "maxResults" or "timeBudget" when the scan ended early.
    pub stopped: Option<&'static str>,
}

pub struct Scan {
    pub files: Vec<(PathBuf, u64)>,
    pub regex: regex::Regex,
    pub context: usize,
    pub max_results: usize,
    pub budget: Duration,
}

/// Runs on every core; blocking (call from a blocking thread).
pub fn run(scan: Scan) -> ScanOutcome {
    let deadline = Instant::now() + scan.budget;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let out = Mutex::new(ScanOutcome::default());
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(8);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    if Instant::now() > deadline {
                        stop.store(true, Ordering::Relaxed);
                        let mut o = out.lock().unwrap();
                        o.stopped.get_or_insert("timeBudget");
                        return;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((path, size)) = scan.files.get(i) else {
                        return;
                    };
                    let found = if *size > MAX_FILE {
                        None
                    } else {
                        scan_file(path, &scan.regex, scan.context)
                    };
                    let mut o = out.lock().unwrap();
                    let Some(found) = found else {
                        o.files_skipped += 1;
                        continue;
                    };
                    o.files_scanned += 1;
                    for m in found {
                        if o.matches.len() >= scan.max_results {
                            o.stopped.get_or_insert("maxResults");
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                        o.matches.push(m);
                    }
                }
            });
        }
    });
    let mut o = out.into_inner().unwrap();
    o.matches
        .sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    o
}

/// The matching lines of one file; None when it cannot be read or is binary.
fn scan_file(path: &PathBuf, re: &regex::Regex, context: usize) -> Option<Vec<ContentMatch>> {
    let bytes = std::fs::read(path).ok()?;
    if looks_binary(&bytes) {
        return None;
    }
    let (text, _) = decode(&bytes, true);
    let lines: Vec<&str> = text.lines().collect();
    let cut = |l: &str| {
        if l.chars().count() > MAX_LINE_CHARS {
            let mut s: String = l.chars().take(MAX_LINE_CHARS).collect();
            s.push('…');
            s
        } else {
            l.to_owned()
        }
    };
    let display = path.to_string_lossy().into_owned();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if !re.is_match(l) {
            continue;
        }
        let before = lines[i.saturating_sub(context)..i]
            .iter()
            .map(|l| cut(l))
            .collect();
        let after = lines[i + 1..(i + 1 + context).min(lines.len())]
            .iter()
            .map(|l| cut(l))
            .collect();
        out.push(ContentMatch {
            path: display.clone(),
            line: i as u64 + 1,
            text: cut(l),
            before,
            after,
        });
    }
    Some(out)
}
