//! The gRPC side of the window: a tokio runtime on its own thread that
//! talks to the daemon through `fsindex-client`, and the plain types the UI
//! gets back. The UI sends [`Request`]s over a channel and never waits;
//! every [`Reply`] is followed by a wake-up (egui's `request_repaint`), so
//! an answer is painted in the next frame.
//!
//! What runs here besides the requests: a status poll (every second while
//! scanning, every few seconds once ready) and a Subscribe stream whose
//! events are coalesced into [`Reply::Changed`].
//!
//! A connection lasts until the daemon goes away: the end of the Subscribe
//! stream (a daemon that shuts down ends it) or a failed status poll. Then
//! [`Reply::Connection`] says why, and the thread calls again every
//! [`RECONNECT`] until a daemon answers; the window re-runs what it shows.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use fsindex_client::{Client, Target};
use fsindex_proto::v1 as pb;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::AbortHandle;

/// Called after every reply: wakes the UI within the given time (egui's
/// `request_repaint_after`; zero: at once).
pub type Wake = Arc<dyn Fn(Duration) + Send + Sync>;

/// How late a reply nobody is waiting on may be painted: status polls,
/// hashing progress and change notices wake the window at most this often
/// together (egui merges wake-ups within the delay into one frame), so a
/// daemon busy scanning or hashing never keeps it drawing continuously.
pub const BACKGROUND_WAKE: Duration = Duration::from_millis(100);

/// Children asked for per disk-usage folder: the bars and the treemap show
/// this many, the rest is one "N more" line.
pub const DU_TOP: u32 = 2000;
/// How long change events are gathered before one refresh is asked for.
const CHANGE_COALESCE: Duration = Duration::from_millis(100);
/// How often a lost daemon is called again.
pub const RECONNECT: Duration = Duration::from_secs(1);

/// How the search results are ordered (the daemon sorts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SortKey {
    #[default]
    Relevance,
    Name,
    Path,
    Size,
    Mtime,
}

impl SortKey {
    fn proto(self) -> pb::SortOrder {
        match self {
            SortKey::Relevance => pb::SortOrder::Relevance,
            SortKey::Name => pb::SortOrder::Name,
            SortKey::Path => pb::SortOrder::Path,
            SortKey::Size => pb::SortOrder::Size,
            SortKey::Mtime => pb::SortOrder::Mtime,
        }
    }
}

/// One query with its order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchParams {
    pub query: String,
    pub sort: SortKey,
    pub reverse: bool,
    /// Sent as `accents:ignore`: `cafe` finds `café`.
    pub ignore_accents: bool,
}

/// What an entry is, for its icon and its colour in the treemap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RowKind {
    Folder,
    Symlink,
    /// Sockets, fifos, devices.
    Special,
    Image,
    Audio,
    Video,
    Archive,
    Code,
    Document,
    Text,
    #[default]
    File,
}

impl RowKind {
    fn of(entry_type: i32, name: &str) -> RowKind {
        match pb::EntryType::try_from(entry_type).unwrap_or_default() {
            pb::EntryType::Dir => return RowKind::Folder,
            pb::EntryType::Symlink => return RowKind::Symlink,
            pb::EntryType::Other => return RowKind::Special,
            _ => {}
        }
        let ext = match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
            _ => return RowKind::File,
        };
        match ext.as_str() {
            "jpg" | "jpeg" | "png" | "gif" | "bmp" | "webp" | "svg" | "tif" | "tiff" | "heic"
            | "ico" | "raw" | "cr2" | "nef" => RowKind::Image,
            "mp3" | "flac" | "ogg" | "opus" | "wav" | "m4a" | "aac" | "wma" => RowKind::Audio,
            "mp4" | "mkv" | "avi" | "mov" | "webm" | "wmv" | "m4v" | "mpg" | "mpeg" => {
                RowKind::Video
            }
            "zip" | "tar" | "gz" | "tgz" | "bz2" | "xz" | "zst" | "7z" | "rar" | "deb" | "rpm"
            | "iso" | "jar" => RowKind::Archive,
            "rs" | "c" | "h" | "cpp" | "hpp" | "cc" | "py" | "js" | "ts" | "go" | "java" | "kt"
            | "rb" | "php" | "sh" | "cs" | "swift" | "toml" | "json" | "yaml" | "yml" | "xml"
            | "html" | "css" | "sql" => RowKind::Code,
            "pdf" | "doc" | "docx" | "odt" | "xls" | "xlsx" | "ods" | "ppt" | "pptx" | "odp"
            | "rtf" | "epub" => RowKind::Document,
            "txt" | "md" | "log" | "csv" | "ini" | "cfg" | "conf" => RowKind::Text,
            _ => RowKind::File,
        }
    }

    pub fn is_folder(self) -> bool {
        self == RowKind::Folder
    }
}

/// One search result, with its display forms made off the UI thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Absolute path, byte-exact (what open, reveal and copy use).
    pub path: Vec<u8>,
    pub name: String,
    /// The folder holding it, display form.
    pub folder: String,
    pub kind: RowKind,
    pub size: u64,
    pub mtime_ns: i64,
    /// Matches a WARN-tier sensitive pattern.
    pub sensitive: bool,
    /// Byte ranges of `name` the query's words match (highlighted).
    pub marks: Vec<std::ops::Range<usize>>,
}

impl Row {
    fn from_entry(e: pb::Entry) -> Row {
        let name = String::from_utf8_lossy(&e.name).into_owned();
        let folder = match e.path.len().checked_sub(e.name.len() + 1) {
            Some(0) => "/".to_owned(),
            Some(n) if e.path.ends_with(&e.name) => String::from_utf8_lossy(&e.path[..n]).into(),
            _ => String::new(),
        };
        Row {
            kind: RowKind::of(e.r#type, &name),
            name,
            folder,
            path: e.path,
            size: e.size,
            mtime_ns: e.mtime_ns,
            sensitive: e.sensitive,
            marks: Vec::new(),
        }
    }
}

/// The plain words of a query, lowercased, as a name may contain them:
/// filters (`ext:`, `size:`), negations and regexes are left out, `a|b`
/// gives both, quotes and wildcards are dropped.
pub fn query_words(query: &str) -> Vec<String> {
    let mut words = Vec::new();
    for term in query.split_whitespace() {
        if term.starts_with('!') || term.contains(':') || term.starts_with('@') {
            continue;
        }
        for alt in term.split('|') {
            for part in alt.split(['*', '?', '"']) {
                if !part.is_empty() {
                    words.push(part.to_lowercase());
                }
            }
        }
    }
    words
}

/// Byte ranges of `name` where any of `words` occurs, compared as the
/// daemon compares (case folded), merged and in order.
pub fn name_marks(name: &str, words: &[String]) -> Vec<std::ops::Range<usize>> {
    name_marks_as(name, words, false)
}

/// [`name_marks`], with accents ignored when `bare` (`accents:ignore`):
/// `cafe` marks `Café` whole.
pub fn name_marks_as(name: &str, words: &[String], bare: bool) -> Vec<std::ops::Range<usize>> {
    if words.is_empty() {
        return Vec::new();
    }
    // The lowercase name, and for each of its bytes the original char's
    // range (lowercasing may change lengths).
    let mut lower = String::with_capacity(name.len());
    let mut origin: Vec<std::ops::Range<usize>> = Vec::with_capacity(name.len());
    for (i, c) in name.char_indices() {
        let mut push = |l: char| {
            let before = lower.len();
            lower.push(l);
            origin.extend((before..lower.len()).map(|_| i..i + c.len_utf8()));
        };
        if bare {
            for l in c.to_lowercase().flat_map(bare_chars) {
                push(l);
            }
        } else {
            c.to_lowercase().for_each(push);
        }
    }
    let bare_words: Vec<String>;
    let words = if bare {
        bare_words = words
            .iter()
            .map(|w| w.chars().flat_map(bare_chars).collect())
            .collect();
        &bare_words
    } else {
        words
    };
    let mut marks: Vec<std::ops::Range<usize>> = Vec::new();
    for w in words {
        if w.is_empty() {
            continue;
        }
        for (at, m) in lower.match_indices(w.as_str()) {
            marks.push(origin[at].start..origin[at + m.len() - 1].end);
        }
    }
    marks.sort_by_key(|r| r.start);
    let mut merged: Vec<std::ops::Range<usize>> = Vec::new();
    for r in marks {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    merged
}

/// A lowercase character as `accents:ignore` compares it (the daemon's
/// folding, for highlighting): decomposed, its combining diacritical marks
/// dropped, æ œ ø ł đ ð þ ħ ŧ ı ŀ spelled out.
fn bare_chars(c: char) -> impl Iterator<Item = char> {
    use unicode_normalization::char::decompose_canonical;
    let mut out: Vec<char> = Vec::with_capacity(2);
    decompose_canonical(c, |d| match d {
        '\u{0300}'..='\u{036F}'
        | '\u{1AB0}'..='\u{1AFF}'
        | '\u{1DC0}'..='\u{1DFF}'
        | '\u{20D0}'..='\u{20FF}'
        | '\u{FE20}'..='\u{FE2F}' => {}
        'æ' => out.extend(['a', 'e']),
        'œ' => out.extend(['o', 'e']),
        'ø' => out.push('o'),
        'ł' | 'ŀ' => out.push('l'),
        'đ' | 'ð' => out.push('d'),
        'þ' => out.extend(['t', 'h']),
        'ħ' => out.push('h'),
        'ŧ' => out.push('t'),
        'ı' => out.push('i'),
        d => out.push(d),
    });
    out.into_iter()
}

/// Disk usage of one path, as `fsctl du` counts it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub path: Vec<u8>,
    /// Last component, display form.
    pub name: String,
    pub kind: RowKind,
    /// Allocated bytes (`du -B1`) and apparent bytes (`du -b`).
    pub bytes: u64,
    pub apparent_bytes: u64,
    pub files: u64,
    pub dirs: u64,
    pub incomplete: bool,
}

impl Usage {
    fn from_proto(u: pb::Usage) -> Usage {
        let name = {
            let p = u.path.strip_suffix(b"/").unwrap_or(&u.path);
            let at = p.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
            String::from_utf8_lossy(&p[at..]).into_owned()
        };
        Usage {
            kind: RowKind::of(u.r#type, &name),
            name,
            path: u.path,
            bytes: u.bytes,
            apparent_bytes: u.apparent_bytes,
            files: u.files,
            dirs: u.dirs,
            incomplete: u.incomplete,
        }
    }
}

/// One folder's disk usage and its largest children.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DuAnswer {
    pub total: Usage,
    /// Largest first (allocated bytes).
    pub children: Vec<Usage>,
    /// Children in all, whatever [`DU_TOP`].
    pub children_total: u64,
}

/// One group of byte-identical files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DupGroup {
    pub size: u64,
    /// BLAKE3, hex.
    pub hash: String,
    /// Distinct inodes, each with every path to it (hard links).
    pub copies: Vec<Vec<Vec<u8>>>,
    pub reclaimable_bytes: u64,
    pub reclaimable_allocated_bytes: u64,
}

/// The end of a duplicate search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DupSummary {
    pub groups: u64,
    pub reclaimable_bytes: u64,
    pub reclaimable_allocated_bytes: u64,
    pub candidates: u64,
    pub files_read: u64,
    pub bytes_read: u64,
    pub cache_hits: u64,
    pub unreadable: u64,
    pub changed: u64,
}

/// Hashing progress of a duplicate search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DupProgress {
    /// "sizes", "partial" or "full".
    pub stage: String,
    pub files_done: u64,
    pub files_total: u64,
    pub bytes_done: u64,
    pub bytes_total: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DupesEvent {
    Progress(DupProgress),
    Group(DupGroup),
    Done(Result<DupSummary, String>),
}

/// One root as the status bar shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RootInfo {
    pub path: Vec<u8>,
    /// "pending", "scanning", "ready" or "error".
    pub state: &'static str,
    pub entries: u64,
    pub scanned: u64,
    /// "live", "partly polled: N folders" or "off".
    pub watch: String,
}

/// The daemon's state, for the status bar.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusInfo {
    pub version: String,
    /// "scanning" or "ready".
    pub state: String,
    pub entries: u64,
    pub roots: Vec<RootInfo>,
    pub watching: bool,
    pub notices: Vec<String>,
}

impl StatusInfo {
    fn from_proto(s: pb::StatusResponse) -> StatusInfo {
        StatusInfo {
            version: s.version,
            state: s.state,
            entries: s.entries,
            watching: s.watch.as_ref().is_some_and(|w| w.enabled),
            roots: s
                .roots
                .into_iter()
                .map(|r| RootInfo {
                    state: match pb::RootState::try_from(r.state).unwrap_or_default() {
                        pb::RootState::Pending | pb::RootState::Unspecified => "pending",
                        pb::RootState::Scanning => "scanning",
                        pb::RootState::Ready => "ready",
                        pb::RootState::Error => "error",
                    },
                    path: r.path,
                    entries: r.entries,
                    scanned: r.scanned,
                    watch: r.watch,
                })
                .collect(),
            notices: s.notices,
        }
    }
}

/// What the UI asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// A page of results. `new` cancels every search still running (a new
    /// keystroke, or a refresh); pages of the current one run beside it.
    Search {
        generation: u64,
        params: SearchParams,
        offset: u64,
        limit: u64,
        new: bool,
    },
    /// Stop every search still running (the query box was emptied).
    CancelSearch,
    /// One folder's disk usage (cancels the previous one).
    DiskUsage { generation: u64, path: Vec<u8> },
    /// A duplicate search over every root (cancels the previous one).
    Duplicates { generation: u64 },
    /// Saved searches and history (see [`crate::shared`]).
    Shared(crate::shared::Call),
    /// Stat of rows drawn: their media metadata and tags (see
    /// [`crate::details`]).
    Details(Vec<crate::details::Asked>),
}

/// What comes back.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// Connected, or why not (tried again every few seconds).
    Connection(Result<(), String>),
    Rows {
        generation: u64,
        offset: u64,
        total: u64,
        elapsed_us: u64,
        rows: Vec<Row>,
    },
    /// The daemon refused a search (`invalid`: a malformed query), or it
    /// failed (the daemon went away).
    SearchFailed {
        generation: u64,
        message: String,
        invalid: bool,
    },
    Status(StatusInfo),
    DiskUsage {
        generation: u64,
        answer: Result<DuAnswer, String>,
    },
    Dupes {
        generation: u64,
        event: DupesEvent,
    },
    /// Entries under the roots changed (this many events since the last).
    Changed {
        events: u64,
    },
    /// The saved searches and history, after a [`Request::Shared`].
    Shared(crate::shared::Answer),
    /// What Stat said of the rows of a [`Request::Details`].
    Details(Vec<(crate::details::Asked, crate::details::Details)>),
}

/// The UI's handle on the background thread. Dropping it stops the thread.
pub struct Backend {
    tx: UnboundedSender<Request>,
    rx: mpsc::Receiver<Reply>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Backend")
    }
}

/// The sending half of the replies, waking the UI after each.
#[derive(Clone)]
struct Out {
    tx: mpsc::Sender<Reply>,
    wake: Wake,
}

impl Out {
    /// False once the UI is gone. What the user waits for (rows, a
    /// refusal, the connection) is painted at once; the rest within
    /// [`BACKGROUND_WAKE`].
    fn send(&self, r: Reply) -> bool {
        let now = matches!(
            r,
            Reply::Rows { .. }
                | Reply::SearchFailed { .. }
                | Reply::Connection(_)
                | Reply::DiskUsage { .. }
                | Reply::Dupes {
                    event: DupesEvent::Done(_),
                    ..
                }
        );
        let ok = self.tx.send(r).is_ok();
        (self.wake)(if now { Duration::ZERO } else { BACKGROUND_WAKE });
        ok
    }
}

impl Backend {
    /// Starts the thread; it connects (starting the daemon when `spawn`
    /// and none listens) and serves requests until the handle is dropped.
    pub fn start(target: Target, spawn: bool, wake: Wake) -> std::io::Result<Backend> {
        let (tx, requests) = unbounded_channel();
        let (out_tx, rx) = mpsc::channel();
        let out = Out { tx: out_tx, wake };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        std::thread::Builder::new()
            .name("fsgui-grpc".into())
            .spawn(move || rt.block_on(serve(target, spawn, requests, out)))?;
        Ok(Backend { tx, rx })
    }

    pub fn send(&self, r: Request) {
        // Fails only once the thread is gone; the status bar says why.
        let _ = self.tx.send(r);
    }

    pub fn try_recv(&self) -> Option<Reply> {
        self.rx.try_recv().ok()
    }

    /// The next reply, waiting up to `within` for one.
    pub fn recv_timeout(&self, within: Duration) -> Option<Reply> {
        self.rx.recv_timeout(within).ok()
    }
}

/// Connects, serves requests until the connection is lost, and connects
/// again, for as long as the window lives. The daemon is started only by
/// the first connection (when `spawn`): one the user stopped is not
/// brought back behind their back; the window waits for the next one.
async fn serve(target: Target, spawn: bool, mut requests: UnboundedReceiver<Request>, out: Out) {
    let mut spawn = spawn;
    loop {
        let client = loop {
            match fsindex_client::connect_or_spawn(&target, spawn).await {
                Ok(c) => break c,
                Err(e) => {
                    if !out.send(Reply::Connection(Err(format!("{e:#}")))) {
                        return;
                    }
                    tokio::time::sleep(RECONNECT).await;
                }
            }
        };
        spawn = false;
        out.send(Reply::Connection(Ok(())));
        match session(client, &mut requests, &out).await {
            Some(why) => {
                if !out.send(Reply::Connection(Err(why))) {
                    return;
                }
            }
            // The window is gone.
            None => return,
        }
    }
}

/// One connection: requests served until the daemon goes away (its
/// Subscribe stream ends, or a status poll fails: `Some(why)`) or the
/// window does (`None`).
async fn session(
    client: Client,
    requests: &mut UnboundedReceiver<Request>,
    out: &Out,
) -> Option<String> {
    let (lost_tx, mut lost) = unbounded_channel::<String>();
    let background = [
        tokio::spawn(poll_status(client.clone(), out.clone(), lost_tx.clone())).abort_handle(),
        tokio::spawn(watch_changes(client.clone(), out.clone(), lost_tx)).abort_handle(),
    ];
    let mut searches: Vec<AbortHandle> = Vec::new();
    let mut du: Option<AbortHandle> = None;
    let mut dupes: Option<AbortHandle> = None;
    let why = loop {
        let req = tokio::select! {
            req = requests.recv() => match req {
                Some(r) => r,
                None => break None,
            },
            why = lost.recv() => break Some(why.unwrap_or_else(|| "the connection ended".into())),
        };
        match req {
            Request::Search {
                generation,
                params,
                offset,
                limit,
                new,
            } => {
                searches.retain(|h| !h.is_finished());
                if new {
                    // Dropping a request's stream cancels it at the daemon.
                    searches.drain(..).for_each(|h| h.abort());
                }
                let task = search(
                    client.clone(),
                    out.clone(),
                    generation,
                    params,
                    offset,
                    limit,
                );
                searches.push(tokio::spawn(task).abort_handle());
            }
            Request::CancelSearch => searches.drain(..).for_each(|h| h.abort()),
            Request::DiskUsage { generation, path } => {
                if let Some(h) = du.take() {
                    h.abort();
                }
                let task = disk_usage(client.clone(), out.clone(), generation, path);
                du = Some(tokio::spawn(task).abort_handle());
            }
            Request::Duplicates { generation } => {
                if let Some(h) = dupes.take() {
                    h.abort();
                }
                let task = duplicates(client.clone(), out.clone(), generation);
                dupes = Some(tokio::spawn(task).abort_handle());
            }
            Request::Shared(call) => {
                let (client, out) = (client.clone(), out.clone());
                tokio::spawn(async move {
                    out.send(Reply::Shared(crate::shared::run(client, call).await));
                });
            }
            Request::Details(rows) => {
                tokio::spawn(details(client.clone(), out.clone(), rows));
            }
        }
    };
    for h in background.iter().chain(&searches).chain(&du).chain(&dupes) {
        h.abort();
    }
    why
}

/// Stat of each row asked about; one that fails (gone since) has empty
/// details.
async fn details(mut client: Client, out: Out, rows: Vec<crate::details::Asked>) {
    let mut answers = Vec::with_capacity(rows.len());
    for a in rows {
        let req = pb::StatRequest {
            path: a.path.clone(),
        };
        let d = match client.stat(req).await {
            Ok(s) => crate::details::Details::from_stat(s.into_inner()),
            Err(_) => crate::details::Details::default(),
        };
        answers.push((a, d));
    }
    out.send(Reply::Details(answers));
}

/// `in:~/x` becomes absolute (the daemon does not know the caller's home),
/// as fsctl does.
pub(crate) fn expand_home(query: &str) -> String {
    let Some(home) = std::env::var_os("HOME") else {
        return query.to_owned();
    };
    let home = home.to_string_lossy();
    query
        .split(' ')
        .map(|term| {
            let (neg, rest) = term.strip_prefix('!').map_or(("", term), |r| ("!", r));
            match rest.strip_prefix("in:") {
                Some("~") => format!("{neg}in:{home}"),
                Some(v) if v.starts_with("~/") => format!("{neg}in:{home}{}", &v[1..]),
                _ => term.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

async fn search(
    mut client: Client,
    out: Out,
    generation: u64,
    params: SearchParams,
    offset: u64,
    limit: u64,
) {
    let mut query = expand_home(&params.query);
    if params.ignore_accents {
        query.push_str(" accents:ignore");
    }
    let req = pb::SearchRequest {
        query,
        limit,
        sort: params.sort.proto() as i32,
        sync: false,
        reverse: params.reverse,
        offset,
        snippets: None,
    };
    crate::trace::event(format_args!(
        "send gen={generation} offset={offset} limit={limit} q={:?}",
        req.query
    ));
    let words = query_words(&params.query);
    let bare = params.ignore_accents;
    let answer = async {
        let mut stream = client.search(req).await?.into_inner();
        let (mut total, mut elapsed_us, mut rows) = (0, 0, Vec::new());
        while let Some(chunk) = stream.message().await? {
            total = chunk.total;
            elapsed_us = chunk.elapsed_us;
            rows.extend(chunk.entries.into_iter().map(|e| {
                let mut row = Row::from_entry(e);
                row.marks = name_marks_as(&row.name, &words, bare);
                row
            }));
        }
        Ok::<_, tonic::Status>((total, elapsed_us, rows))
    };
    let answer = answer.await;
    if let Ok((total, elapsed_us, rows)) = &answer {
        crate::trace::event(format_args!(
            "answer gen={generation} offset={offset} total={total} daemon_us={elapsed_us} rows={}",
            rows.len()
        ));
    }
    out.send(match answer {
        Ok((total, elapsed_us, rows)) => Reply::Rows {
            generation,
            offset,
            total,
            elapsed_us,
            rows,
        },
        Err(status) => Reply::SearchFailed {
            generation,
            message: status.message().to_owned(),
            invalid: status.code() == tonic::Code::InvalidArgument,
        },
    });
}

async fn disk_usage(mut client: Client, out: Out, generation: u64, path: Vec<u8>) {
    let req = pb::DiskUsageRequest {
        path,
        top: DU_TOP,
        depth: 1,
        ..Default::default()
    };
    let answer = match client.disk_usage(req).await {
        Ok(r) => {
            let r = r.into_inner();
            Ok(DuAnswer {
                total: Usage::from_proto(r.total.unwrap_or_default()),
                children: r.children.into_iter().map(Usage::from_proto).collect(),
                children_total: r.children_total,
            })
        }
        Err(s) => Err(s.message().to_owned()),
    };
    out.send(Reply::DiskUsage { generation, answer });
}

async fn duplicates(mut client: Client, out: Out, generation: u64) {
    use pb::duplicates_response::Item;
    let send = |event| out.send(Reply::Dupes { generation, event });
    let mut stream = match client.duplicates(pb::DuplicatesRequest::default()).await {
        Ok(s) => s.into_inner(),
        Err(s) => {
            send(DupesEvent::Done(Err(s.message().to_owned())));
            return;
        }
    };
    loop {
        match stream.message().await {
            Ok(Some(m)) => match m.item {
                Some(Item::Progress(p)) => {
                    send(DupesEvent::Progress(DupProgress {
                        stage: p.stage,
                        files_done: p.files_done,
                        files_total: p.files_total,
                        bytes_done: p.bytes_done,
                        bytes_total: p.bytes_total,
                    }));
                }
                Some(Item::Group(g)) => {
                    send(DupesEvent::Group(DupGroup {
                        size: g.size,
                        hash: g.hash.iter().map(|b| format!("{b:02x}")).collect(),
                        copies: g.copies.into_iter().map(|c| c.paths).collect(),
                        reclaimable_bytes: g.reclaimable_bytes,
                        reclaimable_allocated_bytes: g.reclaimable_allocated_bytes,
                    }));
                }
                Some(Item::Summary(s)) => {
                    send(DupesEvent::Done(Ok(DupSummary {
                        groups: s.groups,
                        reclaimable_bytes: s.reclaimable_bytes,
                        reclaimable_allocated_bytes: s.reclaimable_allocated_bytes,
                        candidates: s.candidates,
                        files_read: s.files_read,
                        bytes_read: s.bytes_read,
                        cache_hits: s.cache_hits,
                        unreadable: s.unreadable,
                        changed: s.changed,
                    })));
                    return;
                }
                None => {}
            },
            Ok(None) => {
                send(DupesEvent::Done(Err(
                    "the daemon ended the answer early".into()
                )));
                return;
            }
            Err(s) => {
                send(DupesEvent::Done(Err(s.message().to_owned())));
                return;
            }
        }
    }
}

/// The status every second while scanning, every few once ready; a poll
/// that fails means the daemon is gone (`lost`). Until the first `ready`,
/// each call says the window waits (see `StatusRequest.waiting`). Only a status that
/// differs from the last is sent: an idle daemon wakes the window for
/// nothing (a frame of the duplicates view with hundreds of groups costs
/// a quarter of a second of CPU under llvmpipe in a debug build).
async fn poll_status(mut client: Client, out: Out, lost: UnboundedSender<String>) {
    let mut last: Option<StatusInfo> = None;
    // Until the index is first ready, a person sits waiting on this
    // window: the daemon scans at normal priority rather than in the
    // background meanwhile (a later rescan stays background work).
    let mut waiting = true;
    loop {
        let answer = client
            .status(pb::StatusRequest {
                waiting,
                ..Default::default()
            })
            .await
            .map(|r| StatusInfo::from_proto(r.into_inner()));
        let ready = match answer {
            Ok(s) => {
                let ready = s.state == "ready";
                waiting &= !ready;
                if last.as_ref() != Some(&s) {
                    last = Some(s.clone());
                    if !out.send(Reply::Status(s)) {
                        return;
                    }
                }
                ready
            }
            Err(s) => {
                let _ = lost.send(gone(&s));
                return;
            }
        };
        let wait = if ready { 3 } else { 1 };
        tokio::time::sleep(Duration::from_secs(wait)).await;
    }
}

/// Why the daemon is unreachable, in a user's words.
fn gone(s: &tonic::Status) -> String {
    let msg = s.message();
    if s.code() == tonic::Code::Unavailable || msg.is_empty() {
        format!(
            "fsindexd went away ({})",
            if msg.is_empty() {
                "connection closed"
            } else {
                msg
            }
        )
    } else {
        msg.to_owned()
    }
}

/// Subscribes to every change; a burst of events becomes one
/// [`Reply::Changed`] per [`CHANGE_COALESCE`] (a steady stream still
/// refreshes every period: a ceiling, not only a debounce). The stream
/// lives as long as the daemon: its end (the daemon ends every stream when
/// it shuts down) means the daemon is gone (`lost`).
async fn watch_changes(mut client: Client, out: Out, lost: UnboundedSender<String>) {
    let mut stream = match client.subscribe(pb::SubscribeRequest::default()).await {
        Ok(r) => r.into_inner(),
        Err(s) => {
            let _ = lost.send(gone(&s));
            return;
        }
    };
    let ended = |r: Result<Option<pb::ChangeEvent>, tonic::Status>| match r {
        Err(s) => gone(&s),
        Ok(_) => "fsindexd went away (it ended the change stream)".to_owned(),
    };
    loop {
        let ev = match stream.message().await {
            Ok(Some(ev)) => ev,
            other => {
                let _ = lost.send(ended(other));
                return;
            }
        };
        if ev.kind == pb::ChangeKind::Subscribed as i32 {
            continue;
        }
        let mut events = 1;
        let until = tokio::time::Instant::now() + CHANGE_COALESCE;
        let end = loop {
            match tokio::time::timeout_at(until, stream.message()).await {
                Ok(Ok(Some(_))) => events += 1,
                Ok(other) => break Some(other),
                Err(_) => break None,
            }
        };
        if !out.send(Reply::Changed { events }) {
            return;
        }
        if let Some(other) = end {
            let _ = lost.send(ended(other));
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_split_path_into_name_and_folder() {
        let r = Row::from_entry(pb::Entry {
            path: b"/home/a/Taxes/w2.pdf".to_vec(),
            name: b"w2.pdf".to_vec(),
            r#type: pb::EntryType::File as i32,
            ..Default::default()
        });
        assert_eq!(
            (r.name.as_str(), r.folder.as_str()),
            ("w2.pdf", "/home/a/Taxes")
        );
        assert_eq!(r.kind, RowKind::Document);
        let top = Row::from_entry(pb::Entry {
            path: b"/etc".to_vec(),
            name: b"etc".to_vec(),
            r#type: pb::EntryType::Dir as i32,
            ..Default::default()
        });
        assert_eq!((top.folder.as_str(), top.kind), ("/", RowKind::Folder));
        assert_eq!(RowKind::of(1, ".bashrc"), RowKind::File);
        assert_eq!(RowKind::of(1, "a.TAR.GZ"), RowKind::Archive);
    }

    #[test]
    fn the_query_words_are_marked_in_names() {
        let w = query_words("Tax ext:pdf !draft 2025|2024 \"w2\" *.jpg size:>1mb");
        assert_eq!(w, ["tax", "2025", "2024", "w2", ".jpg"]);
        assert_eq!(name_marks("2025_TAX_return.pdf", &w), [0..4, 5..8]);
        // Overlapping words make one mark; non-ASCII keeps char bounds.
        let w = query_words("ärg rger");
        assert_eq!(name_marks("ÄRGER.txt", &w), vec![(0..6)]);
        assert!(name_marks("notes", &query_words("content:x")).is_empty());
        // accents:ignore marks what it matches: é for e, both spellings.
        let w = query_words("cafe CREME aero");
        assert!(name_marks("Café", &w).is_empty());
        assert_eq!(name_marks_as("Café.txt", &w, true), vec![(0..5)]);
        assert_eq!(name_marks_as("cafe\u{301}", &w, true), vec![(0..4)]);
        assert_eq!(name_marks_as("Crème Ærø", &w, true), [0..6, 7..12]);
    }

    #[test]
    fn usage_names_are_the_last_component() {
        let u = Usage::from_proto(pb::Usage {
            path: b"/r/My Documents".to_vec(),
            r#type: pb::EntryType::Dir as i32,
            ..Default::default()
        });
        assert_eq!(u.name, "My Documents");
        assert!(u.kind.is_folder());
    }
}
