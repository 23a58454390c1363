//! The tonic service: translates protobuf to engine calls and back, and
//! nothing more. Blocking work (SQLite, the in-memory search) runs on the
//! blocking pool.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use fsindex_proto::v1 as pb;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::Error;
use crate::daemon::{Engine, RootState, RootView};
use crate::du;
use crate::query::Query;
use crate::search::{ChangeKind, Sort};
use crate::store::Kind;

/// The gRPC service over one engine.
#[derive(Clone, Debug)]
pub struct IndexService {
    engine: Arc<Engine>,
}

impl IndexService {
    pub fn new(engine: Arc<Engine>) -> Self {
        IndexService { engine }
    }
}

type ResponseStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

#[cfg(unix)]
fn to_path(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

#[cfg(unix)]
fn os_str(b: &[u8]) -> &std::ffi::OsStr {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(b)
}

fn absolute(b: &[u8]) -> Result<PathBuf, Status> {
    let p = to_path(b);
    if !p.is_absolute() {
        return Err(Status::invalid_argument(format!(
            "{}: give an absolute path",
            p.display()
        )));
    }
    Ok(p)
}

/// An optional path argument: empty means "every root".
fn optional_absolute(b: &[u8]) -> Result<Option<PathBuf>, Status> {
    if b.is_empty() {
        Ok(None)
    } else {
        absolute(b).map(Some)
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

fn rss_bytes() -> u64 {
    let pid = sysinfo::Pid::from_u32(std::process::id());
    let Ok(mut sys) = sysinfo::System::new() else {
        return 0;
    };
    sys.refresh_processes_specifics(
        sysinfo::ProcessesToUpdate::Some(&[pid]),
        true,
        sysinfo::ProcessRefreshKind::nothing().with_memory(),
    );
    sys.process(pid).map(|p| p.memory()).unwrap_or(0)
}

fn hash_status(engine: &Engine) -> Result<pb::HashStatus, Error> {
    let stats = &engine.hashing.stats;
    let cached = engine.cached_hashes()?;
    let last = engine
        .hashing
        .last_pass
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
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

fn group(g: crate::dupes::Group) -> pb::DuplicateGroup {
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
        _req: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::StatusResponse>, Status> {
        let engine = self.engine.clone();
        let resp = blocking(move || {
            let roots = engine.root_views()?;
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
                rss_bytes: rss_bytes(),
                rows_written: store.rows_written.load(Ordering::Relaxed),
                notices: store
                    .notices
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone(),
                pid: std::process::id(),
                db_path: store.db_path().as_os_str().as_encoded_bytes().to_vec(),
                uptime_secs: engine.started.elapsed().as_secs(),
                hashing: Some(hash_status(&engine)?),
                watch: Some(match &engine.watcher {
                    None => pb::WatchStatus::default(),
                    Some(w) => pb::WatchStatus {
                        enabled: true,
                        watches: w.watch_count(),
                        os_limit: crate::watch::os_watch_limit().unwrap_or(0),
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
        let req = req.into_inner();
        let mut query = Query::parse(&req.query)?;
        if query
            .groups
            .iter()
            .flatten()
            .any(|i| matches!(i, crate::query::Item::In(_) | crate::query::Item::Not(_)))
        {
            let engine = self.engine.clone();
            query = blocking(move || {
                query.resolve_in(|p| engine.store.read(|c| du::resolve(c, p)).map(|(_, id)| id))?;
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
        if req.sync {
            let engine = self.engine.clone();
            blocking(move || engine.sync(Duration::from_secs(10))).await?;
        }
        let snapshot = self.engine.snapshot();
        let rules = self.engine.rules();
        let (total, found) = blocking(move || {
            let t = Instant::now();
            let out = snapshot
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .search(&query, sort, limit, reverse);
            tracing::debug!(us = t.elapsed().as_micros() as u64, total = out.0, "search");
            Ok(out)
        })
        .await?;
        let total = total as u64;
        // Flags are worked out for what is returned, never stored.
        let mut chunks: Vec<pb::SearchResponse> = found
            .chunks(1024)
            .map(|c| pb::SearchResponse {
                total,
                entries: c
                    .iter()
                    .map(|f| pb::Entry {
                        sensitive: rules
                            .is_sensitive(Path::new(os_str(&f.path)), f.kind == Kind::Dir),
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
        let req = req.into_inner();
        let path = absolute(&req.path)?;
        let engine = self.engine.clone();
        let report = blocking(move || {
            if req.sync {
                engine.sync(Duration::from_secs(10))?;
            }
            engine.store.read(|c| {
                let (_, id) = du::resolve(c, &path)?;
                if req.all || req.depth > 1 || req.files_only || req.dirs_only {
                    let opts = du::Listing {
                        depth: (!req.all).then_some(req.depth.max(1)),
                        files_only: req.files_only,
                        dirs_only: req.dirs_only,
                        apparent: req.apparent,
                        top: req.top as usize,
                    };
                    du::listing(c, id, req.path.clone(), opts)
                } else {
                    du::disk_usage(c, id, req.path.clone(), req.top as usize, req.apparent)
                }
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
        let req = req.into_inner();
        let path = optional_absolute(&req.path)?;
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let progress = self
            .engine
            .rescan(path.as_deref(), req.wait.then_some(done_tx))?;
        let shown = req.path.clone();
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let started = Instant::now();
        tokio::spawn(async move {
            let snapshot = |done: bool| {
                let p = |f: fn(&crate::scan::Progress) -> u64| {
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
        let req = req.into_inner();
        let engine = self.engine.clone();
        let views = blocking(move || {
            match pb::RootsAction::try_from(req.action).unwrap_or_default() {
                pb::RootsAction::Unspecified | pb::RootsAction::List => {}
                pb::RootsAction::Add => engine.add_root(&to_path(&req.path))?,
                pb::RootsAction::Remove => engine.remove_root(&to_path(&req.path))?,
            }
            engine.root_views()
        })
        .await?;
        Ok(Response::new(pb::RootsResponse {
            roots: views.into_iter().map(root_status).collect(),
        }))
    }

    type VerifyStream = ResponseStream<pb::VerifyResponse>;

    async fn verify(
        &self,
        req: Request<pb::VerifyRequest>,
    ) -> Result<Response<Self::VerifyStream>, Status> {
        let req = req.into_inner();
        let path = optional_absolute(&req.path)?;
        let engine = self.engine.clone();
        let found = blocking(move || engine.verify(path.as_deref(), req.fix)).await?;
        let diffs: Vec<pb::Difference> = found
            .differences
            .into_iter()
            .map(|d| pb::Difference {
                kind: (match d.kind {
                    crate::scan::DiffKind::Missing => pb::DifferenceKind::Missing,
                    crate::scan::DiffKind::Extra => pb::DifferenceKind::Extra,
                    crate::scan::DiffKind::Stale => pb::DifferenceKind::Stale,
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
        let req = req.into_inner();
        let path = optional_absolute(&req.path)?;
        let engine = self.engine.clone();
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<pb::DuplicatesResponse, Status>>(64);
        let item = |i: pb::duplicates_response::Item| pb::DuplicatesResponse { item: Some(i) };
        tokio::task::spawn_blocking(move || {
            let mut last = Instant::now() - Duration::from_secs(1);
            // Progress at most ten times a second; a client that went away
            // cancels the search.
            let mut progress = |p: crate::dupes::Progress| {
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
            let report = match engine.duplicates(
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
        let req = req.into_inner();
        let prefix = if req.path.is_empty() {
            None
        } else {
            Some(absolute(&req.path)?)
        };
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
                            prefix
                                .as_ref()
                                .is_none_or(|pre| to_path(p).starts_with(pre))
                        };
                        if !under(&e.path) && !under(&e.from) {
                            continue;
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
        let path = absolute(&req.into_inner().path)?;
        let engine = self.engine.clone();
        let p = path.clone();
        let info = blocking(move || engine.stat(&p)).await?;
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
        let req = req.into_inner();
        let path = absolute(&req.path)?;
        let engine = self.engine.clone();
        let p = path.clone();
        let mut rows = blocking(move || engine.store.read(|c| crate::browse::list(c, &p))).await?;
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
                        crate::fold::fold_bytes(&a.name),
                        crate::fold::fold_bytes(&b.name),
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
                    sensitive: folder.verdict(os_str(&r.name), r.kind == Kind::Dir)
                        == crate::exclude::Verdict::Warn,
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
        let req = req.into_inner();
        let path = absolute(&req.path)?;
        let engine = self.engine.clone();
        let max = if req.max_children == 0 {
            20
        } else {
            req.max_children as usize
        };
        let root = blocking(move || {
            engine
                .store
                .read(|c| crate::browse::tree(c, &path, req.depth, max))
        })
        .await?;
        fn convert(n: crate::browse::Node) -> pb::TreeNode {
            pb::TreeNode {
                name: n.name,
                r#type: n.usage.kind.map(entry_type).unwrap_or_default(),
                bytes: n.usage.bytes,
                apparent_bytes: n.usage.apparent,
                files: n.usage.files,
                dirs: n.usage.dirs,
                children: n.children.into_iter().map(convert).collect(),
                hidden_children: n.hidden,
            }
        }
        Ok(Response::new(pb::TreeResponse {
            root: Some(convert(root)),
        }))
    }

    async fn fs_map(
        &self,
        req: Request<pb::FsMapRequest>,
    ) -> Result<Response<pb::FsMapResponse>, Status> {
        let req = req.into_inner();
        let path = absolute(&req.path)?;
        let engine = self.engine.clone();
        let now_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0);
        let map = blocking(move || {
            let snapshot = engine.snapshot();
            let snapshot = snapshot.read().unwrap_or_else(|e| e.into_inner());
            engine
                .store
                .read(|c| crate::fsmap::fs_map(c, &snapshot, &path, req.budget, now_ns))
        })
        .await?;
        fn convert(n: crate::fsmap::Node) -> pb::FsMapNode {
            use crate::fsmap::NodeType;
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

/// Serves the index service, health and reflection on `listener` until
/// `shutdown` completes.
pub async fn serve(
    service: IndexService,
    listener: tokio::net::UnixListener,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    let (health_reporter, health) = tonic_health::server::health_reporter();
    health_reporter
        .set_serving::<pb::index_server::IndexServer<IndexService>>()
        .await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    tonic::transport::Server::builder()
        .add_service(health)
        .add_service(reflection)
        .add_service(pb::index_server::IndexServer::new(service))
        .serve_with_incoming_shutdown(
            tokio_stream::wrappers::UnixListenerStream::new(listener),
            shutdown,
        )
        .await?;
    Ok(())
}
