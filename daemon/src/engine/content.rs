//! Content search's running part: which folders have content on, and the
//! worker that reads their files into the FTS index and keeps it current.
//!
//! The worker is one thread at nice 19 and idle I/O. It wakes after every
//! scan and every applied watcher batch (at most twice a second) and
//! *sweeps*: it labels every entry of the search snapshot with the content
//! folder above it, and queues each file whose size, mtime or extractor
//! version differs from its `content_state` row (a file that left a
//! content folder, or became sensitive, loses its row). Then it drains the
//! persistent queue: plain text is read in-process, documents in the
//! sandboxed child (`fsindex-extract-child`), and each result goes through the
//! single writer. An unchanged restart finds every row current and reads
//! nothing.

use super::*;
use std::collections::BTreeMap;

use crate::store::content::{self, ContentRow, Made};
use fsindex_extract::{Failure, Kind as TextKind};

/// Where content is on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContentSettings {
    /// Folders with content on (`true`) or off (`false`); the deepest one
    /// above a file decides. Roots added with `--content` are added to these.
    pub folders: BTreeMap<PathBuf, bool>,
    /// Most text kept per file.
    pub max_text_bytes: usize,
}

impl ContentSettings {
    /// What a config asks for: `[root."PATH"] content = true|false`, every
    /// `--root` of this run with `--content`, and by default the user's
    /// Documents, Desktop and Downloads (when they lie under a root).
    pub fn from_config(
        config: &crate::config::Config,
        cli_roots: &[PathBuf],
        cli_content: bool,
    ) -> ContentSettings {
        let mut folders = BTreeMap::new();
        for d in default_content_folders() {
            folders.insert(d, true);
        }
        for (root, o) in &config.root {
            if let Some(on) = o.content {
                let root = scan::canonical_root(root).unwrap_or_else(|_| root.clone());
                folders.insert(root, on);
            }
        }
        if cli_content {
            for r in cli_roots {
                let r = scan::canonical_root(r).unwrap_or_else(|_| r.clone());
                folders.insert(r, true);
            }
        }
        ContentSettings {
            folders,
            max_text_bytes: config
                .content_max_text_bytes
                .map_or(fsindex_extract::Limits::default().max_text_bytes, |n| {
                    n as usize
                }),
        }
    }
}

/// The platform's document folders (Documents, Desktop, Downloads), as
/// Tracker indexes them by default; `~/Documents` and the like when the
/// platform names none.
fn default_content_folders() -> Vec<PathBuf> {
    let Some(user) = directories::UserDirs::new() else {
        return Vec::new();
    };
    let home = user.home_dir().to_owned();
    let named = [
        (user.document_dir(), "Documents"),
        (user.desktop_dir(), "Desktop"),
        (user.download_dir(), "Downloads"),
    ];
    named
        .into_iter()
        .map(|(d, fallback)| d.map_or_else(|| home.join(fallback), Path::to_owned))
        .filter(|d| d != &home)
        .map(|d| fsindex_proto::paths::canonicalize(&d).unwrap_or(d))
        .collect()
}

/// Counters since start, and the figures of the last sweep.
#[derive(Default)]
pub struct ContentRuntime {
    settings: RwLock<Arc<ContentSettings>>,
    /// Wakes the worker: a sweep is due; it is at work.
    wake: super::wake::Wake,
    started: AtomicBool,
    /// Files read since start (extracted or failed).
    pub extracted: std::sync::atomic::AtomicU64,
    pub failed: std::sync::atomic::AtomicU64,
    /// Per content folder, as of the last sweep.
    figures: Mutex<Vec<ContentFigures>>,
    pool: std::sync::OnceLock<fsindex_extract::Pool>,
}

impl std::fmt::Debug for ContentRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContentRuntime")
            .field("settings", &self.settings)
            .field("extracted", &self.extracted)
            .finish()
    }
}

/// One content folder's figures for `status`.
#[derive(Clone, Debug, Default)]
pub struct ContentFigures {
    pub path: PathBuf,
    pub indexed: u64,
    pub queued: u64,
    /// Failures by reason (`too_big`, `timeout`, `parse`, `unreadable`, ...).
    pub failed: BTreeMap<String, u64>,
    pub text_bytes: u64,
}

/// What the worker knows between sweeps: the state of every content row.
struct Worker {
    made: HashMap<u32, Made>,
    last_sweep: Instant,
    /// The content folders and every entry's label, as of the last sweep:
    /// the drain and the status figures use them instead of working them
    /// out again.
    folders: Vec<(PathBuf, bool)>,
    labels: Vec<u16>,
    /// Whether the queue may hold files: false once a drain found it
    /// empty, until a sweep queues more (nothing else queues). A look at a
    /// queue known empty is skipped: an idle daemon then runs no query
    /// every 5 s, nor faults back in the code the trimmer gave back.
    maybe_queued: bool,
}

/// How many queued files are read between writer commits.
const CHUNK: usize = 32;

impl Engine {
    /// Sets where content is on (at start, and on every reload) and starts
    /// the worker the first time.
    pub fn set_content(self: &Arc<Self>, settings: ContentSettings) -> Result<(), Error> {
        *self.content.settings.write_ok() = Arc::new(settings);
        if !self.content.started.swap(true, Ordering::SeqCst) {
            let e = self.clone();
            std::thread::Builder::new()
                .name("fsindex-content".into())
                .spawn(move || e.content_loop())?;
        }
        self.start_media()?;
        self.content_due();
        Ok(())
    }

    /// Asks the worker for a sweep (after a scan or a watcher batch).
    pub(super) fn content_due(&self) {
        self.content.wake.ask();
        self.media_due();
    }

    /// The folders with content on or off, roots added with `--content`
    /// included.
    /// Only folders under a root count (the default Documents folder of a
    /// daemon that indexes something else is not one).
    fn content_folders(&self) -> Result<BTreeMap<PathBuf, bool>, Error> {
        let settings = self.content.settings.read_ok().clone();
        let mut folders = settings.folders.clone();
        for r in self.store.read(content::content_roots)? {
            folders
                .entry(crate::platform::bytes::path_buf(&r))
                .or_insert(true);
        }
        let roots = self.store.read(crate::store::roots)?;
        folders.retain(|f, _| crate::store::root_of(&roots, f).is_some());
        Ok(folders)
    }

    fn content_loop(self: Arc<Self>) {
        crate::platform::process::lower_thread_priority();
        let mut worker = Worker {
            made: HashMap::new(),
            last_sweep: Instant::now() - Duration::from_secs(1),
            // What a run before this one left in the queue.
            maybe_queued: true,
            folders: Vec::new(),
            labels: Vec::new(),
        };
        match self.store.read(content::states) {
            Ok(m) => worker.made = m,
            Err(e) => tracing::error!("reading the content index failed: {e}"),
        }
        loop {
            // A sweep when one is due; otherwise every few seconds the
            // queue is looked at again where it may hold files (what a
            // failed or interrupted pass left).
            let Some(sweep) = self
                .content
                .wake
                .next(&self.cancel, &mut worker.last_sweep, || self.scanning())
            else {
                return;
            };
            if sweep && let Err(e) = self.sweep(&mut worker) {
                tracing::error!("content sweep failed: {e}");
                self.content.wake.rest();
                continue;
            }
            let read = match self.drain(&mut worker) {
                Ok(n) => n,
                Err(e) => {
                    tracing::error!("content extraction failed: {e}");
                    0
                }
            };
            // Figures change only with a sweep or files read.
            if (sweep || read > 0)
                && let Err(e) = self.content_figures(&worker)
            {
                tracing::error!("content figures failed: {e}");
            }
            self.content.wake.rest();
        }
    }

    /// Labels every entry with its content folder: 0 for none, else the
    /// folder's index in `folders` + 1.
    fn content_labels(
        &self,
        snapshot: &Snapshot,
        folders: &[(PathBuf, bool)],
    ) -> Result<Vec<u16>, Error> {
        let mut seeds = HashMap::new();
        for (k, (path, on)) in folders.iter().enumerate() {
            if let Ok((_, id)) = self.store.read(|c| crate::store::resolve(c, path)) {
                seeds.insert(id as u32, if *on { k as u16 + 1 } else { 0 });
            }
        }
        Ok(snapshot.subtree_labels(&seeds))
    }

    /// Queues every content file whose row is missing or stale; drops the
    /// rows of files that left content folders.
    fn sweep(&self, worker: &mut Worker) -> Result<(), Error> {
        let folders: Vec<(PathBuf, bool)> = self.content_folders()?.into_iter().collect();
        worker.folders = folders.clone();
        // Content on nowhere and nothing indexed: no pass over every entry
        // after each watcher batch.
        if !folders.iter().any(|(_, on)| *on) && worker.made.is_empty() {
            worker.labels.clear();
            return Ok(());
        }
        let snapshot = crate::index::read_loaded(&self.snapshot);
        let labels = self.content_labels(&snapshot, &folders)?;
        let mut queue = Vec::new();
        let mut wanted = std::collections::HashSet::new();
        for (i, &label) in labels.iter().enumerate() {
            let i = i as u32;
            if label == 0 || snapshot.entry_kind(i) != Some(crate::store::Kind::File) {
                continue;
            }
            let Some(kind) = fsindex_extract::kind_for_name(&snapshot.entry_name(i)) else {
                continue;
            };
            wanted.insert(i);
            let now = Made {
                size: snapshot.entry_size(i),
                mtime_ns: snapshot.entry_mtime_ns(i),
                version: kind.version(),
            };
            if worker.made.get(&i) != Some(&now) {
                queue.push(i as i64);
            }
        }
        drop(snapshot);
        worker.labels = labels;
        let gone: Vec<i64> = worker
            .made
            .keys()
            .filter(|i| !wanted.contains(i))
            .map(|&i| i as i64)
            .collect();
        for i in &gone {
            worker.made.remove(&(*i as u32));
        }
        if !gone.is_empty() {
            self.writer.send(vec![Op::DropContent(gone)])?;
        }
        if !queue.is_empty() {
            worker.maybe_queued = true;
            self.writer.send(vec![Op::QueueContent(queue)])?;
        }
        self.writer.flush()?;
        Ok(())
    }

    /// Reads the queued files, a chunk at a time, until the queue is empty
    /// or a sweep is due.
    /// Returns how many files it read.
    fn drain(&self, worker: &mut Worker) -> Result<usize, Error> {
        if !worker.maybe_queued {
            return Ok(0);
        }
        let rules = self.rules();
        let mut read = 0;
        loop {
            if self.cancel.load(Ordering::Relaxed) || self.content.wake.is_due() || self.scanning()
            {
                return Ok(read);
            }
            let ids = self.store.read(|c| content::queued(c, CHUNK))?;
            if ids.is_empty() {
                worker.maybe_queued = false;
                return Ok(read);
            }
            read += ids.len();
            let folders = worker.folders.clone();
            let mut rows = Vec::new();
            let mut dropped = Vec::new();
            for id in ids {
                match self.read_one(id as u32, &folders, &rules) {
                    Some(row) => {
                        worker.made.insert(
                            id as u32,
                            Made {
                                size: row.size,
                                mtime_ns: row.mtime_ns,
                                version: row.version,
                            },
                        );
                        rows.push(row);
                    }
                    None => {
                        worker.made.remove(&(id as u32));
                        dropped.push(id);
                    }
                }
            }
            if !dropped.is_empty() {
                self.writer.send(vec![Op::DropContent(dropped)])?;
            }
            if !rows.is_empty() {
                self.writer.send(vec![Op::PutContent(rows)])?;
            }
            self.writer.flush()?;
        }
    }

    /// Reads one queued file; `None` when it is no longer a content file
    /// (gone, moved out, sensitive, or of a kind that is not read).
    fn read_one(&self, id: u32, folders: &[(PathBuf, bool)], rules: &Rules) -> Option<ContentRow> {
        let (path, name, size, mtime_ns) = {
            let snapshot = crate::index::read_loaded(&self.snapshot);
            if snapshot.entry_kind(id) != Some(crate::store::Kind::File) {
                return None;
            }
            (
                crate::platform::bytes::path_buf(&snapshot.path(id)),
                snapshot.entry_name(id).to_vec(),
                snapshot.entry_size(id),
                snapshot.entry_mtime_ns(id),
            )
        };
        let on = folders
            .iter()
            .filter(|(f, _)| path.starts_with(f))
            .max_by_key(|(f, _)| f.as_os_str().len())
            .is_some_and(|(_, on)| *on);
        // Sensitive files (the WARN tier; BLOCK and SKIP are never indexed)
        // are never opened.
        if !on || rules.is_sensitive(&path, false) {
            return None;
        }
        let kind = fsindex_extract::kind_for_name(&name)?;
        let got = self.extract(&path, kind);
        self.content.extracted.fetch_add(1, Ordering::Relaxed);
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let row = match got {
            Ok(e) => {
                // Stemmed here, on the worker, not in the writer's transaction.
                let lang = crate::store::stem::guess(&e.text);
                ContentRow {
                    entry_id: id as i64,
                    size,
                    mtime_ns,
                    extractor: e.extractor.into(),
                    version: e.version,
                    status: "ok".into(),
                    detail: String::new(),
                    stems: crate::store::stem::stems(&e.text, lang),
                    lang: lang.into(),
                    text: Some(e.text),
                    encoding: e.encoding,
                    truncated: e.truncated,
                    at,
                }
            }
            Err(f) => {
                self.content.failed.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(path = %path.display(), reason = f.reason(), "not extracted: {f}");
                ContentRow {
                    entry_id: id as i64,
                    size,
                    mtime_ns,
                    extractor: kind.extractor().into(),
                    version: kind.version(),
                    status: f.reason().into(),
                    detail: f.detail(),
                    text: None,
                    encoding: String::new(),
                    lang: String::new(),
                    stems: String::new(),
                    truncated: false,
                    at,
                }
            }
        };
        Some(row)
    }

    /// The text of one file: in-process for plain text, in the sandboxed
    /// child for documents.
    pub(super) fn extract(
        &self,
        path: &Path,
        kind: TextKind,
    ) -> Result<fsindex_extract::Extracted, Failure> {
        let max_text_bytes = self.content.settings.read_ok().max_text_bytes;
        let pool = self.content.pool.get_or_init(|| {
            let mut config = fsindex_extract::SandboxConfig::default();
            config.limits.max_text_bytes = max_text_bytes;
            let cmd = std::process::Command::new(crate::platform::process::extractor_path());
            fsindex_extract::Pool::new(cmd, config, 1)
        });
        pool.extract(path, kind)
    }

    /// The snippet of entry `id` for `words`, cut from the text the content
    /// index keeps: the text that matched, and no file is opened for it.
    /// Empty when the index holds no text for it (a row made before
    /// migration 0006 that the worker has not read again yet).
    pub(super) fn snippet_of(&self, id: u32, words: &[&str]) -> String {
        match self.store.read(|c| content::text(c, id as i64)) {
            Ok(Some(t)) => crate::queries::snippet::snippet(
                &t.text,
                words,
                crate::queries::snippet::WIDTH,
                &t.lang,
            )
            .unwrap_or_default(),
            Ok(None) => String::new(),
            Err(e) => {
                tracing::warn!(id, "reading stored text for a snippet failed: {e}");
                String::new()
            }
        }
    }

    /// Recounts the figures `status` shows, per content folder.
    fn content_figures(&self, worker: &Worker) -> Result<(), Error> {
        let (folders, labels) = (&worker.folders, &worker.labels);
        let mut figures: Vec<ContentFigures> = folders
            .iter()
            .map(|(p, _)| ContentFigures {
                path: p.clone(),
                ..Default::default()
            })
            .collect();
        let label_of = |id: u32| labels.get(id as usize).copied().unwrap_or(0);
        for (id, status, bytes) in self.store.read(content::outcomes)? {
            let l = label_of(id);
            if l == 0 {
                continue;
            }
            let f = &mut figures[l as usize - 1];
            if status == "ok" {
                f.indexed += 1;
                f.text_bytes += bytes;
            } else {
                *f.failed.entry(status).or_default() += 1;
            }
        }
        for id in self.store.read(content::all_queued)? {
            let l = label_of(id as u32);
            if l > 0 {
                figures[l as usize - 1].queued += 1;
            }
        }
        let figures = figures
            .into_iter()
            .zip(folders)
            .filter(|(_, (_, on))| *on)
            .map(|(f, _)| f)
            .collect();
        *self.content.figures.lock_ok() = figures;
        Ok(())
    }

    /// Files waiting to be read for content search; `None` when the worker
    /// has nothing to do (nothing queued, no sweep due or under way).
    pub fn content_pending(&self) -> Result<Option<u64>, Error> {
        let queued = self.store.read(content::queued_count)?;
        let working = self.content.wake.working();
        Ok((queued > 0 || working).then_some(queued))
    }

    /// Per content folder: files indexed, queued, failed by reason, text
    /// bytes (as of the worker's last pass).
    pub fn content_status(&self) -> Vec<ContentFigures> {
        self.content.figures.lock_ok().clone()
    }
}
