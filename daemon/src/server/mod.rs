//! The tonic service: translates protobuf to engine calls and back, and
//! nothing more. Blocking work (SQLite, the in-memory search) runs on the
//! blocking pool.

use crate::{LockOk, RwLockOk};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use fsindex_proto::v1 as pb;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::Error;
use crate::engine::reload::Reloader;
use crate::engine::{Engine, RootState, RootView};
use crate::queries::access::{Caller, View};
use crate::queries::du;
use crate::queries::query::Query;
use crate::queries::search::{ChangeKind, Sort};
use crate::store::Kind;

/// The gRPC service over one engine.
#[derive(Clone, Debug)]
pub struct IndexService {
    engine: Arc<Engine>,
    /// Machine-wide mode: answers are filtered to what each caller sees.
    system: bool,
    reloader: Option<Arc<Reloader>>,
    /// The TCP address listened on, for status.
    listen: String,
    /// CPU time (ms) at the last two status calls at least a second apart,
    /// for the CPU share since (a client's handshake just before a status
    /// must not shrink the window to nothing).
    cpu_seen: Arc<std::sync::Mutex<[(Instant, u64); 2]>>,
}

impl IndexService {
    pub fn new(engine: Arc<Engine>) -> Self {
        IndexService {
            cpu_seen: Arc::new(std::sync::Mutex::new([(engine.started, 0); 2])),
            engine,
            system: false,
            reloader: None,
            listen: String::new(),
        }
    }

    /// Answers filtered per caller, as a machine-wide daemon
    /// (`fsindexd --system`) does.
    pub fn machine_wide(mut self, on: bool) -> Self {
        self.system = on;
        self
    }

    /// Config reloads through the Reload RPC.
    pub fn with_reloader(mut self, reloader: Arc<Reloader>) -> Self {
        self.reloader = Some(reloader);
        self
    }

    /// The TCP address also served, shown in status.
    pub fn with_listen(mut self, addr: String) -> Self {
        self.listen = addr;
        self
    }

    /// The caller's view when answers must be filtered: in machine-wide
    /// mode, for a caller on the unix socket that is not root. (A TCP
    /// caller holds the daemon's token and sees what its owner sees.)
    fn view<T>(&self, req: &Request<T>) -> Option<View> {
        if !self.system {
            return None;
        }
        let cred = req
            .extensions()
            .get::<tonic::transport::server::UdsConnectInfo>()?
            .peer_cred?;
        (cred.uid() != 0).then(|| View::new(Caller::from_peer(cred.uid(), cred.gid(), cred.pid())))
    }

    /// Refuses what only the daemon's owner may do (change roots, reload).
    fn owner_only<T>(&self, req: &Request<T>, what: &str) -> Result<(), Status> {
        match self.view(req) {
            Some(v) => Err(Status::permission_denied(format!(
                "{what} is for root on a machine-wide index (you are uid {})",
                v.caller.uid
            ))),
            None => Ok(()),
        }
    }
}

/// A path the caller may not see answers exactly as one that is not in the
/// index, so an answer never tells whether something exists.
fn unseen(path: &[u8]) -> Status {
    Status::from(Error::NotFound(String::from_utf8_lossy(path).into_owned()))
}

type ResponseStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// An absolute path argument. `..` is never resolved: such a path is
/// answered as not found, whatever it would lead to.
fn absolute(b: &[u8]) -> Result<PathBuf, Status> {
    let p = crate::platform::bytes::path_buf(b);
    if !p.is_absolute() {
        return Err(Status::invalid_argument(format!(
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
fn seen_path(view: &mut Option<View>, b: &[u8]) -> Result<PathBuf, Status> {
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
fn seen_optional(view: &mut Option<View>, b: &[u8]) -> Result<Option<PathBuf>, Status> {
    if b.is_empty() {
        Ok(None)
    } else {
        seen_path(view, b).map(Some)
    }
}

fn entry_type(k: Kind) -> i32 {
    (match k {
        Kind::File => pb::EntryType::File,
        Kind::Dir => pb::EntryType::Dir,
        Kind::Symlink => pb::EntryType::Symlink,
        Kind::Other => pb::EntryType::Other,
    }) as i32
}

fn root_status(v: RootView) -> pb::RootStatus {
    pb::RootStatus {
        path: v.path,
        state: (match v.state {
            RootState::Pending => pb::RootState::Pending,
            RootState::Scanning => pb::RootState::Scanning,
            RootState::Ready => pb::RootState::Ready,
            RootState::Error => pb::RootState::Error,
        }) as i32,
        entries: v.entries,
        scanned: v.scanned,
        errors: v.errors,
        scanned_at: v.scanned_at,
        error: v.error.unwrap_or_default(),
        watch: v.watch,
        hashing: v.hashing,
    }
}

fn usage(u: du::Usage) -> pb::Usage {
    pb::Usage {
        path: u.path,
        r#type: u.kind.map(entry_type).unwrap_or_default(),
        bytes: u.bytes,
        apparent_bytes: u.apparent,
        files: u.files,
        dirs: u.dirs,
        incomplete: u.incomplete,
        depth: u.depth,
        excluded: u.excluded,
        measured_at: u.measured_at,
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map_err(Status::from)
}

/// The daemon's resident memory and CPU time (ms) since start.
fn process_figures() -> (u64, u64) {
    let pid = sysinfo::Pid::from_u32(std::process::id());
    let Ok(mut sys) = sysinfo::System::new() else {
        return (0, 0);
    };
    sys.refresh_processes_specifics(
        sysinfo::ProcessesToUpdate::Some(&[pid]),
        true,
        sysinfo::ProcessRefreshKind::nothing()
            .with_memory()
            .with_cpu(),
    );
    sys.process(pid)
        .map(|p| (p.memory(), p.accumulated_cpu_time()))
        .unwrap_or((0, 0))
}

fn hash_status(engine: &Engine) -> Result<pb::HashStatus, Error> {
    let stats = &engine.hashing.stats;
    let cached = engine.cached_hashes()?;
    let last = engine.hashing.last_pass.lock_ok().clone();
    Ok(pb::HashStatus {
        cached,
        files_read: stats.files_read.load(Ordering::Relaxed),
        bytes_read: stats.bytes_read.load(Ordering::Relaxed),
        cache_hits: stats.cache_hits.load(Ordering::Relaxed),
        last_pass_secs_ago: last
            .as_ref()
            .map_or(-1, |l| l.at.elapsed().as_secs() as i64),
        last_pass_candidates: last.as_ref().map_or(0, |l| l.candidates),
        last_pass_read: last.as_ref().map_or(0, |l| l.files_read),
        last_pass_unreadable: last.as_ref().map_or(0, |l| l.unreadable),
        last_pass_background: last.as_ref().is_some_and(|l| l.background),
        last_pass_scope: last.and_then(|l| l.scope).unwrap_or_default(),
    })
}

fn group(g: crate::queries::dupes::Group) -> pb::DuplicateGroup {
    pb::DuplicateGroup {
        size: g.size,
        hash: g.hash.to_vec(),
        reclaimable_bytes: g.reclaimable(),
        reclaimable_allocated_bytes: g.reclaimable_allocated(),
        copies: g
            .copies
            .into_iter()
            .map(|c| pb::DuplicateCopy {
                paths: c.paths,
                allocated_bytes: c.allocated,
            })
            .collect(),
    }
}

#[tonic::async_trait]
impl pb::index_server::Index for IndexService {
    async fn status(
        &self,
        req: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::StatusResponse>, Status> {
        let mut view = self.view(&req);
        let engine = self.engine.clone();
        let (system, listen) = (self.system, self.listen.clone());
        let config_path = self
            .reloader
            .as_ref()
            .map(|r| r.path().as_os_str().as_encoded_bytes().to_vec())
            .unwrap_or_default();
        let cpu_seen = self.cpu_seen.clone();
        let resp = blocking(move || {
            let (rss, cpu_ms) = process_figures();
            let cpu_percent = {
                let mut seen = cpu_seen.lock_ok();
                let (since, before) = if seen[1].0.elapsed() >= Duration::from_secs(1) {
                    let last = seen[1];
                    *seen = [last, (Instant::now(), cpu_ms)];
                    last
                } else {
                    seen[0]
                };
                let wall = since.elapsed().as_secs_f64() * 1000.0;
                if wall > 0.0 {
                    cpu_ms.saturating_sub(before) as f64 * 100.0 / wall
                } else {
                    0.0
                }
            };
            let mut roots = engine.root_views()?;
            if let Some(v) = view.as_mut() {
                roots.retain(|r| v.sees(&r.path));
            }
            let entries: u64 = roots.iter().map(|r| r.entries).sum();
            let ready = roots.iter().all(|r| r.state == RootState::Ready);
            let store = &engine.store;
            Ok(pb::StatusResponse {
                version: env!("CARGO_PKG_VERSION").into(),
                protocol: pb::Protocol::V1 as i32,
                state: if ready { "ready" } else { "scanning" }.into(),
                entries,
                roots: roots.into_iter().map(root_status).collect(),
                db_bytes: store.disk_bytes(),
                rss_bytes: rss,
                cpu_percent,
                cpu_time_ms: cpu_ms,
                system,
                listen,
                config_path,
                rows_written: store.rows_written.load(Ordering::Relaxed),
                notices: store.notices.lock_ok().clone(),
                pid: std::process::id(),
                db_path: store.db_path().as_os_str().as_encoded_bytes().to_vec(),
                uptime_secs: engine.started.elapsed().as_secs(),
                hashing: Some(hash_status(&engine)?),
                watch: Some(match &engine.watcher {
                    None => pb::WatchStatus::default(),
                    Some(w) => pb::WatchStatus {
                        enabled: true,
                        watches: w.watch_count(),
                        os_limit: crate::ingest::watch::os_watch_limit().unwrap_or(0),
                        polled: w.polled_under(std::path::Path::new("/")),
                        events: w.stats.events.load(Ordering::Relaxed),
                        overflows: w.stats.overflows.load(Ordering::Relaxed),
                        recrawls: w.stats.recrawls.load(Ordering::Relaxed),
                        last_event_ms: w.stats.last_event_ms.load(Ordering::Relaxed),
                        note: w.limit_note().unwrap_or_default(),
                    },
                }),
            })
        })
        .await?;
        Ok(Response::new(resp))
    }

    type SearchStream = ResponseStream<pb::SearchResponse>;

    async fn search(
        &self,
        req: Request<pb::SearchRequest>,
    ) -> Result<Response<Self::SearchStream>, Status> {
        let view = self.view(&req);
        let req = req.into_inner();
        let mut query = Query::parse(&req.query)?;
        if query.groups.iter().flatten().any(|i| {
            matches!(
                i,
                crate::queries::query::Item::In(_) | crate::queries::query::Item::Not(_)
            )
        }) {
            let engine = self.engine.clone();
            query = blocking(move || {
                query.resolve_in(|p| {
                    engine
                        .store
                        .read(|c| crate::store::resolve(c, p))
                        .map(|(_, id)| id)
                })?;
                Ok(query)
            })
            .await?;
        }
        let reverse = req.reverse;
        let sort = match pb::SortOrder::try_from(req.sort).unwrap_or_default() {
            pb::SortOrder::Unspecified | pb::SortOrder::Relevance => Sort::Relevance,
            pb::SortOrder::Name => Sort::Name,
            pb::SortOrder::Path => Sort::Path,
            pb::SortOrder::Size => Sort::Size,
            pb::SortOrder::Mtime => Sort::Mtime,
        };
        let limit = usize::try_from(req.limit).unwrap_or(usize::MAX);
        let offset = usize::try_from(req.offset).unwrap_or(usize::MAX);
        if req.sync {
            let engine = self.engine.clone();
            blocking(move || engine.sync(Duration::from_secs(10))).await?;
        }
        let snapshot = self.engine.snapshot();
        let rules = self.engine.rules();
        let (total, found, elapsed) = blocking(move || {
            let t = Instant::now();
            let snap = snapshot.read_ok();
            let out = match view {
                None => snap.search_page(&query, sort, offset, limit, reverse, &mut |_| true),
                Some(mut view) => {
                    // Visibility is a property of the parent folder: learn
                    // it once per folder.
                    let mut folders: std::collections::HashMap<u32, bool> = Default::default();
                    snap.search_page(&query, sort, offset, limit, reverse, &mut |i| match snap
                        .entry_parent(i)
                    {
                        Some(p) => *folders
                            .entry(p)
                            .or_insert_with(|| view.reaches(&snap.path(p))),
                        None => view.sees(&snap.path(i)),
                    })
                }
            };
            let us = t.elapsed().as_micros() as u64;
            tracing::debug!(us, total = out.0, "search");
            Ok((out.0, out.1, us))
        })
        .await?;
        let total = total as u64;
        // Flags are worked out for what is returned, never stored.
        let mut chunks: Vec<pb::SearchResponse> = found
            .chunks(1024)
            .map(|c| pb::SearchResponse {
                total,
                elapsed_us: elapsed,
                entries: c
                    .iter()
                    .map(|f| pb::Entry {
                        sensitive: rules.is_sensitive(
                            Path::new(crate::platform::bytes::os(&f.path)),
                            f.kind == Kind::Dir,
                        ),
                        path: f.path.clone(),
                        name: f.name.clone(),
                        r#type: entry_type(f.kind),
                        size: f.size,
                        mtime_ns: f.mtime_ns,
                    })
                    .collect(),
            })
            .collect();
        if chunks.is_empty() {
            chunks.push(pb::SearchResponse {
                total,
                entries: Vec::new(),
                elapsed_us: elapsed,
            });
        }
        Ok(Response::new(Box::pin(tokio_stream::iter(
            chunks.into_iter().map(Ok),
        ))))
    }

    async fn disk_usage(
        &self,
        req: Request<pb::DiskUsageRequest>,
    ) -> Result<Response<pb::DiskUsageResponse>, Status> {
        let mut view = self.view(&req);
        let req = req.into_inner();
        let path = seen_path(&mut view, &req.path)?;
        let engine = self.engine.clone();
        let report = blocking(move || {
            if req.sync {
                engine.sync(Duration::from_secs(10))?;
            }
            engine.store.read(|c| {
                let (_, id) = crate::store::resolve(c, &path)?;
                // For a filtered caller every row is ranked after the
                // closed folders are taken out.
                let top = if view.is_some() { 0 } else { req.top as usize };
                let mut report = if req.all || req.depth > 1 || req.files_only || req.dirs_only {
                    let opts = du::Listing {
                        depth: (!req.all).then_some(req.depth.max(1)),
                        files_only: req.files_only,
                        dirs_only: req.dirs_only,
                        apparent: req.apparent,
                        top,
                    };
                    du::listing(c, id, req.path.clone(), opts)?
                } else {
                    du::disk_usage(c, id, req.path.clone(), top, req.apparent)?
                };
                if let Some(v) = &view {
                    let closed = crate::queries::access::closed_under(c, id, &req.path, v)?;
                    crate::queries::access::hide_report(
                        &mut report,
                        &closed,
                        req.top as usize,
                        req.apparent,
                    );
                }
                Ok(report)
            })
        })
        .await?;
        Ok(Response::new(pb::DiskUsageResponse {
            total: Some(usage(report.total)),
            children: report.children.into_iter().map(usage).collect(),
            children_total: report.children_total as u64,
        }))
    }

    type RescanStream = ResponseStream<pb::ScanProgress>;

    async fn rescan(
        &self,
        req: Request<pb::RescanRequest>,
    ) -> Result<Response<Self::RescanStream>, Status> {
        let mut view = self.view(&req);
        let req = req.into_inner();
        let path = seen_optional(&mut view, &req.path)?;
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let progress = self
            .engine
            .rescan(path.as_deref(), req.wait.then_some(done_tx))?;
        let shown = req.path.clone();
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let started = Instant::now();
        tokio::spawn(async move {
            let snapshot = |done: bool| {
                let p = |f: fn(&crate::ingest::scan::Progress) -> u64| {
                    progress.iter().map(|x| f(x)).sum::<u64>()
                };
                pb::ScanProgress {
                    scanned: p(|x| x.scanned.load(Ordering::Relaxed)),
                    written: p(|x| x.changes.load(Ordering::Relaxed)),
                    errors: p(|x| x.errors.load(Ordering::Relaxed)),
                    done,
                    path: shown.clone(),
                    elapsed_ms: started.elapsed().as_millis() as u64,
                }
            };
            if !req.wait {
                let _ = tx.send(Ok(snapshot(false))).await;
                return;
            }
            let mut remaining = progress.len();
            let mut failure = None;
            while remaining > 0 {
                while let Ok(r) = done_rx.try_recv() {
                    remaining -= 1;
                    if let Err(e) = r {
                        failure = Some(e);
                    }
                }
                if remaining == 0 {
                    break;
                }
                if tx.send(Ok(snapshot(false))).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let last = match failure {
                Some(e) => Err(Status::internal(e)),
                None => Ok(snapshot(true)),
            };
            let _ = tx.send(last).await;
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    async fn roots(
        &self,
        req: Request<pb::RootsRequest>,
    ) -> Result<Response<pb::RootsResponse>, Status> {
        let mut view = self.view(&req);
        if !matches!(
            pb::RootsAction::try_from(req.get_ref().action).unwrap_or_default(),
            pb::RootsAction::Unspecified | pb::RootsAction::List
        ) {
            self.owner_only(&req, "changing the roots")?;
        }
        let req = req.into_inner();
        let engine = self.engine.clone();
        let mut views = blocking(move || {
            match pb::RootsAction::try_from(req.action).unwrap_or_default() {
                pb::RootsAction::Unspecified | pb::RootsAction::List => {}
                pb::RootsAction::Add => {
                    engine.add_root(&crate::platform::bytes::path_buf(&req.path))?
                }
                pb::RootsAction::Remove => {
                    engine.remove_root(&crate::platform::bytes::path_buf(&req.path))?
                }
            }
            engine.root_views()
        })
        .await?;
        if let Some(v) = view.as_mut() {
            views.retain(|r| v.sees(&r.path));
        }
        Ok(Response::new(pb::RootsResponse {
            roots: views.into_iter().map(root_status).collect(),
        }))
    }

    type VerifyStream = ResponseStream<pb::VerifyResponse>;

    async fn verify(
        &self,
        req: Request<pb::VerifyRequest>,
    ) -> Result<Response<Self::VerifyStream>, Status> {
        let mut view = self.view(&req);
        let req = req.into_inner();
        let path = seen_optional(&mut view, &req.path)?;
        let engine = self.engine.clone();
        let found = blocking(move || engine.verify(path.as_deref(), req.fix)).await?;
        let diffs: Vec<pb::Difference> = found
            .differences
            .into_iter()
            .filter(|d| {
                view.as_mut()
                    .is_none_or(|v| v.sees(d.path.as_os_str().as_encoded_bytes()))
            })
            .map(|d| pb::Difference {
                kind: (match d.kind {
                    crate::ingest::scan::DiffKind::Missing => pb::DifferenceKind::Missing,
                    crate::ingest::scan::DiffKind::Extra => pb::DifferenceKind::Extra,
                    crate::ingest::scan::DiffKind::Stale => pb::DifferenceKind::Stale,
                }) as i32,
                path: d.path.into_os_string().into_encoded_bytes(),
                detail: d.detail,
            })
            .collect();
        let mut chunks: Vec<pb::VerifyResponse> = diffs
            .chunks(1024)
            .map(|c| pb::VerifyResponse {
                differences: c.to_vec(),
                ..Default::default()
            })
            .collect();
        chunks.push(pb::VerifyResponse {
            done: true,
            checked: found.checked,
            fixed: found.fixed,
            ..Default::default()
        });
        Ok(Response::new(Box::pin(tokio_stream::iter(
            chunks.into_iter().map(Ok),
        ))))
    }

    type DuplicatesStream = ResponseStream<pb::DuplicatesResponse>;

    async fn duplicates(
        &self,
        req: Request<pb::DuplicatesRequest>,
    ) -> Result<Response<Self::DuplicatesStream>, Status> {
        let mut view = self.view(&req);
        let req = req.into_inner();
        let path = seen_optional(&mut view, &req.path)?;
        let engine = self.engine.clone();
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<pb::DuplicatesResponse, Status>>(64);
        let item = |i: pb::duplicates_response::Item| pb::DuplicatesResponse { item: Some(i) };
        tokio::task::spawn_blocking(move || {
            let mut last = Instant::now() - Duration::from_secs(1);
            // Progress at most ten times a second; a client that went away
            // cancels the search.
            let mut progress = |p: crate::queries::dupes::Progress| {
                if tx.is_closed() {
                    return false;
                }
                if last.elapsed() >= Duration::from_millis(100) {
                    last = Instant::now();
                    let _ = tx.try_send(Ok(item(pb::duplicates_response::Item::Progress(
                        pb::DuplicatesProgress {
                            stage: p.stage.as_str().into(),
                            files_done: p.files_done,
                            files_total: p.files_total,
                            bytes_done: p.bytes_done,
                            bytes_total: p.bytes_total,
                        },
                    ))));
                }
                true
            };
            let mut report = match engine.duplicates(
                path.as_deref(),
                req.min_size,
                req.include_empty,
                &mut progress,
            ) {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.blocking_send(Err(e.into()));
                    return;
                }
            };
            if let Some(v) = view.as_mut() {
                hide_groups(&mut report, v);
            }
            let summary = pb::DuplicatesSummary {
                groups: report.groups.len() as u64,
                reclaimable_bytes: report.groups.iter().map(|g| g.reclaimable()).sum(),
                reclaimable_allocated_bytes: report
                    .groups
                    .iter()
                    .map(|g| g.reclaimable_allocated())
                    .sum(),
                candidates: report.candidates,
                files_read: report.files_read,
                bytes_read: report.bytes_read,
                cache_hits: report.cache_hits,
                unreadable: report.unreadable,
                unreadable_paths: report.unreadable_paths,
                changed: report.changed,
                skipped_roots: report.skipped_roots,
            };
            for g in report.groups {
                if tx
                    .blocking_send(Ok(item(pb::duplicates_response::Item::Group(group(g)))))
                    .is_err()
                {
                    return;
                }
            }
            let _ = tx.blocking_send(Ok(item(pb::duplicates_response::Item::Summary(summary))));
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    type SubscribeStream = ResponseStream<pb::ChangeEvent>;

    async fn subscribe(
        &self,
        req: Request<pb::SubscribeRequest>,
    ) -> Result<Response<Self::SubscribeStream>, Status> {
        let caller = self.view(&req).map(|v| v.caller);
        let req = req.into_inner();
        let prefix = if req.path.is_empty() {
            None
        } else {
            Some(absolute(&req.path)?)
        };
        // Permissions change: what is learnt of folders is kept a second.
        let mut view = caller.map(|c| (View::new(c), Instant::now()));
        let mut rx = self.engine.subscribe();
        let (tx, out) = tokio::sync::mpsc::channel(256);
        tokio::spawn(async move {
            let hello = pb::ChangeEvent {
                kind: pb::ChangeKind::Subscribed as i32,
                ..Default::default()
            };
            if tx.send(Ok(hello)).await.is_err() {
                return;
            }
            loop {
                let msg = match rx.recv().await {
                    Ok(e) => {
                        let under = |p: &[u8]| {
                            prefix.as_ref().is_none_or(|pre| {
                                crate::platform::bytes::path_buf(p).starts_with(pre)
                            })
                        };
                        if !under(&e.path) && !under(&e.from) {
                            continue;
                        }
                        if let Some((v, since)) = view.as_mut() {
                            if since.elapsed() > Duration::from_secs(1) {
                                *v = View::new(v.caller.clone());
                                *since = Instant::now();
                            }
                            if !v.sees(&e.path) || (!e.from.is_empty() && !v.sees(&e.from)) {
                                continue;
                            }
                        }
                        pb::ChangeEvent {
                            kind: (match e.kind {
                                ChangeKind::Created => pb::ChangeKind::Created,
                                ChangeKind::Modified => pb::ChangeKind::Modified,
                                ChangeKind::Deleted => pb::ChangeKind::Deleted,
                                ChangeKind::Renamed => pb::ChangeKind::Renamed,
                            }) as i32,
                            path: e.path,
                            from_path: e.from,
                            r#type: entry_type(e.entry),
                            missed: 0,
                        }
                    }
                    // Fell behind: say so rather than pretend nothing happened.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => pb::ChangeEvent {
                        kind: pb::ChangeKind::Missed as i32,
                        missed: n,
                        ..Default::default()
                    },
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                if tx.send(Ok(msg)).await.is_err() {
                    return; // the client went away
                }
            }
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(out),
        )))
    }

    async fn stat(
        &self,
        req: Request<pb::StatRequest>,
    ) -> Result<Response<pb::StatResponse>, Status> {
        let mut view = self.view(&req);
        let raw = req.into_inner().path;
        let path = seen_path(&mut view, &raw)?;
        let engine = self.engine.clone();
        let p = path.clone();
        let info = blocking(move || {
            let mut info = engine.stat(&p)?;
            if let Some(v) = &view {
                // What only the content tells is for those who may read it.
                if !v.caller.may(&p, crate::queries::access::R) {
                    info.encoding.clear();
                    info.lines = -1;
                }
                let id = info.row.as_ref().map(|r| r.id);
                if let (Some(u), Some(id)) = (info.usage.as_mut(), id) {
                    let closed = engine
                        .store
                        .read(|c| crate::queries::access::closed_under(c, id, &raw, v))?;
                    crate::queries::access::hide_in(u, &closed);
                }
            }
            Ok(info)
        })
        .await?;
        let row = info
            .row
            .ok_or_else(|| Status::not_found("entry vanished"))?;
        Ok(Response::new(pb::StatResponse {
            path: path.into_os_string().into_encoded_bytes(),
            r#type: entry_type(row.kind),
            size: row.size,
            allocated: row.blocks * 512,
            mtime_ns: row.mtime_ns,
            atime_ns: info.atime_ns,
            ctime_ns: info.ctime_ns,
            mode: row.mode,
            uid: info.uid,
            gid: info.gid,
            nlink: row.nlink,
            inode: row.ino,
            kind: info.kind,
            mime: info.mime,
            encoding: info.encoding,
            lines: info.lines,
            usage: info.usage.map(usage),
            target: info.target,
            sensitive: info.sensitive,
            skip_tier: info.skip_tier,
        }))
    }

    async fn list(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListResponse>, Status> {
        let mut view = self.view(&req);
        let req = req.into_inner();
        let path = seen_path(&mut view, &req.path)?;
        let engine = self.engine.clone();
        let p = path.clone();
        let mut rows =
            blocking(move || engine.store.read(|c| crate::queries::browse::list(c, &p))).await?;
        // A folder the caller cannot open is refused, as `ls` refuses it.
        if let Some(v) = &view
            && crate::platform::fs::is_dir(&path)
            && !v.opens(&path)
        {
            return Err(Status::permission_denied(format!(
                "{}: you may not list this folder",
                path.display()
            )));
        }
        let cmp: fn(&crate::store::EntryRow, &crate::store::EntryRow) -> std::cmp::Ordering =
            match pb::SortOrder::try_from(req.sort).unwrap_or_default() {
                pb::SortOrder::Size => |a, b| b.size.cmp(&a.size).then_with(|| a.name.cmp(&b.name)),
                pb::SortOrder::Mtime => |a, b| {
                    b.mtime_ns
                        .cmp(&a.mtime_ns)
                        .then_with(|| a.name.cmp(&b.name))
                },
                _ => |a, b| {
                    let (x, y) = (
                        crate::queries::fold::fold_bytes(&a.name),
                        crate::queries::fold::fold_bytes(&b.name),
                    );
                    x.cmp(&y).then_with(|| a.name.cmp(&b.name))
                },
            };
        rows.sort_by(cmp);
        if req.reverse {
            rows.reverse();
        }
        let rules = self.engine.rules();
        let folder = rules.folder(&path);
        let base = path.as_os_str().as_encoded_bytes();
        let entries = rows
            .into_iter()
            .map(|r| {
                let mut p = base.to_vec();
                if p.last() != Some(&b'/') {
                    p.push(b'/');
                }
                p.extend_from_slice(&r.name);
                pb::Entry {
                    sensitive: folder
                        .verdict(crate::platform::bytes::os(&r.name), r.kind == Kind::Dir)
                        == crate::ingest::exclude::Verdict::Warn,
                    path: p,
                    name: r.name,
                    r#type: entry_type(r.kind),
                    size: r.size,
                    mtime_ns: r.mtime_ns,
                }
            })
            .collect();
        Ok(Response::new(pb::ListResponse { entries }))
    }

    async fn tree(
        &self,
        req: Request<pb::TreeRequest>,
    ) -> Result<Response<pb::TreeResponse>, Status> {
        let mut view = self.view(&req);
        let req = req.into_inner();
        let path = seen_path(&mut view, &req.path)?;
        let engine = self.engine.clone();
        let max = if req.max_children == 0 {
            20
        } else {
            req.max_children as usize
        };
        let root = blocking(move || {
            engine.store.read(|c| {
                let mut root = crate::queries::browse::tree(c, &path, req.depth, max)?;
                if let Some(v) = &view {
                    let (_, id) = crate::store::resolve(c, &path)?;
                    let closed = crate::queries::access::closed_under(c, id, &req.path, v)?;
                    hide_tree(&mut root, req.path.clone(), &closed);
                }
                Ok(root)
            })
        })
        .await?;
        fn convert(n: crate::queries::browse::Node) -> pb::TreeNode {
            pb::TreeNode {
                name: n.name,
                r#type: n.usage.kind.map(entry_type).unwrap_or_default(),
                bytes: n.usage.bytes,
                apparent_bytes: n.usage.apparent,
                files: n.usage.files,
                dirs: n.usage.dirs,
                children: n.children.into_iter().map(convert).collect(),
                hidden_children: n.hidden,
                excluded: n.usage.excluded,
                measured_at: n.usage.measured_at,
            }
        }
        Ok(Response::new(pb::TreeResponse {
            root: Some(convert(root)),
        }))
    }

    async fn reload(
        &self,
        req: Request<pb::ReloadRequest>,
    ) -> Result<Response<pb::ReloadResponse>, Status> {
        self.owner_only(&req, "reloading the config")?;
        let Some(reloader) = self.reloader.clone() else {
            return Err(Status::failed_precondition(
                "this daemon was started without a config to reload",
            ));
        };
        let path = reloader.path().as_os_str().as_encoded_bytes().to_vec();
        let changes = blocking(move || reloader.reload()).await?;
        Ok(Response::new(pb::ReloadResponse {
            config_path: path,
            changes,
        }))
    }

    async fn fs_map(
        &self,
        req: Request<pb::FsMapRequest>,
    ) -> Result<Response<pb::FsMapResponse>, Status> {
        let mut view = self.view(&req);
        let req = req.into_inner();
        let path = seen_path(&mut view, &req.path)?;
        let engine = self.engine.clone();
        let now_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0);
        let map = blocking(move || {
            let snapshot = engine.snapshot();
            let snapshot = snapshot.read_ok();
            engine.store.read(|c| {
                let closed = match &view {
                    None => Default::default(),
                    Some(v) => {
                        let (_, id) = crate::store::resolve(c, &path)?;
                        crate::queries::access::closed_under(c, id, &req.path, v)?
                            .into_iter()
                            .map(|c| c.id)
                            .collect()
                    }
                };
                crate::queries::fsmap::fs_map(c, &snapshot, &path, req.budget, now_ns, &closed)
            })
        })
        .await?;
        fn convert(n: crate::queries::fsmap::Node) -> pb::FsMapNode {
            use crate::queries::fsmap::NodeType;
            let (year_min, year_max) = n.years.unwrap_or((0, 0));
            pb::FsMapNode {
                r#type: (match n.kind {
                    NodeType::Folder => pb::FsMapNodeType::Folder,
                    NodeType::File => pb::FsMapNodeType::File,
                    NodeType::Group => pb::FsMapNodeType::Group,
                    NodeType::FolderGroup => pb::FsMapNodeType::FolderGroup,
                }) as i32,
                name: n.name,
                bytes: n.bytes,
                files: n.files,
                dirs: n.dirs,
                kinds: n
                    .kinds
                    .into_iter()
                    .map(|k| pb::FsMapKind {
                        kind: k.kind.into(),
                        files: k.files,
                        percent: k.percent,
                        extensions: k.extensions,
                    })
                    .collect(),
                recent: n.recent,
                like: n.like,
                year_min,
                year_max,
                children: n.children.into_iter().map(convert).collect(),
                more_dirs: n.more.dirs,
                more_files: n.more.files,
                more_bytes: n.more.bytes,
                count: n.count,
                excluded: n.excluded.is_some(),
                measured_at: n.excluded.unwrap_or(0),
            }
        }
        let tokens = map.text.len().div_ceil(4) as u32;
        Ok(Response::new(pb::FsMapResponse {
            text: map.text,
            root: Some(convert(map.root)),
            tokens,
            budget: req.budget,
        }))
    }
}

/// Duplicates as the caller sees them: only copies it can see and read
/// (equal content is something only a reader may learn); a group left with
/// fewer than two copies is no group.
fn hide_groups(report: &mut crate::queries::dupes::Report, view: &mut View) {
    for g in &mut report.groups {
        for c in &mut g.copies {
            c.paths.retain(|p| {
                view.sees(p)
                    && view.caller.may(
                        &crate::platform::bytes::path_buf(p),
                        crate::queries::access::R,
                    )
            });
        }
        g.copies.retain(|c| !c.paths.is_empty());
    }
    report.groups.retain(|g| g.copies.len() >= 2);
    report.unreadable_paths.retain(|p| view.sees(p));
}

/// A tree as the caller sees it: nothing inside closed folders, and no
/// figures of what they hold.
fn hide_tree(
    node: &mut crate::queries::browse::Node,
    path: Vec<u8>,
    closed: &[crate::queries::access::Closed],
) {
    node.usage.path = path.clone();
    crate::queries::access::hide_in(&mut node.usage, closed);
    if closed.iter().any(|c| c.path == path) {
        node.children.clear();
        node.hidden = 0;
        return;
    }
    for child in &mut node.children {
        let mut p = path.clone();
        if p.last() != Some(&b'/') {
            p.push(b'/');
        }
        p.extend_from_slice(&child.name);
        hide_tree(child, p, closed);
    }
}

/// Serves the index service, health and reflection on the unix socket
/// until `shutdown` completes.
pub async fn serve(
    service: IndexService,
    listener: tokio::net::UnixListener,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
    serve_incoming(service, incoming, None, shutdown).await
}

/// Serves the same services on TCP: every request, health and reflection
/// included, must carry `authorization: Bearer TOKEN`, or it is refused
/// with UNAUTHENTICATED.
pub async fn serve_tcp(
    service: IndexService,
    listener: tokio::net::TcpListener,
    token: String,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    serve_incoming(service, incoming, Some(token), shutdown).await
}

async fn serve_incoming<I, IO, IE>(
    service: IndexService,
    incoming: I,
    token: Option<String>,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> anyhow::Result<()>
where
    I: Stream<Item = Result<IO, IE>>,
    IO: tokio::io::AsyncRead
        + tokio::io::AsyncWrite
        + tonic::transport::server::Connected
        + Unpin
        + Send
        + 'static,
    IO::ConnectInfo: Clone + Send + Sync + 'static,
    IE: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (health_reporter, health) = tonic_health::server::health_reporter();
    health_reporter
        .set_serving::<pb::index_server::IndexServer<IndexService>>()
        .await;
    // Reflection in both versions (grpcurl and grpc-java ask v1; the
    // official Python package, Postman and evans ask only v1alpha), listing
    // the index and health services.
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection_v1 = reflection().build_v1()?;
    let reflection_v1alpha = reflection().build_v1alpha()?;
    let expected = token.map(|t| Arc::new(format!("Bearer {t}").into_bytes()));
    let check = move |req: Request<()>| -> Result<Request<()>, Status> {
        let Some(expected) = &expected else {
            return Ok(req);
        };
        let given = req
            .metadata()
            .get("authorization")
            .map(|v| v.as_bytes())
            .unwrap_or_default();
        if same_secret(given, expected) {
            Ok(req)
        } else if given.is_empty() {
            Err(Status::unauthenticated(
                "this daemon needs its token: fsctl --endpoint URL --token-file PATH (or FSINDEX_TOKEN)",
            ))
        } else {
            Err(Status::unauthenticated("wrong token"))
        }
    };
    tonic::transport::Server::builder()
        .layer(tonic::service::InterceptorLayer::new(check))
        .add_service(health)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(pb::index_server::IndexServer::new(service))
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await?;
    Ok(())
}

/// Compares a presented secret with the expected one in time that does not
/// depend on where they differ.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    if given.len() != expected.len() {
        return false;
    }
    given
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}
