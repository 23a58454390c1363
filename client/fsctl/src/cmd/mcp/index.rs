//! What every tool shares: the daemon connection (started again when it
//! goes away), the guard, scoped search, cursors, kinds, the byte budget
//! every answer fits, notices, and turning answers and failures into tool
//! results.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use fsindex_client::Target;
use fsindex_proto::v1 as pb;
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

use super::guard::{Guard, Refusal};
use super::names::{shown, shown_path};
use crate::output::{path_bytes, rfc3339, type_name};

/// Why a tool call failed: one line, returned as a tool error (`isError`).
#[derive(Debug)]
pub struct Failure(pub String);

impl From<Refusal> for Failure {
    fn from(r: Refusal) -> Failure {
        Failure(r.0)
    }
}

pub type Outcome = Result<CallToolResult, Failure>;

/// Bytes an answer's text, and its structured content, may take when none
/// is configured (`fsctl mcp --max-answer-bytes`).
pub const DEFAULT_BUDGET: u64 = 32 << 10;
/// What a tool leaves of the budget for the notices added after it.
const NOTICE_ROOM: usize = 768;

/// Structured content plus its text rendering.
pub fn reply<T: Serialize>(value: &T, text: String) -> Outcome {
    let v = serde_json::to_value(value).map_err(|e| Failure(format!("internal: {e}")))?;
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(v);
    Ok(r)
}

pub fn finish(o: Outcome) -> CallToolResult {
    o.unwrap_or_else(|f| CallToolResult::error(vec![ContentBlock::text(f.0)]))
}

tokio::task_local! {
    static NOTICES: RefCell<Vec<String>>;
}

/// A line the answer of the current call carries besides its content
/// (`notices` in the structured content, the last lines of the text).
pub fn notice(line: String) {
    let _ = NOTICES.try_with(|n| {
        let mut n = n.borrow_mut();
        if !n.contains(&line) {
            n.push(line);
        }
    });
}

/// Runs one call, collecting its notices.
pub async fn with_notices<F: std::future::Future>(f: F) -> (F::Output, Vec<String>) {
    NOTICES
        .scope(RefCell::new(Vec::new()), async {
            let out = f.await;
            (out, NOTICES.with(|n| n.take()))
        })
        .await
}

/// Adds the notices to an answer: its text ends with them, its structured
/// content holds them as `notices`.
/// A refusal stays one line: its notices join it, and one it states
/// already is not said twice.
pub fn add_notices(r: &mut CallToolResult, notices: Vec<String>) {
    let said: String = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    let notices: Vec<String> = notices
        .into_iter()
        .filter(|n| !said.contains(n.as_str()))
        .collect();
    if notices.is_empty() {
        return;
    }
    if let Some(serde_json::Value::Object(o)) = r.structured_content.as_mut() {
        o.insert("notices".into(), serde_json::json!(notices));
    }
    let lines: String = if r.is_error == Some(true) {
        format!(" [{}]", notices.join("; "))
    } else {
        notices.iter().map(|n| format!("\n[{n}]")).collect()
    };
    match r.content.iter_mut().find_map(|c| match c {
        ContentBlock::Text(t) => Some(t),
        _ => None,
    }) {
        Some(t) => t.text.push_str(&lines),
        None => r
            .content
            .push(ContentBlock::text(lines.trim_start().to_owned())),
    }
}

/// The daemon, reached again (or started, where allowed) when it goes away.
pub struct Daemon {
    target: Target,
    spawn: bool,
    client: Mutex<fsindex_client::Client>,
    reconnecting: tokio::sync::Mutex<()>,
}

impl Daemon {
    pub fn new(target: Target, spawn: bool, client: fsindex_client::Client) -> Daemon {
        Daemon {
            target,
            spawn,
            client: Mutex::new(client),
            reconnecting: tokio::sync::Mutex::new(()),
        }
    }
}

/// A failure that means the daemon is not there (its socket gone, the
/// connection refused or cut), not an answer of the daemon.
fn daemon_gone(s: &tonic::Status) -> bool {
    match s.code() {
        tonic::Code::Unavailable => true,
        tonic::Code::Unknown | tonic::Code::Internal | tonic::Code::Cancelled => {
            let m = s.message().to_ascii_lowercase();
            [
                "transport",
                "connection",
                "broken pipe",
                "os error",
                "h2 protocol",
            ]
            .iter()
            .any(|w| m.contains(w))
        }
        _ => false,
    }
}

/// State shared by every tool call.
pub struct Ctx {
    daemon: Daemon,
    guard: RwLock<Arc<Guard>>,
    /// The bytes an answer's text (and its structured content) may take.
    pub budget: usize,
    /// Kind of each extension (lower case; the whole lower-case name for a
    /// name without one), learned from the daemon's Stat and kept.
    kinds: Mutex<HashMap<String, String>>,
    /// The last scan notice and when it was taken.
    scanning: Mutex<Option<(Instant, Option<String>)>>,
}

/// One search result, as every tool shows it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FoundEntry {
    /// The full path, shown (see the server's instructions): pass it back as it is.
    pub path: String,
    /// file, dir, symlink or other.
    #[serde(rename = "type")]
    pub kind_of_entry: String,
    /// Bytes (st_size).
    pub size: u64,
    /// Last modification, RFC 3339 UTC.
    pub mtime: String,
    /// Matches a WARN-tier sensitive pattern (e.g. `*password*`).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub sensitive: bool,
    /// For a query with content: words, the passage of the file's text that matched, the words marked **like this**.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// A message inside a mailbox (the path is then `mailbox/<subject>`):
    /// the mailbox and, for a Maildir message, its own file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inside: Option<InsideMailbox>,
}

/// Where a message found inside a mail store is.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InsideMailbox {
    /// The mbox file or Maildir folder, shown.
    pub container: String,
    /// The message's subject.
    pub subject: String,
    /// Position in an mbox file, from 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<u32>,
    /// A Maildir message's own file, shown: pass it to other tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl FoundEntry {
    pub fn from_pb(e: &pb::Entry) -> FoundEntry {
        FoundEntry {
            path: shown(&e.path),
            kind_of_entry: type_name(e.r#type).to_owned(),
            size: e.size,
            mtime: rfc3339(e.mtime_ns),
            sensitive: e.sensitive,
            snippet: (!e.snippet.is_empty()).then(|| e.snippet.clone()),
            inside: e.inside.as_ref().map(|i| InsideMailbox {
                container: shown(&i.container),
                subject: i.name.clone(),
                message: (i.index > 0).then_some(i.index),
                file: i.file.as_deref().map(shown),
            }),
        }
    }

    /// One line of a listing: type, size, mtime, path (tab-separated).
    pub fn line(&self) -> String {
        format!(
            "{}\t{}\t{}\t{}{}",
            self.kind_of_entry,
            self.size,
            self.mtime,
            self.path,
            if self.sensitive { "\tsensitive" } else { "" }
        ) + &self
            .inside
            .as_ref()
            .map(|i| match &i.file {
                Some(f) => format!("\tin {}\tfile {f}", i.container),
                None => format!("\tin {}", i.container),
            })
            .unwrap_or_default()
            + &self
                .snippet
                .as_ref()
                .map(|s| format!("\n\t> {s}"))
                .unwrap_or_default()
    }
}

/// The header line of [`FoundEntry::line`]s.
pub const FOUND_HEADER: &str = "# type\tsize\tmtime\tpath";

/// A page of a long list: where it starts, and the cursor of the next one.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub offset: u64,
    pub limit: u64,
}

impl Ctx {
    pub fn new(daemon: Daemon, guard: Guard, budget: usize) -> Ctx {
        Ctx {
            daemon,
            guard: RwLock::new(Arc::new(guard)),
            budget,
            kinds: Mutex::new(HashMap::new()),
            scanning: Mutex::new(None),
        }
    }

    /// The allowed directories now (MCP Roots may narrow them mid-session).
    pub fn guard(&self) -> Arc<Guard> {
        self.guard.read().unwrap().clone()
    }

    pub fn set_guard(&self, g: Guard) {
        *self.guard.write().unwrap() = Arc::new(g);
    }

    /// Makes one call to the daemon; when the daemon has gone away, reaches
    /// it again (starting it where allowed), says so in a notice, and makes
    /// the call once more.
    pub async fn rpc<T, F, Fut>(&self, f: F) -> Result<T, tonic::Status>
    where
        F: Fn(fsindex_client::Client) -> Fut,
        Fut: std::future::Future<Output = Result<T, tonic::Status>>,
    {
        let c = self.daemon.client.lock().unwrap().clone();
        match f(c.clone()).await {
            Err(s) if daemon_gone(&s) => {
                self.reconnect(&s).await?;
                let c = self.daemon.client.lock().unwrap().clone();
                f(c).await
            }
            r => r,
        }
    }

    async fn reconnect(&self, why: &tonic::Status) -> Result<(), tonic::Status> {
        let _one = self.daemon.reconnecting.lock().await;
        // Another call may have reconnected meanwhile.
        let c = self.daemon.client.lock().unwrap().clone();
        if fsindex_client::handshake(&mut c.clone()).await.is_ok() {
            return Ok(());
        }
        if let Ok(c) = fsindex_client::connect_or_spawn(&self.daemon.target, false).await {
            *self.daemon.client.lock().unwrap() = c;
            notice("fsindexd had restarted; reconnected".into());
            return Ok(());
        }
        if !self.daemon.spawn {
            return Err(tonic::Status::unavailable(format!(
                "fsindexd is not running, and starting it is off (--no-spawn or FSINDEX_NO_SPAWN): start it with `fsindexd` ({})",
                why.message()
            )));
        }
        eprintln!("fsctl mcp: fsindexd is not running; starting it");
        match fsindex_client::connect_or_spawn(&self.daemon.target, true).await {
            Ok(c) => {
                *self.daemon.client.lock().unwrap() = c;
                notice("fsindexd was not running; started it".into());
                Ok(())
            }
            Err(e) => Err(tonic::Status::unavailable(format!(
                "fsindexd is not running, and starting it failed: {e:#}"
            ))),
        }
    }

    /// A daemon error as one line; NOT_FOUND reads like the guard's refusal.
    pub fn daemon_error(&self, raw: &str, s: tonic::Status) -> Failure {
        match s.code() {
            tonic::Code::NotFound => Refusal::denied(raw).into(),
            tonic::Code::InvalidArgument => Failure(s.message().to_owned()),
            _ if s.message().starts_with("fsindexd") => Failure(s.message().to_owned()),
            _ => Failure(format!("fsindexd: {}", s.message())),
        }
    }

    /// While a root under the allowed directories has its first scan under
    /// way: the notice that says so. Asked of the daemon at each call while
    /// a scan is under way (so the notice ends with it), at most every 5 s
    /// once none is (a root added later is seen within 5 s).
    pub async fn scan_notice(&self) -> Option<String> {
        if let Some((at, n)) = self.scanning.lock().unwrap().as_ref()
            && n.is_none()
            && at.elapsed() < Duration::from_secs(5)
        {
            return None;
        }
        let status = self
            .rpc(|mut c| async move {
                c.status(pb::StatusRequest::default())
                    .await
                    .map(tonic::Response::into_inner)
            })
            .await
            .ok()?;
        let guard = self.guard();
        let mut lines = Vec::new();
        for r in &status.roots {
            let path = crate::output::path_from_bytes(&r.path);
            let relevant = guard
                .allowed()
                .iter()
                .any(|a| a.starts_with(&path) || path.starts_with(a));
            let first = r.scanned_at == 0
                && (r.state == pb::RootState::Scanning as i32
                    || r.state == pb::RootState::Pending as i32);
            if relevant && first {
                lines.push(if r.state == pb::RootState::Pending as i32 {
                    format!("the first scan of {} has not started yet", shown(&r.path))
                } else {
                    format!(
                        "the first scan of {} is under way ({} entries so far)",
                        shown(&r.path),
                        r.scanned.max(r.entries)
                    )
                });
            }
        }
        let n =
            (!lines.is_empty()).then(|| format!("{}; results may be incomplete", lines.join("; ")));
        *self.scanning.lock().unwrap() = Some((Instant::now(), n.clone()));
        n
    }

    /// The `in:` scope of a search: the given folder, or every allowed
    /// directory as alternatives.
    pub fn scope(&self, path: Option<&Path>) -> Result<String, Failure> {
        let guard = self.guard();
        let dirs: Vec<&Path> = match path {
            Some(p) => vec![p],
            None => guard.allowed().iter().map(PathBuf::as_path).collect(),
        };
        if dirs.is_empty() {
            return Err(no_allowed());
        }
        let mut alts = Vec::new();
        for d in dirs {
            let Some(s) = d.to_str() else {
                return Err(Failure(format!(
                    "{}: a folder whose path is not UTF-8 cannot scope a search; search its parent, or list it with list_directory",
                    shown_path(d)
                )));
            };
            if s.contains('"') {
                return Err(Failure(format!(
                    "{s}: a folder whose path holds a double quote cannot be searched"
                )));
            }
            alts.push(format!("in:\"{s}\""));
        }
        Ok(alts.join("|"))
    }

    /// Guards the `in:` filters of a query an agent wrote (relative and `~`
    /// paths made absolute, outside ones refused).
    pub fn guard_query(&self, query: &str) -> Result<String, Failure> {
        let guard = self.guard();
        let mut out = Vec::new();
        for t in query.split(' ') {
            let (neg, rest) = t.strip_prefix('!').map_or(("", t), |r| ("!", r));
            match rest.strip_prefix("in:") {
                Some(v) if !v.is_empty() && !v.starts_with('"') => {
                    let p = guard.existing(v)?;
                    out.push(format!("{neg}in:\"{}\"", p.to_string_lossy()));
                }
                _ => out.push(t.to_owned()),
            }
        }
        Ok(out.join(" "))
    }

    /// Runs a search; returns the total and the entries from `offset`,
    /// at most `limit` of them (0: all). The daemon skips the first
    /// `offset` (its orders are total, so pages fit together). No result
    /// carries a snippet (see [`Ctx::search_with_snippets`]).
    pub async fn search(
        &self,
        query: String,
        sort: pb::SortOrder,
        offset: u64,
        limit: u64,
    ) -> Result<(u64, Vec<pb::Entry>), Failure> {
        self.search_with_snippets(query, sort, offset, limit, 0)
            .await
    }

    /// [`Ctx::search`], the first `snippets` results of a query with
    /// `content:` words carrying the passage that matched.
    pub async fn search_with_snippets(
        &self,
        query: String,
        sort: pb::SortOrder,
        offset: u64,
        limit: u64,
        snippets: u32,
    ) -> Result<(u64, Vec<pb::Entry>), Failure> {
        let req = pb::SearchRequest {
            query: query.clone(),
            limit,
            sort: sort as i32,
            sync: false,
            reverse: false,
            offset,
            snippets: Some(snippets),
        };
        let r = self
            .rpc(|mut c| {
                let req = req.clone();
                async move {
                    let mut stream = c.search(req).await?.into_inner();
                    let mut total = 0;
                    let mut out = Vec::new();
                    while let Some(chunk) = stream.message().await? {
                        total = chunk.total;
                        out.extend(chunk.entries);
                    }
                    Ok((total, out))
                }
            })
            .await;
        match r {
            Ok(x) => Ok(x),
            // Every `in:` folder passed the guard: the daemon keeps it out,
            // or has not reached it yet.
            Err(s) if s.code() == tonic::Code::NotFound => Err(Failure(match self.scan_notice().await {
                Some(n) => format!("a folder of the search is not in the index yet: {n}; try again shortly"),
                None => "a folder of the search is not in the index (excluded, or kept out as sensitive)".into(),
            })),
            Err(s) => Err(self.daemon_error(&query, s)),
        }
    }

    /// The kind of a file (`document`, `image`, ..., `other`), as the
    /// daemon's `kind:` filter sees it. The daemon's search results carry no
    /// kind, so one file per extension is asked about with Stat, and the
    /// answer kept.
    pub async fn kind(&self, path: &[u8], name: &str) -> String {
        let key = kind_key(name);
        if let Some(k) = self.kinds.lock().unwrap().get(&key) {
            return k.clone();
        }
        let kind = match self
            .rpc(|mut c| async move {
                c.stat(pb::StatRequest {
                    path: path.to_vec(),
                })
                .await
            })
            .await
        {
            Ok(r) => {
                let k = r.into_inner().kind;
                if k.is_empty() { "other".to_owned() } else { k }
            }
            Err(_) => return "other".to_owned(),
        };
        self.kinds.lock().unwrap().insert(key, kind.clone());
        kind
    }

    pub async fn stat(&self, raw: &str, path: &Path) -> Result<pb::StatResponse, Failure> {
        let bytes = path_bytes(path);
        self.rpc(|mut c| {
            let path = bytes.clone();
            async move {
                c.stat(pb::StatRequest { path })
                    .await
                    .map(tonic::Response::into_inner)
            }
        })
        .await
        .map_err(|s| self.daemon_error(raw, s))
    }

    /// The whole text of a file as the daemon reads it (ReadText, paged),
    /// at most `max` bytes of it: the first answer, its `text` the
    /// concatenation of the pages.
    pub async fn read_text(
        &self,
        path: &Path,
        allow_sensitive: bool,
        max: u64,
    ) -> Result<pb::ReadTextResponse, tonic::Status> {
        let bytes = path_bytes(path);
        let mut whole: Option<pb::ReadTextResponse> = None;
        let mut offset = 0;
        loop {
            let page = self
                .rpc(|mut c| {
                    let path = bytes.clone();
                    async move {
                        c.read_text(pb::ReadTextRequest {
                            path,
                            offset,
                            length: 1 << 20,
                            allow_sensitive,
                        })
                        .await
                        .map(tonic::Response::into_inner)
                    }
                })
                .await?;
            let got = page.text.len() as u64;
            offset = page.offset + got;
            let done = got == 0 || offset >= page.total_bytes || offset >= max;
            match whole.as_mut() {
                None => whole = Some(page),
                Some(w) => w.text.push_str(&page.text),
            }
            if done {
                // `done` is set on the first page at the latest.
                return whole.ok_or_else(|| tonic::Status::internal("no page"));
            }
        }
    }

    /// A folder's children, sorted as asked.
    pub async fn list(
        &self,
        raw: &str,
        path: &Path,
        sort: pb::SortOrder,
        reverse: bool,
    ) -> Result<Vec<pb::Entry>, Failure> {
        let bytes = path_bytes(path);
        self.rpc(|mut c| {
            let path = bytes.clone();
            async move {
                c.list(pb::ListRequest {
                    path,
                    sort: sort as i32,
                    reverse,
                })
                .await
                .map(|r| r.into_inner().entries)
            }
        })
        .await
        .map_err(|s| self.daemon_error(raw, s))
    }

    /// The largest `k` in `0..=n` whose answer, made by `build(k)`, fits
    /// the budget: its text and its structured content each at most
    /// `budget` bytes, less room for notices. Sizes grow with `k`.
    pub fn fit<T: Serialize>(&self, n: usize, build: impl Fn(usize) -> (T, String)) -> (T, String) {
        fit_with(self.budget, n, build)
    }

    /// Bytes one piece of text may take in an answer that also holds it in
    /// its structured content (e.g. a file's text).
    pub fn text_room(&self) -> usize {
        self.budget.saturating_sub(NOTICE_ROOM + 1024)
    }
}

/// [`Ctx::fit`] for a budget.
pub fn fit_with<T: Serialize>(
    budget: usize,
    n: usize,
    build: impl Fn(usize) -> (T, String),
) -> (T, String) {
    let room = budget.saturating_sub(NOTICE_ROOM);
    // The larger of the text and the structured content.
    let size = |a: &(T, String)| {
        a.1.len()
            .max(serde_json::to_vec(&a.0).map_or(usize::MAX, |v| v.len()))
    };
    let all = build(n);
    let mut s = size(&all);
    if s <= room {
        return all;
    }
    // Sizes grow about linearly with k: guess in proportion first
    // (twice at most), then halve what is left. fits(lo), !fits(hi).
    let (mut lo, mut hi) = (0usize, n);
    let mut at = n;
    for _ in 0..2 {
        let guess = ((at as u128 * room as u128 / s.max(1) as u128) as usize).clamp(lo, hi);
        if guess == lo || guess == hi {
            break;
        }
        s = size(&build(guess));
        if s <= room {
            lo = guess;
        } else {
            hi = guess;
        }
        at = guess;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if size(&build(mid)) <= room {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    build(lo)
}

/// With no allowed directory left (MCP Roots outside `--allow`).
pub fn no_allowed() -> Failure {
    Failure("no allowed directories: the client's roots lie outside what this server may read (see list_allowed_directories)".into())
}

/// "12344 matches, 200 shown from offset 0; more: pass cursor "..."" and
/// the like: the counts of the structured content, in words.
pub fn showing(offset: u64, shown: usize, total: u64, what: &str, next: Option<&str>) -> String {
    let mut s = format!(
        "{} {what}, {shown} shown from offset {offset}",
        group(total)
    );
    if let Some(c) = next {
        s.push_str(&format!("; more: pass cursor \"{c}\""));
    }
    s
}

/// A count as the text shows it: plain digits, so that the text holds the
/// same number as the structured content.
fn group(n: u64) -> String {
    n.to_string()
}

/// What decides a file's kind: its extension, or its whole name without one.
pub fn kind_key(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    // The one name with an extension whose kind is not its extension's.
    if lower == "cmakelists.txt" {
        return lower;
    }
    match lower.rsplit_once('.') {
        Some((_, ext)) => format!(".{ext}"),
        None => lower,
    }
}

/// An opaque cursor: the offset of the next page and a fingerprint of the
/// request, so that a cursor is refused by any other request.
pub fn cursor(offset: u64, fingerprint: &impl Hash) -> String {
    format!("{offset}.{:016x}", digest(fingerprint))
}

fn digest(v: &impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

/// The page a request asks for: `limit` within `1..=max` (default
/// `default`), from the cursor's offset.
pub fn page(
    cursor_in: Option<&str>,
    limit: Option<u64>,
    default: u64,
    max: u64,
    fingerprint: &impl Hash,
) -> Result<Page, Failure> {
    let limit = limit.unwrap_or(default).clamp(1, max);
    let offset = match cursor_in.filter(|c| !c.is_empty()) {
        None => 0,
        Some(c) => {
            let bad = || {
                Failure(format!(
                    "cursor `{c}` does not belong to this request: pass back the nextCursor of the same call with the same arguments"
                ))
            };
            let (o, f) = c.split_once('.').ok_or_else(bad)?;
            if f != format!("{:016x}", digest(fingerprint)) {
                return Err(bad());
            }
            o.parse().map_err(|_| bad())?
        }
    };
    Ok(Page { offset, limit })
}

/// The next cursor when more remain after this page.
pub fn next_cursor(p: Page, shown: u64, total: u64, fingerprint: &impl Hash) -> Option<String> {
    let end = p.offset + shown;
    (end < total && shown > 0).then(|| cursor(end, fingerprint))
}

/// The path of `p` below `base`, or `p` itself.
pub fn relative(p: &str, base: &Path) -> String {
    let b = shown_path(base);
    p.strip_prefix(b.as_str())
        .map(|r| r.trim_start_matches('/'))
        .filter(|r| !r.is_empty())
        .unwrap_or(p)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_belong_to_their_request() {
        let fp = ("find_files", "report", 100u64);
        let c = cursor(300, &fp);
        let p = page(Some(&c), Some(100), 50, 1000, &fp).unwrap();
        assert_eq!((p.offset, p.limit), (300, 100));
        assert!(page(Some(&c), Some(100), 50, 1000, &("other", "q", 1u64)).is_err());
        assert!(page(Some("garbage"), None, 50, 1000, &fp).is_err());
        assert_eq!(
            page(None, Some(1_000_000), 50, 1000, &fp).unwrap().limit,
            1000
        );
        assert_eq!(
            next_cursor(
                Page {
                    offset: 0,
                    limit: 10
                },
                10,
                10,
                &fp
            ),
            None
        );
        assert!(
            next_cursor(
                Page {
                    offset: 0,
                    limit: 10
                },
                10,
                11,
                &fp
            )
            .is_some()
        );
    }

    #[test]
    fn fit_finds_the_largest_prefix_within_the_budget() {
        let fits = |budget: usize, n: usize, per: usize| {
            let rows: Vec<String> = (0..n).map(|i| format!("{i:0>per$}")).collect();
            let (v, t) = fit_with(budget, n, |k| (rows[..k].to_vec(), rows[..k].join("\n")));
            let json = serde_json::to_vec(&v).unwrap().len();
            let room = budget - NOTICE_ROOM;
            assert!(t.len() <= room && json <= room, "{budget} {n} {per}");
            // One more would not fit.
            if v.len() < n {
                let more = serde_json::to_vec(&rows[..v.len() + 1].to_vec())
                    .unwrap()
                    .len();
                assert!(more > room, "{budget} {n} {per}: {} fit, {more}", v.len());
            }
            v.len()
        };
        assert_eq!(fits(4096, 10, 5), 10);
        assert!(fits(4096, 10_000, 7) > 100);
        assert!(fits(32 << 10, 5000, 40) > 600);
        assert_eq!(fits(4096, 0, 5), 0);
    }

    #[test]
    fn kind_keys() {
        assert_eq!(kind_key("Report.PDF"), ".pdf");
        assert_eq!(kind_key("Makefile"), "makefile");
    }
}
