//! `search_file_content` without a content index: a bounded parallel scan of
//! the files the index selects, stopping at a result count or a time budget.
//!
//! Files are read as a stream (64 KiB at a time, decoded as they come), so
//! a file of any size is searched in constant memory; a file that is not
//! read (binary, unreadable) is named with its reason.

use std::collections::VecDeque;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::names::shown_path;
use super::text::looks_binary;

/// A matched line is cut to this many characters.
const MAX_LINE_CHARS: usize = 400;
/// Skipped files named in an answer at most (the rest are counted).
pub const MAX_SKIPPED_NAMED: usize = 50;
const CHUNK: usize = 64 << 10;

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

/// A selected file that was not searched, and why.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkippedFile {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Default)]
pub struct ScanOutcome {
    pub matches: Vec<ContentMatch>,
    pub files_scanned: u64,
    pub files_skipped: u64,
    /// The first skipped files, with their reasons.
    pub skipped: Vec<SkippedFile>,
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
                        out.lock().unwrap().stopped.get_or_insert("timeBudget");
                        return;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((path, _)) = scan.files.get(i) else {
                        return;
                    };
                    let found = scan_file(
                        path,
                        &scan.regex,
                        scan.context,
                        // One more than asked: a match past the last says
                        // the scan stopped short.
                        scan.max_results + 1,
                        &stop,
                        deadline,
                    );
                    let mut o = out.lock().unwrap();
                    let found = match found {
                        Ok(f) => f,
                        Err(reason) => {
                            o.files_skipped += 1;
                            if o.skipped.len() < MAX_SKIPPED_NAMED {
                                o.skipped.push(SkippedFile {
                                    path: shown_path(path),
                                    reason,
                                });
                            }
                            continue;
                        }
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
    o.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    o
}

fn cut(l: &str) -> String {
    if l.chars().count() > MAX_LINE_CHARS {
        let mut s: String = l.chars().take(MAX_LINE_CHARS).collect();
        s.push('…');
        s
    } else {
        l.to_owned()
    }
}

/// The matching lines of one file, at most `cap`; the reason it was not
/// read otherwise.
fn scan_file(
    path: &PathBuf,
    re: &regex::Regex,
    context: usize,
    cap: usize,
    stop: &AtomicBool,
    deadline: Instant,
) -> Result<Vec<ContentMatch>, String> {
    let mut f = std::fs::File::open(path).map_err(|e| format!("unreadable: {e}"))?;
    let mut head = vec![0u8; CHUNK];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => return Err(format!("unreadable: {e}")),
        }
    }
    head.truncate(got);
    if looks_binary(&head) {
        return Err("binary: a NUL byte in its first 8 KiB".into());
    }
    let complete = got < CHUNK;
    let encoding = detect(&head, complete);
    let mut decoder = encoding.new_decoder_with_bom_removal();
    let display = shown_path(path);
    let mut out = Vec::new();
    let mut before: VecDeque<String> = VecDeque::with_capacity(context + 1);
    // Matches still collecting their lines after.
    let mut open: Vec<ContentMatch> = Vec::new();
    let mut line_no = 0u64;
    let mut pending = String::new();
    let mut buf = head;
    let mut handle_line =
        |line: &str, out: &mut Vec<ContentMatch>, open: &mut Vec<ContentMatch>| {
            line_no += 1;
            let line = line.strip_suffix('\r').unwrap_or(line);
            for m in open.iter_mut() {
                m.after.push(cut(line));
            }
            let (done, still): (Vec<_>, Vec<_>) =
                open.drain(..).partition(|m| m.after.len() >= context);
            out.extend(done);
            *open = still;
            if out.len() + open.len() < cap && re.is_match(line) {
                let m = ContentMatch {
                    path: display.clone(),
                    line: line_no,
                    text: cut(line),
                    before: before.iter().cloned().collect(),
                    after: Vec::new(),
                };
                if context == 0 {
                    out.push(m);
                } else {
                    open.push(m);
                }
            }
            if context > 0 {
                if before.len() == context {
                    before.pop_front();
                }
                before.push_back(cut(line));
            }
        };
    let mut eof = complete;
    loop {
        let mut decoded = String::with_capacity(buf.len() + 16);
        decoded.reserve(
            decoder
                .max_utf8_buffer_length(buf.len())
                .unwrap_or(buf.len() * 3),
        );
        let (_, _, _) = decoder.decode_to_string(&buf, &mut decoded, eof);
        pending.push_str(&decoded);
        let mut start = 0;
        while let Some(nl) = pending[start..].find('\n') {
            handle_line(&pending[start..start + nl], &mut out, &mut open);
            start += nl + 1;
        }
        pending.drain(..start);
        if out.len() >= cap || stop.load(Ordering::Relaxed) || Instant::now() > deadline {
            break;
        }
        if eof {
            if !pending.is_empty() {
                let last = std::mem::take(&mut pending);
                handle_line(&last, &mut out, &mut open);
            }
            break;
        }
        buf.resize(CHUNK, 0);
        let n = f.read(&mut buf).map_err(|e| format!("unreadable: {e}"))?;
        buf.truncate(n);
        eof = n == 0;
    }
    out.extend(open);
    out.truncate(cap);
    Ok(out)
}

/// The encoding of a file from its first bytes: a BOM, UTF-8, or
/// chardetng's guess.
fn detect(head: &[u8], complete: bool) -> &'static encoding_rs::Encoding {
    if let Some((enc, _)) = encoding_rs::Encoding::for_bom(head) {
        return enc;
    }
    match std::str::from_utf8(head) {
        Ok(_) => return encoding_rs::UTF_8,
        Err(e) if !complete && e.error_len().is_none() => return encoding_rs::UTF_8,
        Err(_) => {}
    }
    let mut det = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    det.feed(head, complete);
    det.guess(None, chardetng::Utf8Detection::Allow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_file_is_streamed_with_context() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("big.log");
        // 10 MB, a match on every line.
        let mut body = String::new();
        let mut n = 0;
        while body.len() < 10 << 20 {
            n += 1;
            body.push_str(&format!("line {n} ERROR something happened here\r\n"));
        }
        std::fs::write(&p, &body).unwrap();
        let stop = AtomicBool::new(false);
        let deadline = Instant::now() + Duration::from_secs(60);
        let re = regex::Regex::new("^line 2\\d{5} ").unwrap();
        let m = scan_file(&p, &re, 1, 5, &stop, deadline).unwrap();
        assert_eq!(m.len(), 5);
        assert_eq!(m[0].line, 200_000);
        assert_eq!(m[0].text, "line 200000 ERROR something happened here");
        assert_eq!(
            m[0].before,
            vec!["line 199999 ERROR something happened here"]
        );
        assert_eq!(
            m[0].after,
            vec!["line 200001 ERROR something happened here"]
        );
        // The last line, without a newline, after a chunk boundary.
        std::fs::write(&p, format!("{}\nlast line", "x".repeat(CHUNK + 7))).unwrap();
        let re = regex::Regex::new("last").unwrap();
        let m = scan_file(&p, &re, 0, 5, &stop, deadline).unwrap();
        assert_eq!((m.len(), m[0].line), (1, 2));
        std::fs::write(&p, b"a\0b").unwrap();
        assert!(
            scan_file(&p, &re, 0, 5, &stop, deadline)
                .unwrap_err()
                .contains("binary")
        );
    }
}
