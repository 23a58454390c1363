//! The read side: one call per RPC, each taking the caller's view
//! (`None`: the daemon's owner, who sees everything). The server converts
//! requests and answers and does nothing else; what a caller may see is
//! decided, and unit-tested, here. The queries answer from the index; what
//! only the file system can tell (an entry's live details for `info`) is
//! read here and added to their answers.

use super::visibility::{self, View};
use super::*;
use crate::index::fold;
use crate::queries::access;
use crate::queries::browse;
use crate::queries::dupes::Report as Duplicates;
use crate::queries::fsmap;
use crate::queries::query::{Item, Query};
use crate::queries::search::{Found, Sort};
use crate::store::{EntryRow, Kind};
use std::io::Read;

/// A search, as the Search RPC asks it.
#[derive(Clone, Debug)]
pub struct SearchArgs {
    pub query: String,
    pub sort: Sort,
    pub reverse: bool,
    pub offset: usize,
    /// `usize::MAX`: all.
    pub limit: usize,
    /// Wait until every change made before the call is indexed.
    pub sync: bool,
    /// For a `content:` query, how many of the first results get a
    /// snippet.
    pub snippets: usize,
}

/// One entry in an answer (search, list), with what is worked out for the
/// answer and never stored: whether its name is a sensitive one.
#[derive(Clone, Debug)]
pub struct Listed {
    pub path: Vec<u8>,
    pub name: Vec<u8>,
    pub kind: Kind,
    pub size: u64,
    pub mtime_ns: i64,
    pub sensitive: bool,
    /// For a `content:` query: the passage that matched, words marked.
    pub snippet: String,
    /// A message inside a mailbox that the `content:` query found (the
    /// path is then the mailbox's, `/`, and the message's subject).
    pub inside: Option<Inside>,
}

/// Where a hit inside a container file is (issue 32).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inside {
    /// The mailbox's path (an mbox file, or a Maildir folder).
    pub container: Vec<u8>,
    /// The message's subject, as shown.
    pub name: String,
    /// 1-based position of the message in an mbox file; 0 for a Maildir
    /// message, a file of its own.
    pub index: u32,
    /// A Maildir message's own file.
    pub file: Option<Vec<u8>>,
}

/// What is known of a search answer before its results: how many matched
/// and how long matching and ordering took.
#[derive(Clone, Copy, Debug)]
pub struct SearchHead {
    pub total: u64,
    pub elapsed_us: u64,
}

/// Where a search answer goes, chunk by chunk (the Search stream). It is
/// offered chunks with the index held, so it never waits there: a sink
/// without room gives the chunk back, and the engine waits on
/// [`ChunkSink::wait_room`] with the index released.
pub trait ChunkSink {
    /// Takes a chunk without waiting, or gives it back.
    fn offer(&mut self, head: SearchHead, part: Vec<Listed>) -> Taken;
    /// Waits until there is room; false: stop (the reader went away, or
    /// was cut off for not reading).
    fn wait_room(&mut self) -> bool;
}

/// What a [`ChunkSink`] did with a chunk.
#[derive(Debug)]
pub enum Taken {
    Yes,
    /// No room yet: the chunk comes back.
    Full(Vec<Listed>),
    /// The reader is gone: nothing more is wanted.
    Stop,
}

/// A function as a sink that always has room: true to go on.
impl<F: FnMut(SearchHead, Vec<Listed>) -> bool> ChunkSink for F {
    fn offer(&mut self, head: SearchHead, part: Vec<Listed>) -> Taken {
        if self(head, part) {
            Taken::Yes
        } else {
            Taken::Stop
        }
    }
    fn wait_room(&mut self) -> bool {
        true
    }
}

/// Results per chunk of a search answer (one message of the Search stream).
const CHUNK: usize = 1024;

/// A page of search results and the total that matched.
#[derive(Debug)]
pub struct SearchPage {
    pub total: u64,
    pub entries: Vec<Listed>,
    /// Time spent searching inside the daemon.
    pub elapsed_us: u64,
}

/// A disk-usage question, as the DiskUsage RPC asks it.
#[derive(Clone, Debug, Default)]
pub struct UsageArgs {
    pub path: Vec<u8>,
    pub sync: bool,
    /// The largest this many children (0: all).
    pub top: usize,
    /// Every entry below, at any depth (`du -a`).
    pub all: bool,
    pub depth: u32,
    pub files_only: bool,
    pub dirs_only: bool,
    pub apparent: bool,
    /// Count the photos with a date taken too (issue 32).
    pub photos: bool,
}

/// How `list` orders a folder's children (ties: by name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ListOrder {
    /// Case-folded name.
    #[default]
    Name,
    /// Largest first.
    Size,
    /// Newest first.
    Mtime,
}

/// A path the caller may not see answers exactly as one that is not in the
/// index, so an answer never tells whether something exists.
fn unseen(path: &[u8]) -> Error {
    Error::NotFound(String::from_utf8_lossy(path).into_owned())
}

/// An absolute path argument. `..` is never resolved: such a path is
/// answered as not found, whatever it would lead to.
pub fn absolute(b: &[u8]) -> Result<PathBuf, Error> {
    let p = crate::platform::bytes::path_buf(b);
    if !p.is_absolute() {
        return Err(Error::InvalidArgument(format!(
            "{}: give an absolute path",
            p.display()
        )));
    }
    if p.components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(unseen(b));
    }
    Ok(p)
}

/// A path argument as this caller may name it: absolute, without `..`,
/// and, for a filtered caller, visible; a hidden path gets the answer a
/// missing one gets.
pub fn seen_path(view: &mut Option<View>, b: &[u8]) -> Result<PathBuf, Error> {
    let p = absolute(b)?;
    if let Some(v) = view
        && !v.sees(b)
    {
        return Err(unseen(b));
    }
    Ok(p)
}

/// An optional path argument (empty means "every root"), checked as
/// [`seen_path`] checks one.
pub fn seen_optional(view: &mut Option<View>, b: &[u8]) -> Result<Option<PathBuf>, Error> {
    if b.is_empty() {
        Ok(None)
    } else {
        seen_path(view, b).map(Some)
    }
}

/// Duplicates as the caller sees them: only copies it can see and read
/// (equal content is something only a reader may learn); a group left with
/// fewer than two copies is no group.
fn hide_groups(report: &mut Duplicates, view: &mut View) {
    for g in &mut report.groups {
        for c in &mut g.copies {
            c.paths.retain(|p| {
                view.sees(p)
                    && visibility::may(&view.caller, crate::platform::bytes::path(p), access::R)
            });
        }
        g.copies.retain(|c| !c.paths.is_empty());
    }
    report.groups.retain(|g| g.copies.len() >= 2);
    report.unreadable_paths.retain(|p| view.sees(p));
}

/// A tree as the caller sees it: nothing inside closed folders, and no
/// figures of what they hold.
fn hide_tree(node: &mut browse::Node, path: Vec<u8>, closed: &[access::Closed]) {
    node.usage.path = path.clone();
    access::hide_in(&mut node.usage, closed);
    if closed.iter().any(|c| c.path == path) {
        node.children.clear();
        node.hidden = 0;
        return;
    }
    for child in &mut node.children {
        let p = crate::platform::bytes::child(&path, &child.name);
        hide_tree(child, p, closed);
    }
}

/// Reads at most this much of a file to detect its encoding, and counts
/// the lines of text files up to [`MAX_LINE_COUNT`] bytes.
const SNIFF: usize = 64 << 10;
const MAX_LINE_COUNT: u64 = 256 << 20;

/// What only the file can tell, added to an entry described from the index
/// (or from an lstat): its times and owner from a live lstat, a symlink's
/// target and, with `read`, a text file's encoding and lines.
fn add_live(path: &Path, info: &mut browse::Info, read: bool) {
    if let Ok(m) = crate::platform::fs::lstat(path) {
        info.atime_ns = m.atime_ns;
        info.ctime_ns = m.ctime_ns;
        info.uid = m.uid;
        info.gid = m.gid;
    }
    match info.row.as_ref().map(|r| r.kind) {
        Some(Kind::Symlink) => {
            if let Ok(t) = crate::platform::fs::read_link(path) {
                info.target = t;
            }
        }
        Some(Kind::File) if read => sniff_text(path, info),
        _ => {}
    }
}

/// Text or not, its encoding (chardetng) and its line count.
fn sniff_text(path: &Path, info: &mut browse::Info) {
    // Not through a symlink, never blocking on a FIFO, any path length.
    let Ok(mut f) = crate::platform::fs::open_file(path) else {
        return;
    };
    let mut head = vec![0u8; SNIFF];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(_) => return,
        }
    }
    head.truncate(got);
    // A NUL byte in the first 64 KiB: binary (what grep and git assume).
    if head.contains(&0) {
        return;
    }
    let complete = got < SNIFF;
    info.encoding = if head.is_ascii() {
        "ASCII".into()
    } else if std::str::from_utf8(&head).is_ok()
        || (!complete && std::str::from_utf8(&head).is_err_and(|e| e.error_len().is_none()))
    {
        "UTF-8".into()
    } else {
        let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
        detector.feed(&head, complete);
        detector
            .guess(None, chardetng::Utf8Detection::Allow)
            .name()
            .to_owned()
    };
    let mut lines = memchr::memchr_iter(b'\n', &head).count() as u64;
    if !complete {
        let mut buf = vec![0u8; 1 << 20];
        let mut read = got as u64;
        loop {
            match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
                    read += n as u64;
                    if read > MAX_LINE_COUNT {
                        return; // too large to count on request
                    }
                }
                Err(_) => return,
            }
        }
    }
    info.lines = lines as i64;
}

/// Results of a page that get a snippet unless the request says.
pub const DEFAULT_SNIPPETS: usize = 10;
/// The most a request may ask for: each is a row read and inflated.
pub const MAX_SNIPPETS: usize = 10_000;

/// How long a read waits for `--sync`.
const SYNC_WAIT: Duration = Duration::from_secs(10);

impl Engine {
    /// The folders at or below entry `id` (path `path`) that the caller
    /// cannot open (see [`visibility::closed_under`]).
    pub(super) fn closed_under(
        &self,
        c: &rusqlite::Connection,
        id: i64,
        path: &[u8],
        view: &View,
    ) -> Result<Vec<access::Closed>, Error> {
        let snapshot = crate::index::read_loaded(&self.snapshot);
        let known = self.watcher.as_deref().map(|w| (&self.permissions, w));
        visibility::closed_under(c, &snapshot, id, path, view, known)
    }

    /// One entry in detail, as `info` shows it. An entry the rules keep out
    /// is answered exactly like a path that does not exist, except a
    /// SKIP-tier one asked for by its exact path: that one is described
    /// from a live lstat, flagged, when a scan of its root would reach it.
    fn stat_path(&self, path: &Path) -> Result<crate::queries::browse::Info, Error> {
        let roots = self.store.read(crate::store::roots)?;
        let Some(root) = crate::store::root_of(&roots, path) else {
            let mut info = self.store.read(|c| crate::queries::browse::stat(c, path))?;
            add_live(path, &mut info, true);
            return Ok(info);
        };
        let root_path = crate::platform::bytes::path_buf(&root.path);
        let rules = self.rules();
        let meta = self.on_disk_or_indexed(path)?;
        let is_dir = meta.as_ref().is_some_and(|m| m.is_dir());
        // Exactly what a path that does not exist gets: the index has no
        // entry for a hidden path (unless the rules changed a moment ago
        // and the rescan has not removed it yet).
        let not_found = || match self.store.read(|c| crate::store::resolve(c, path)) {
            Err(e) => e,
            Ok(_) => Error::NotFound(
                String::from_utf8_lossy(&crate::platform::bytes::vec(path)).into_owned(),
            ),
        };
        match rules.path_verdict(&root_path, path, is_dir) {
            Verdict::Skip => match meta {
                Some(m)
                    if scan::reachable(&root_path, path, rules.cross_filesystems(&root_path)) =>
                {
                    // Described from the live lstat, not the index: no
                    // folder usage, and the file is not opened (no encoding
                    // or line count): a sensitive file's contents are left
                    // alone.
                    let name = path
                        .file_name()
                        .map(|n| n.as_encoded_bytes().to_vec())
                        .unwrap_or_default();
                    let row = scan::row_from_stat(0, None, name, &m);
                    let mut info = crate::queries::browse::describe(row);
                    add_live(path, &mut info, false);
                    info.sensitive = true;
                    info.skip_tier = true;
                    Ok(info)
                }
                _ => Err(not_found()),
            },
            v if v.hides() => Err(not_found()),
            v => {
                let mut info = self.store.read(|c| crate::queries::browse::stat(c, path))?;
                add_live(path, &mut info, true);
                info.sensitive = v == Verdict::Warn;
                if let Some(row) = info
                    .row
                    .as_ref()
                    .filter(|r| r.kind == crate::store::Kind::File)
                    && !info.sensitive
                {
                    info.media = self.current_media(row.id, path)?;
                }
                Ok(info)
            }
        }
    }

    /// Searches names (Search RPC). A filtered caller gets only entries in
    /// folders it may enter, and `total` counts only those.
    pub fn search(&self, args: SearchArgs, view: Option<View>) -> Result<SearchPage, Error> {
        let mut page = SearchPage {
            total: 0,
            entries: Vec::new(),
            elapsed_us: 0,
        };
        self.search_each(args, view, &mut |head: SearchHead, part: Vec<Listed>| {
            (page.total, page.elapsed_us) = (head.total, head.elapsed_us);
            page.entries.extend(part);
            true
        })?;
        Ok(page)
    }

    /// [`search`](Self::search), handed over as it is made: `sink` is
    /// offered up to [`CHUNK`] results at a time, in order, with what is
    /// known of the whole answer, until it says stop (the caller went away)
    /// or all are given. It is offered a chunk at least once (with no
    /// results when none matched), the first time as soon as the results
    /// are ordered; an error comes before that or not at all. The first
    /// results go out while the paths of the rest are built.
    pub fn search_each(
        &self,
        args: SearchArgs,
        mut view: Option<View>,
        sink: &mut dyn ChunkSink,
    ) -> Result<(), Error> {
        self.note_activity();
        // The whole request, the content index's matching included (`t`,
        // below, starts after it).
        let started = Instant::now();
        // `@name`: the caller's saved search, in its place.
        let mut query = Query::parse(&self.expand_saved(&args.query, &view)?)?;
        if query
            .groups
            .iter()
            .flatten()
            .any(|i| matches!(i, Item::In(_) | Item::Not(_)))
        {
            query.resolve_in(|p| self.resolve_in(p))?;
        }
        if args.sync {
            self.sync(SYNC_WAIT)?;
        }
        if query.has_content() {
            query.resolve_content(|words| {
                Ok(crate::queries::query::ContentHits {
                    words: words.to_owned(),
                    scores: self
                        .store
                        .read(|c| crate::store::content::matching(c, words))?,
                })
            })?;
        }
        if query.has_media() {
            let rows = self.store.read(crate::store::media::all_ok)?;
            query.resolve_media(|t| Ok(crate::queries::media::hits(&rows, t)))?;
        }
        if query.has_tags() {
            query.resolve_tags(|key| self.tag_hits(key, &view))?;
        }
        let reader = view.as_ref().map(|v| v.caller.clone());
        // Someone typing: the terms of the next keys are worked out ahead.
        let warm = crate::queries::search::short_key(&query).filter(|_| view.is_none());
        let rules = self.rules();
        let t = Instant::now();
        let (sort, reverse) = (args.sort, args.reverse);
        // Visibility is a property of the parent folder: learn it once per
        // folder (kept across a re-ordering, below).
        let mut folders: HashMap<u32, bool> = HashMap::new();
        let mut order =
            |snapshot: &crate::index::Snapshot, offset: usize, limit: usize| match &mut view {
                None => snapshot.search_order(&query, sort, offset, limit, reverse, None),
                Some(view) => {
                    let mut keep = |i| match snapshot.entry_parent(i) {
                        Some(p) => *folders
                            .entry(p)
                            .or_insert_with(|| view.reaches(&snapshot.path(p))),
                        None => view.sees(&snapshot.path(i)),
                    };
                    snapshot.search_order(&query, sort, offset, limit, reverse, Some(&mut keep))
                }
            };
        let mut snapshot = crate::index::read_loaded(&self.snapshot);
        let (total, mut ids) = order(&snapshot, args.offset, args.limit);
        if let Some(key) = warm {
            self.typed_short(query.ignore_accents, key);
        }
        let mut ordered = SearchHead {
            total: total as u64,
            elapsed_us: t.elapsed().as_micros() as u64,
        };
        if ids.is_empty() {
            drop(snapshot);
            tracing::debug!(us = ordered.elapsed_us, total, "search");
            sink.offer(ordered, Vec::new());
            return Ok(());
        }
        let words = query.content_words();
        let listed = |f: Found, snippet: String| Listed {
            sensitive: rules
                .is_sensitive(crate::platform::bytes::path(&f.path), f.kind == Kind::Dir),
            snippet,
            path: f.path,
            name: f.name,
            kind: f.kind,
            size: f.size,
            mtime_ns: f.mtime_ns,
            inside: None,
        };
        if words.is_empty() {
            // Each chunk goes out as soon as its paths are built, under the
            // same read of the snapshot as the ordering: one consistent
            // answer. The writer waits as it did while every path was built,
            // plus the WARN checks, which are now made under the read too.
            //
            // A reader slower than that fills the stream's buffer: the
            // snapshot is then released while the reader makes room (the
            // writer and other searches never wait on a client). If the
            // index changed meanwhile, the rest of the answer is the same
            // query ordered again from the results already sent on, as the
            // next page with `offset` would be.
            let generation = |s: &crate::index::Snapshot| s.generation();
            let mut seen = generation(&snapshot);
            // Results sent before `ids[0]`, and the next to send.
            let (mut base, mut at) = (args.offset, 0usize);
            let mut held: Option<Vec<Listed>> = None;
            // Each folder's path built once for the whole answer.
            let mut paths = crate::queries::search::Paths::new();
            while at < ids.len() {
                let end = (at + CHUNK).min(ids.len());
                let part = held.take().unwrap_or_else(|| {
                    ids[at..end]
                        .iter()
                        .map(|&i| listed(paths.found(&snapshot, i), String::new()))
                        .collect()
                });
                match sink.offer(ordered, part) {
                    Taken::Yes => at = end,
                    Taken::Stop => break,
                    Taken::Full(part) => {
                        drop(snapshot);
                        if !sink.wait_room() {
                            return Ok(());
                        }
                        snapshot = crate::index::read_loaded(&self.snapshot);
                        if generation(&snapshot) == seen {
                            held = Some(part);
                            continue;
                        }
                        seen = generation(&snapshot);
                        base = base.saturating_add(at);
                        let left = match args.limit {
                            0 => 0,
                            n => n.saturating_sub(base - args.offset).max(1),
                        };
                        let (total, again) = order(&snapshot, base, left);
                        ordered.total = total as u64;
                        (ids, at) = (again, 0);
                    }
                }
            }
            drop(snapshot);
            tracing::debug!(us = t.elapsed().as_micros() as u64, total, "search");
            return Ok(());
        }
        // A `content:` query's first results carry a passage of the file's
        // text, read with the snapshot released.
        let found: Vec<Found> = ids.into_iter().map(|i| snapshot.found(i)).collect();
        drop(snapshot);
        tracing::debug!(us = t.elapsed().as_micros() as u64, total, "search");
        let mut found = found.into_iter().enumerate().peekable();
        let mut snippet_time = Duration::ZERO;
        // Snippets cut from stored texts (a mailbox's messages not counted).
        let mut cut = 0u32;
        while found.peek().is_some() {
            let part = found
                .by_ref()
                .take(CHUNK)
                .map(|(k, f)| {
                    let path = crate::platform::bytes::path(&f.path);
                    // Only files that matched the content index were read for
                    // it (never a sensitive one), and only a caller who may
                    // read the file sees what it says.
                    let readable = query.content_score(f.id).is_some()
                        && reader
                            .as_ref()
                            .is_none_or(|c| visibility::may(c, path, access::R));
                    // A mailbox found by what it says: its messages that
                    // say it, each a result of its own.
                    if readable && super::mailbox::is_mail_store(&f) {
                        let at = Instant::now();
                        let hits = self.messages_of(&f, &words, k < args.snippets);
                        snippet_time += at.elapsed();
                        if !hits.is_empty() {
                            let base = listed(f, String::new());
                            return hits
                                .into_iter()
                                .map(|(inside, snippet)| Listed {
                                    path: crate::platform::bytes::child(
                                        &inside.container,
                                        inside.name.as_bytes(),
                                    ),
                                    name: inside.name.clone().into_bytes(),
                                    snippet,
                                    inside: Some(inside),
                                    ..base.clone()
                                })
                                .collect();
                        }
                    }
                    let snippet = if k < args.snippets && readable {
                        let at = Instant::now();
                        cut += 1;
                        let s = self.snippet_of(f.id, &words);
                        snippet_time += at.elapsed();
                        s
                    } else {
                        String::new()
                    };
                    vec![listed(f, snippet)]
                })
                .collect::<Vec<Vec<Listed>>>()
                .into_iter()
                .flatten()
                .collect();
            let mut part = part;
            loop {
                match sink.offer(ordered, part) {
                    Taken::Yes => break,
                    Taken::Stop => return Ok(()),
                    Taken::Full(back) => {
                        part = back;
                        if !sink.wait_room() {
                            return Ok(());
                        }
                    }
                }
            }
        }
        tracing::debug!(
            us = t.elapsed().as_micros() as u64,
            snippets_us = snippet_time.as_micros() as u64,
            snippets = cut,
            whole_us = started.elapsed().as_micros() as u64,
            "content search answered"
        );
        Ok(())
    }

    /// An `in:` folder's entry: SQLite's, or while a first index is held
    /// back from SQLite ([`crate::store::backlog`]), the name index's.
    fn resolve_in(&self, p: &Path) -> Result<i64, Error> {
        match self.store.read(|c| crate::store::resolve(c, p)) {
            Err(Error::NotFound(why)) if !self.store.backlog.persisted() => {
                let snapshot = crate::index::read_loaded(&self.snapshot);
                super::held::held_path(&snapshot, crate::platform::bytes::of(p))
                    .map(i64::from)
                    .ok_or(Error::NotFound(why))
            }
            found => found.map(|(_, id)| id),
        }
    }

    /// Disk usage of a path and its children, as GNU du counts (DiskUsage
    /// RPC). A filtered caller sees no figures from inside folders it may
    /// not enter.
    pub fn disk_usage(&self, args: UsageArgs, mut view: Option<View>) -> Result<du::Report, Error> {
        self.note_activity();
        // The folders' aggregates are SQLite's: inside a first index not yet
        // written, from the name index and the held tree, or after it.
        if let Some(report) = self.held_usage(&args, &view)? {
            return Ok(report);
        }
        self.store.backlog.wait();
        let path = seen_path(&mut view, &args.path)?;
        if args.sync {
            self.sync(SYNC_WAIT)?;
        }
        self.store.read(|c| {
            let (_, id) = crate::store::resolve(c, &path)?;
            // For a filtered caller every row is ranked after the closed
            // folders are taken out.
            let top = if view.is_some() { 0 } else { args.top };
            let mut report = if args.all || args.depth > 1 || args.files_only || args.dirs_only {
                let opts = du::Listing {
                    depth: (!args.all).then_some(args.depth.max(1)),
                    files_only: args.files_only,
                    dirs_only: args.dirs_only,
                    apparent: args.apparent,
                    top,
                };
                du::listing(c, id, args.path.clone(), opts)?
            } else {
                du::disk_usage(c, id, args.path.clone(), top, args.apparent)?
            };
            if let Some(v) = &view {
                let closed = self.closed_under(c, id, &args.path, v)?;
                access::hide_report(&mut report, &closed, args.top, args.apparent);
            } else if args.photos && report.total.kind == Some(crate::store::Kind::Dir) {
                crate::queries::photos::fill(c, id, &mut report)?;
            }
            Ok(report)
        })
    }

    /// A folder's children (List RPC). A folder the caller cannot open is
    /// refused, as `ls` refuses it.
    pub fn list(
        &self,
        path: &[u8],
        order: ListOrder,
        reverse: bool,
        mut view: Option<View>,
    ) -> Result<Vec<Listed>, Error> {
        self.note_activity();
        let path = seen_path(&mut view, path)?;
        let mut rows = match self.held_list(&path) {
            Some(rows) => rows,
            None => {
                self.store.backlog.wait();
                self.store.read(|c| browse::list(c, &path))?
            }
        };
        if let Some(v) = &view
            && crate::platform::fs::is_dir(&path)
            && !v.opens(&path)
        {
            return Err(Error::PermissionDenied(format!(
                "{}: you may not list this folder",
                path.display()
            )));
        }
        let cmp: fn(&EntryRow, &EntryRow) -> std::cmp::Ordering = match order {
            ListOrder::Size => |a, b| b.size.cmp(&a.size).then_with(|| a.name.cmp(&b.name)),
            ListOrder::Mtime => |a, b| {
                b.mtime_ns
                    .cmp(&a.mtime_ns)
                    .then_with(|| a.name.cmp(&b.name))
            },
            ListOrder::Name => |a, b| {
                let (x, y) = (fold::fold_bytes(&a.name), fold::fold_bytes(&b.name));
                x.cmp(&y).then_with(|| a.name.cmp(&b.name))
            },
        };
        rows.sort_by(cmp);
        if reverse {
            rows.reverse();
        }
        let rules = self.rules();
        let folder = rules.folder(&path);
        let base = crate::platform::bytes::of(&path);
        Ok(rows
            .into_iter()
            .map(|r| {
                let p = crate::platform::bytes::child(base, &r.name);
                Listed {
                    sensitive: folder
                        .verdict(crate::platform::bytes::os(&r.name), r.kind == Kind::Dir)
                        == Verdict::Warn,
                    path: p,
                    name: r.name,
                    kind: r.kind,
                    size: r.size,
                    mtime_ns: r.mtime_ns,
                    snippet: String::new(),
                    inside: None,
                }
            })
            .collect())
    }

    /// A folder's subtree with sizes, `depth` levels, at most `max_children`
    /// per folder (Tree RPC).
    pub fn tree(
        &self,
        path: &[u8],
        depth: u32,
        max_children: usize,
        mut view: Option<View>,
    ) -> Result<browse::Node, Error> {
        self.note_activity();
        self.store.backlog.wait();
        let p = seen_path(&mut view, path)?;
        self.store.read(|c| {
            let mut root = browse::tree(c, &p, depth, max_children)?;
            if let Some(v) = &view {
                let (_, id) = crate::store::resolve(c, &p)?;
                let closed = self.closed_under(c, id, path, v)?;
                hide_tree(&mut root, path.to_vec(), &closed);
            }
            Ok(root)
        })
    }

    /// The condensed map of a tree within `budget` tokens (FsMap RPC).
    pub fn fs_map(
        &self,
        path: &[u8],
        budget: u32,
        now_ns: i64,
        mut view: Option<View>,
    ) -> Result<fsmap::Map, Error> {
        self.note_activity();
        self.store.backlog.wait();
        let p = seen_path(&mut view, path)?;
        self.store.read(|c| {
            let closed = match &view {
                None => Default::default(),
                Some(v) => {
                    let (_, id) = crate::store::resolve(c, &p)?;
                    self.closed_under(c, id, path, v)?
                        .into_iter()
                        .map(|c| c.id)
                        .collect()
                }
            };
            let snapshot = crate::index::read_loaded(&self.snapshot);
            fsmap::fs_map(c, &snapshot, &p, budget, now_ns, &closed)
        })
    }

    /// One entry in detail (Stat RPC). What only the content tells (its
    /// encoding, its lines) is for those who may read it.
    pub fn stat(
        &self,
        path: &[u8],
        mut view: Option<View>,
    ) -> Result<(PathBuf, browse::Info), Error> {
        self.store.backlog.wait();
        let p = seen_path(&mut view, path)?;
        let mut info = self.stat_path(&p)?;
        if let Some(v) = &view {
            if !visibility::may(&v.caller, &p, access::R) {
                info.encoding.clear();
                info.lines = -1;
                // What a file says about itself is for those who may read it.
                info.media = None;
            }
            // Where a photo was taken is for its owner (and root) only.
            if v.caller.uid != info.uid
                && v.caller.uid != 0
                && let Some(m) = info.media.as_mut()
            {
                m.media.gps_lat = None;
                m.media.gps_lon = None;
            }
            let id = info.row.as_ref().map(|r| r.id);
            if let (Some(u), Some(id)) = (info.usage.as_mut(), id) {
                let closed = self.store.read(|c| self.closed_under(c, id, path, v))?;
                access::hide_in(u, &closed);
            }
        }
        if info.row.is_none() {
            return Err(Error::NotFound(format!("{} (it vanished)", p.display())));
        }
        // The caller's tags and the file's own (a SKIP-tier file, described
        // from a live lstat, has no entry to carry any).
        if let Some(id) = info.row.as_ref().map(|r| r.id).filter(|id| *id > 0) {
            let uid = super::label_uid(&view);
            info.tags = self
                .store
                .read(|c| crate::store::labels::of_entry(c, id, uid))?
                .into_iter()
                .map(|t| (t.name, t.source))
                .collect();
        }
        Ok((p, info))
    }

    /// Duplicate files under `path` (every root when empty). A filtered
    /// caller sees only copies it may read.
    pub fn duplicates(
        &self,
        path: &[u8],
        min_size: u64,
        include_empty: bool,
        progress: &mut dyn FnMut(dupes::Progress) -> bool,
        mut view: Option<View>,
    ) -> Result<Duplicates, Error> {
        self.note_activity();
        self.store.backlog.wait();
        let path = seen_optional(&mut view, path)?;
        let mut report =
            self.find_duplicates(path.as_deref(), min_size, include_empty, false, progress)?;
        if let Some(v) = view.as_mut() {
            hide_groups(&mut report, v);
        }
        Ok(report)
    }

    /// The roots this caller may see.
    pub fn roots_seen(&self, mut view: Option<View>) -> Result<Vec<RootView>, Error> {
        let mut roots = self.root_views()?;
        if let Some(v) = view.as_mut() {
            roots.retain(|r| v.sees(&r.path));
        }
        Ok(roots)
    }

    /// Walks `path` (or every root) afresh and compares it with the index;
    /// a filtered caller hears only of differences it may see.
    pub fn verify_seen(
        &self,
        path: &[u8],
        fix: bool,
        mut view: Option<View>,
    ) -> Result<Verified, Error> {
        let p = seen_optional(&mut view, path)?;
        let mut found = self.verify(p.as_deref(), fix)?;
        if let Some(v) = view.as_mut() {
            found
                .differences
                .retain(|d| v.sees(crate::platform::bytes::of(&d.path)));
        }
        Ok(found)
    }
}

/// A rescan under way: its progress, and its end.
#[derive(Debug)]
pub struct Rescan {
    progress: Vec<Arc<Progress>>,
    done: mpsc::Receiver<Result<Outcome, Runtime>>,
    remaining: usize,
    failure: Option<Runtime>,
}

impl Rescan {
    /// Entries scanned, changes written and errors so far, over every root
    /// being scanned.
    pub fn figures(&self) -> (u64, u64, u64) {
        let sum = |f: fn(&Progress) -> u64| self.progress.iter().map(|x| f(x)).sum::<u64>();
        (
            sum(|x| x.scanned.load(Ordering::Relaxed)),
            sum(|x| x.changes.load(Ordering::Relaxed)),
            sum(|x| x.errors.load(Ordering::Relaxed)),
        )
    }

    /// `None` while scans run; then how they ended (the first failure, if
    /// any).
    pub fn finished(&mut self) -> Option<Result<(), Error>> {
        while let Ok(r) = self.done.try_recv() {
            self.remaining -= 1;
            if let Err(e) = r {
                self.failure.get_or_insert(e);
            }
        }
        (self.remaining == 0).then(|| match self.failure.take() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        })
    }
}

impl Engine {
    /// Rescans `path` (every root when empty), as this caller may name it.
    pub fn rescan_seen(
        &self,
        path: &[u8],
        waited: bool,
        mut view: Option<View>,
    ) -> Result<Rescan, Error> {
        let p = seen_optional(&mut view, path)?;
        let (tx, done) = mpsc::channel();
        let progress = self.rescan(p.as_deref(), Some(tx), waited)?;
        Ok(Rescan {
            remaining: progress.len(),
            progress,
            done,
            failure: None,
        })
    }

    /// Rescans `path` (every root when empty), as this caller may name it
    /// (Rescan RPC), and reports as it goes. Without `wait`: one report as
    /// the scans start. With it: a report every 100 ms while the scans
    /// run; then, a moment after they end, one every 100 ms while content
    /// search reads what they gave it; then a last one marked `done`. A
    /// scan that fails ends the reports with its error.
    ///
    /// The reports come from a task of their own (so this is called within
    /// a tokio runtime), and at most four wait for a slow reader; they stop
    /// when the receiver is dropped.
    pub fn rescan_progress(
        self: &Arc<Self>,
        path: &[u8],
        wait: bool,
        view: Option<View>,
    ) -> Result<tokio::sync::mpsc::Receiver<Result<RescanProgress, Error>>, Error> {
        let scan = self.rescan_seen(path, wait, view)?;
        let engine = self.clone();
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let started = Instant::now();
        tokio::spawn(async move {
            let progress = |scan: &Rescan, done: bool, content_queued: u64| {
                let (scanned, written, errors) = scan.figures();
                RescanProgress {
                    scanned,
                    written,
                    errors,
                    done,
                    elapsed_ms: started.elapsed().as_millis() as u64,
                    content_queued,
                }
            };
            let mut scan = scan;
            if !wait {
                let _ = tx.send(Ok(progress(&scan, false, 0))).await;
                return;
            }
            let end = loop {
                if let Some(end) = scan.finished() {
                    break end;
                }
                if tx.send(Ok(progress(&scan, false, 0))).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            };
            if let Err(e) = end {
                let _ = tx.send(Err(e)).await;
                return;
            }
            // Then what the scans gave content search to read.
            tokio::time::sleep(Duration::from_millis(50)).await;
            loop {
                let e = engine.clone();
                let pending = match tokio::task::spawn_blocking(move || e.content_pending()).await {
                    Ok(Ok(p)) => p,
                    Ok(Err(e)) => {
                        let _ = tx.send(Err(e)).await;
                        return;
                    }
                    // The count panicked: an internal error, with its message.
                    Err(e) => {
                        let _ = tx
                            .send(Err(Error::Io(std::io::Error::other(e.to_string()))))
                            .await;
                        return;
                    }
                };
                let Some(queued) = pending else { break };
                if tx.send(Ok(progress(&scan, false, queued))).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let _ = tx.send(Ok(progress(&scan, true, 0))).await;
        });
        Ok(rx)
    }
}

/// Where a rescan stands (see [`Engine::rescan_progress`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RescanProgress {
    /// Entries scanned, changes written and errors so far, over every root
    /// being scanned.
    pub scanned: u64,
    pub written: u64,
    pub errors: u64,
    /// Files the scans queued that content search has still to read (once
    /// the scans are over).
    pub content_queued: u64,
    /// Since the rescan started.
    pub elapsed_ms: u64,
    /// The last report: the scans, and the reading they queued, are over.
    pub done: bool,
}
