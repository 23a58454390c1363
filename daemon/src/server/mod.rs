//! The gRPC service: converts requests to engine calls and answers back
//! ([`convert`]), and serves them on the unix socket or on TCP with a
//! token ([`serve`], [`serve_tcp`]). Who the caller is comes from the
//! socket (machine-wide mode); what that caller may see is the engine's
//! business. Blocking work runs on the blocking pool.

mod convert;
mod labels;
pub mod outbox;
mod searches;

use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fsindex_proto::v1 as pb;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::Error;
use crate::engine::reload::Reloader;
use crate::engine::{ChunkSink, Engine, Heard, Listed, SearchHead, Taken};
use crate::engine::{View, caller_from_peer};
use crate::queries::cancel::Cancel;
use outbox::Outbox;

/// The gRPC service over one engine.
#[derive(Clone, Debug)]
pub struct IndexService {
    engine: Arc<Engine>,
    /// Machine-wide mode: answers are filtered to what each caller sees.
    system: bool,
    reloader: Option<Arc<Reloader>>,
    /// The TCP address listened on, for status.
    listen: String,
    /// Turns true when the daemon is stopping: every open stream then ends
    /// at once with UNAVAILABLE "the daemon stopped", so that shutdown
    /// never waits on a client that keeps one open (`fsctl watch`, fsgui).
    stopping: tokio::sync::watch::Receiver<bool>,
    /// How long a stream waits for a client that takes nothing before it
    /// is cut off (see [`outbox`]).
    patience: Duration,
    /// Unary queries running at once (see [`IndexService::blocking`]).
    running: Arc<tokio::sync::Semaphore>,
}

/// At most this many unary queries run at once, per core (at least 4, at
/// most 64 in all); the rest wait their turn. Without a bound, 500 clients
/// asking `du --all --top 0` at once had 500 threads each build a
/// whole-tree answer, and the memory of the peak (what the allocator keeps
/// of it afterwards included) grew with them.
const QUERIES_PER_CORE: usize = 2;

impl IndexService {
    pub fn new(engine: Arc<Engine>) -> Self {
        IndexService {
            engine,
            system: false,
            reloader: None,
            listen: String::new(),
            stopping: tokio::sync::watch::channel(false).1,
            patience: outbox::SLOW_READER,
            running: Arc::new(tokio::sync::Semaphore::new(
                (QUERIES_PER_CORE * crate::platform::process::cores()).clamp(4, 64),
            )),
        }
    }

    /// Cuts off a stream whose client took nothing for `patience`.
    pub fn with_patience(mut self, patience: Duration) -> Self {
        self.patience = patience;
        self
    }

    /// Ends every open stream when `stopping` turns true.
    pub fn with_stopping(mut self, stopping: tokio::sync::watch::Receiver<bool>) -> Self {
        self.stopping = stopping;
        self
    }

    /// `s`, ended with UNAVAILABLE "the daemon stopped" as soon as the daemon
    /// stops (or at once, if it is stopping already).
    fn until_stopped<T: Send + 'static>(&self, s: ResponseStream<T>) -> ResponseStream<T> {
        let mut rx = self.stopping.clone();
        let stopped = Box::pin(async move {
            // A dropped sender means the daemon is going away too.
            let _ = rx.wait_for(|s| *s).await;
        });
        Box::pin(UntilStopped {
            inner: Some(s),
            stopped,
        })
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
        let peer = crate::platform::peer::of(req)?;
        (peer.uid != 0).then(|| View::new(caller_from_peer(peer.uid, peer.gid, peer.pid)))
    }

    /// Refuses what only the daemon's owner may do (change roots, reload).
    fn owner_only<T>(&self, req: &Request<T>, what: &str) -> Result<(), Status> {
        match self.view(req) {
            Some(v) => Err(Error::PermissionDenied(format!(
                "{what} is for root on a machine-wide index (you are uid {})",
                v.caller.uid
            ))
            .into()),
            None => Ok(()),
        }
    }

    /// Runs `f` on the blocking pool with the engine, once one of the
    /// turns [`QUERIES_PER_CORE`] allows is free.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Engine) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Status> {
        let engine = self.engine.clone();
        // Never closed, so this waits for a turn and then has one.
        let turn = self.running.clone().acquire_owned().await;
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            f(&engine)
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map_err(Status::from)
    }
}

type ResponseStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// A response stream that ends when the daemon stops: one UNAVAILABLE
/// status, then the end, so that the client knows why.
struct UntilStopped<T> {
    inner: Option<ResponseStream<T>>,
    stopped: Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
}

impl<T> Stream for UntilStopped<T> {
    type Item = Result<T, Status>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        match inner.as_mut().poll_next(cx) {
            Poll::Ready(None) => {
                self.inner = None;
                return Poll::Ready(None);
            }
            Poll::Ready(Some(item)) => return Poll::Ready(Some(item)),
            Poll::Pending => {}
        }
        if self.stopped.as_mut().poll(cx).is_ready() {
            // Dropping the inner stream tells its producer (a search, a
            // duplicates pass, a subscription) that nobody listens.
            self.inner = None;
            return Poll::Ready(Some(Err(Status::unavailable(STOPPED))));
        }
        Poll::Pending
    }
}

/// What a stream open while the daemon stops ends with.
pub const STOPPED: &str = "the daemon stopped";

/// The Search stream's end of [`Engine::search_each`]: chunks become
/// messages in a bounded [`Outbox`]; the first one also tells the handler
/// that the search answers (an error comes before it or not at all).
struct SearchSink {
    out: Outbox<pb::SearchResponse>,
    head: Option<tokio::sync::oneshot::Sender<Result<(), Error>>>,
}

impl ChunkSink for SearchSink {
    fn offer(&mut self, head: SearchHead, part: Vec<Listed>) -> Taken {
        if let Some(t) = self.head.take() {
            let _ = t.send(Ok(()));
        }
        // About what the message takes encoded: its bytes and a little
        // framing per entry.
        let bytes = part
            .iter()
            .map(|e| e.path.len() + e.name.len() + e.snippet.len() + 32)
            .sum::<usize>()
            + 16;
        match self.out.has_room(bytes) {
            None => return Taken::Stop,
            Some(false) => return Taken::Full(part),
            Some(true) => {}
        }
        let msg = pb::SearchResponse {
            total: head.total,
            elapsed_us: head.elapsed_us,
            entries: part.into_iter().map(convert::entry).collect(),
        };
        match self.out.offer(msg, bytes) {
            outbox::Offer::Queued => Taken::Yes,
            // Only the maker adds, so the room it saw is still there; the
            // client may have gone since.
            outbox::Offer::Full(_) | outbox::Offer::Gone => Taken::Stop,
        }
    }

    fn wait_room(&mut self) -> bool {
        self.out.wait_room()
    }
}

/// A stream of already-made messages.
fn stream<T: Send + 'static>(items: Vec<T>) -> ResponseStream<T> {
    Box::pin(tokio_stream::iter(items.into_iter().map(Ok)))
}

#[tonic::async_trait]
impl pb::index_server::Index for IndexService {
    async fn status(
        &self,
        req: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::StatusResponse>, Status> {
        if req.get_ref().brief {
            return Ok(Response::new(pb::StatusResponse {
                version: env!("CARGO_PKG_VERSION").into(),
                protocol: pb::Protocol::V1 as i32,
                pid: std::process::id(),
                ..Default::default()
            }));
        }
        let view = self.view(&req);
        if req.get_ref().waiting {
            self.engine.client_waits_for_ready();
        }
        let s = self.blocking(move |e| e.status(view)).await?;
        Ok(Response::new(pb::StatusResponse {
            content: Some(convert::content_status(&s)),
            media: Some(convert::media_status(s.media.clone())),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol: pb::Protocol::V1 as i32,
            state: if s.ready { "ready" } else { "scanning" }.into(),
            entries: s.entries,
            roots: s.roots.into_iter().map(convert::root_status).collect(),
            db_bytes: s.db_bytes,
            rss_bytes: s.rss_bytes,
            cpu_percent: s.cpu_percent,
            cpu_time_ms: s.cpu_time_ms,
            system: self.system,
            listen: self.listen.clone(),
            config_path: self
                .reloader
                .as_ref()
                .map(|r| r.path().as_os_str().as_encoded_bytes().to_vec())
                .unwrap_or_default(),
            rows_written: s.rows_written,
            persisted: s.persisted,
            pending_rows: s.pending_rows,
            notices: s.notices,
            pid: std::process::id(),
            db_path: s.db_path.into_os_string().into_encoded_bytes(),
            uptime_secs: s.uptime_secs,
            hashing: Some(convert::hash_status(s.hashing)),
            watch: Some(convert::watch_status(s.watch)),
            memory: Some(convert::memory_status(&s.memory)),
            fleet: s.fleet.as_ref().map(convert::fleet_status),
        }))
    }

    type SearchStream = ResponseStream<pb::SearchResponse>;

    async fn search(
        &self,
        req: Request<pb::SearchRequest>,
    ) -> Result<Response<Self::SearchStream>, Status> {
        let view = self.view(&req);
        let args = req.into_inner().into();
        // The answer streams while it is made: the status (or the error,
        // which comes before any result) once the results are ordered, then
        // each chunk as soon as its paths are built, through a queue
        // bounded in bytes (a slow reader makes the search wait, with the
        // index released; one that takes nothing is cut off).
        let (head_tx, head_rx) = tokio::sync::oneshot::channel();
        let (out, inbox) = Outbox::new(self.patience);
        let engine = self.engine.clone();
        // A client that goes away before the answer (fsgui, a key later)
        // drops this future: the search stops (see queries::cancel).
        let cancel = Cancel::new();
        let unanswered = cancel.on_drop();
        tokio::task::spawn_blocking(move || {
            let mut sink = SearchSink {
                out,
                head: Some(head_tx),
            };
            let result = cancel.scope(|| engine.search_each(args, view, &mut sink));
            if let (Err(e), Some(t)) = (result, sink.head.take()) {
                let _ = t.send(Err(e));
            }
            let big = sink.out.is_gone();
            drop(sink);
            if big {
                crate::platform::process::release_memory();
            }
        });
        let head = head_rx.await;
        unanswered.disarm();
        match head {
            Ok(Ok(())) => Ok(Response::new(self.until_stopped(Box::pin(inbox)))),
            Ok(Err(e)) => Err(Status::from(e)),
            Err(_) => Err(Status::internal("the search stopped before it answered")),
        }
    }

    async fn disk_usage(
        &self,
        req: Request<pb::DiskUsageRequest>,
    ) -> Result<Response<pb::DiskUsageResponse>, Status> {
        let view = self.view(&req);
        let args = req.into_inner().into();
        let report = self.blocking(move |e| e.disk_usage(args, view)).await?;
        Ok(Response::new(convert::disk_usage(report)))
    }

    type RescanStream = ResponseStream<pb::ScanProgress>;

    async fn rescan(
        &self,
        req: Request<pb::RescanRequest>,
    ) -> Result<Response<Self::RescanStream>, Status> {
        use tokio_stream::StreamExt;
        let view = self.view(&req);
        let req = req.into_inner();
        let progress = self.engine.rescan_progress(&req.path, req.wait, view)?;
        let path = req.path;
        Ok(Response::new(self.until_stopped(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(progress).map(move |p| {
                p.map(|p| convert::scan_progress(p, path.clone()))
                    .map_err(Status::from)
            }),
        ))))
    }

    async fn roots(
        &self,
        req: Request<pb::RootsRequest>,
    ) -> Result<Response<pb::RootsResponse>, Status> {
        let action = pb::RootsAction::try_from(req.get_ref().action).unwrap_or_default();
        if !matches!(action, pb::RootsAction::Unspecified | pb::RootsAction::List) {
            self.owner_only(&req, "changing the roots")?;
        }
        let view = self.view(&req);
        let req = req.into_inner();
        let (path, content) = (req.path, req.content);
        let roots = self
            .blocking(move |e| {
                let p = crate::platform::bytes::path(&path);
                match action {
                    pb::RootsAction::Unspecified | pb::RootsAction::List => {}
                    pb::RootsAction::Add => e.add_root(p, content)?,
                    pb::RootsAction::Remove => e.remove_root(p)?,
                }
                e.roots_seen(view)
            })
            .await?;
        Ok(Response::new(pb::RootsResponse {
            roots: roots.into_iter().map(convert::root_status).collect(),
        }))
    }

    type VerifyStream = ResponseStream<pb::VerifyResponse>;

    async fn verify(
        &self,
        req: Request<pb::VerifyRequest>,
    ) -> Result<Response<Self::VerifyStream>, Status> {
        let view = self.view(&req);
        let req = req.into_inner();
        let found = self
            .blocking(move |e| e.verify_seen(&req.path, req.fix, view))
            .await?;
        let diffs: Vec<pb::Difference> = found
            .differences
            .into_iter()
            .map(convert::difference)
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
        Ok(Response::new(stream(chunks)))
    }

    type DuplicatesStream = ResponseStream<pb::DuplicatesResponse>;

    async fn duplicates(
        &self,
        req: Request<pb::DuplicatesRequest>,
    ) -> Result<Response<Self::DuplicatesStream>, Status> {
        use pb::duplicates_response::Item;
        let view = self.view(&req);
        let req = req.into_inner();
        let engine = self.engine.clone();
        // Groups go through a queue bounded in bytes: a client that takes
        // nothing is cut off instead of holding a blocking thread forever.
        let (out, inbox) = Outbox::new(self.patience);
        let item = |i: Item| pb::DuplicatesResponse { item: Some(i) };
        tokio::task::spawn_blocking(move || {
            let mut last = Instant::now() - Duration::from_secs(1);
            // Progress at most ten times a second, and only when there is
            // room; a client that went away cancels the search.
            let mut progress = |p: crate::queries::dupes::Progress| {
                if out.is_gone() {
                    return false;
                }
                if last.elapsed() >= Duration::from_millis(100) {
                    last = Instant::now();
                    let _ = out.offer(item(Item::Progress(convert::duplicates_progress(p))), 64);
                }
                true
            };
            let found = engine.duplicates(
                &req.path,
                req.min_size,
                req.include_empty,
                &mut progress,
                view,
            );
            let mut report = match found {
                Ok(r) => r,
                Err(e) => {
                    out.fail(e.into());
                    return;
                }
            };
            let summary = convert::duplicates_summary(&mut report);
            for g in report.groups {
                let bytes = g
                    .copies
                    .iter()
                    .flat_map(|c| &c.paths)
                    .map(|p| p.len() + 16)
                    .sum::<usize>()
                    + 64;
                if !out.send(item(Item::Group(convert::group(g))), bytes) {
                    return;
                }
            }
            let _ = out.send(item(Item::Summary(summary)), 256);
        });
        Ok(Response::new(self.until_stopped(Box::pin(inbox))))
    }

    type SubscribeStream = ResponseStream<pb::ChangeEvent>;

    async fn subscribe(
        &self,
        req: Request<pb::SubscribeRequest>,
    ) -> Result<Response<Self::SubscribeStream>, Status> {
        let view = self.view(&req);
        let mut sub = self.engine.subscribe_seen(&req.into_inner().path, view)?;
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
                let heard = tokio::select! {
                    h = sub.next() => h,
                    // Nobody listens any more (the client went away, or the
                    // stream was ended because the daemon stops).
                    _ = tx.closed() => return,
                };
                let Some(heard) = heard else { return };
                let msg = match heard {
                    Heard::Change(e) => convert::change_event(e),
                    Heard::Missed(n) => pb::ChangeEvent {
                        kind: pb::ChangeKind::Missed as i32,
                        missed: n,
                        ..Default::default()
                    },
                    Heard::Reread(path) => pb::ChangeEvent {
                        kind: pb::ChangeKind::Reread as i32,
                        path,
                        r#type: pb::EntryType::Dir as i32,
                        ..Default::default()
                    },
                };
                if tx.send(Ok(msg)).await.is_err() {
                    return; // the client went away
                }
            }
        });
        Ok(Response::new(self.until_stopped(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(out),
        ))))
    }

    async fn stat(
        &self,
        req: Request<pb::StatRequest>,
    ) -> Result<Response<pb::StatResponse>, Status> {
        let view = self.view(&req);
        let path = req.into_inner().path;
        let (path, info) = self.blocking(move |e| e.stat(&path, view)).await?;
        Ok(Response::new(convert::stat(path, info)?))
    }

    async fn read_text(
        &self,
        req: Request<pb::ReadTextRequest>,
    ) -> Result<Response<pb::ReadTextResponse>, Status> {
        let view = self.view(&req);
        let r = req.into_inner();
        let args = crate::engine::TextArgs {
            path: r.path,
            offset: r.offset,
            length: r.length,
            allow_sensitive: r.allow_sensitive,
        };
        let page = self.blocking(move |e| e.read_text(args, view)).await?;
        Ok(Response::new(convert::text_page(page)))
    }

    async fn list(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListResponse>, Status> {
        let view = self.view(&req);
        let req = req.into_inner();
        let order = convert::list_order(req.sort);
        let rows = self
            .blocking(move |e| e.list(&req.path, order, req.reverse, view))
            .await?;
        Ok(Response::new(pb::ListResponse {
            entries: rows.into_iter().map(convert::entry).collect(),
        }))
    }

    async fn tree(
        &self,
        req: Request<pb::TreeRequest>,
    ) -> Result<Response<pb::TreeResponse>, Status> {
        let view = self.view(&req);
        let req = req.into_inner();
        let max = match req.max_children {
            0 => 20,
            n => n as usize,
        };
        let root = self
            .blocking(move |e| e.tree(&req.path, req.depth, max, view))
            .await?;
        Ok(Response::new(pb::TreeResponse {
            root: Some(convert::tree_node(root)),
        }))
    }

    async fn reload(
        &self,
        req: Request<pb::ReloadRequest>,
    ) -> Result<Response<pb::ReloadResponse>, Status> {
        self.owner_only(&req, "reloading the config")?;
        let Some(reloader) = self.reloader.clone() else {
            return Err(Error::Precondition(
                "this daemon was started without a config to reload".into(),
            )
            .into());
        };
        let path = reloader.path().as_os_str().as_encoded_bytes().to_vec();
        let changes = self.blocking(move |_| reloader.reload()).await?;
        Ok(Response::new(pb::ReloadResponse {
            config_path: path,
            changes,
        }))
    }

    async fn fs_map(
        &self,
        req: Request<pb::FsMapRequest>,
    ) -> Result<Response<pb::FsMapResponse>, Status> {
        let view = self.view(&req);
        let req = req.into_inner();
        let now_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0);
        let budget = req.budget;
        let map = self
            .blocking(move |e| e.fs_map(&req.path, budget, now_ns, view))
            .await?;
        Ok(Response::new(convert::fs_map(map, budget)))
    }

    async fn tags(
        &self,
        req: Request<pb::TagsRequest>,
    ) -> Result<Response<pb::TagsResponse>, Status> {
        let view = self.view(&req);
        let req = req.into_inner();
        let action = pb::TagsAction::try_from(req.action).unwrap_or_default();
        let answer = self
            .blocking(move |e| labels::tags(e, action, req, view))
            .await?;
        Ok(Response::new(answer))
    }

    async fn bookmarks(
        &self,
        req: Request<pb::BookmarksRequest>,
    ) -> Result<Response<pb::BookmarksResponse>, Status> {
        let view = self.view(&req);
        let req = req.into_inner();
        let action = pb::BookmarksAction::try_from(req.action).unwrap_or_default();
        let marks = self
            .blocking(move |e| match action {
                pb::BookmarksAction::Add => e.bookmark_add(&req.path, &req.name, view),
                pb::BookmarksAction::Remove => e.bookmark_remove(&req.name, &req.path, view),
                _ => e.bookmarks(view),
            })
            .await?;
        Ok(Response::new(pb::BookmarksResponse {
            bookmarks: marks.into_iter().map(labels::bookmark).collect(),
        }))
    }

    async fn projects(
        &self,
        req: Request<pb::ProjectsRequest>,
    ) -> Result<Response<pb::ProjectsResponse>, Status> {
        let view = self.view(&req);
        let path = req.into_inner().path;
        let found = self.blocking(move |e| e.projects(&path, view)).await?;
        Ok(Response::new(convert::projects(found)))
    }

    type ManifestStream = ResponseStream<pb::ManifestResponse>;

    async fn manifest(
        &self,
        req: Request<pb::ManifestRequest>,
    ) -> Result<Response<Self::ManifestStream>, Status> {
        use pb::manifest_response::Item;
        let view = self.view(&req);
        let r = req.into_inner();
        let args = crate::engine::ManifestArgs {
            path: r.path,
            budget: r.budget,
            offset: r.offset,
            limit: r.limit,
            allow_sensitive: r.allow_sensitive,
        };
        let engine = self.engine.clone();
        let (out, inbox) = Outbox::new(self.patience);
        let item = |i: Item| pb::ManifestResponse { item: Some(i) };
        tokio::task::spawn_blocking(move || {
            let mut last = Instant::now() - Duration::from_secs(1);
            // Progress at most ten times a second; a client that went
            // away stops the work.
            let mut progress = |p: crate::engine::ManifestProgress| {
                if out.is_gone() {
                    return false;
                }
                if last.elapsed() >= Duration::from_millis(100) {
                    last = Instant::now();
                    let _ = out.offer(
                        item(Item::Progress(pb::ManifestProgress {
                            done: p.done,
                            todo: p.todo,
                        })),
                        32,
                    );
                }
                true
            };
            let budget = args.budget;
            let m = match engine.manifest(args, view, &mut progress) {
                Ok(m) => m,
                Err(e) => {
                    out.fail(e.into());
                    return;
                }
            };
            let shown = m.files.len() as u64;
            for f in m.files {
                let bytes = f.rel.len() + f.summary.len() + 64;
                if !out.send(item(Item::File(convert::manifest_file(f))), bytes) {
                    return;
                }
            }
            let _ = out.send(
                item(Item::Summary(pb::ManifestSummary {
                    total: m.total,
                    shown,
                    left_out: m.left_out,
                    tokens: m.tokens,
                    budget,
                })),
                64,
            );
        });
        Ok(Response::new(self.until_stopped(Box::pin(inbox))))
    }

    async fn saved_searches(
        &self,
        req: Request<pb::SavedSearchesRequest>,
    ) -> Result<Response<pb::SavedSearchesResponse>, Status> {
        let view = self.view(&req);
        let req = req.into_inner();
        let answer = self
            .blocking(move |e| searches::saved_searches(e, req, view))
            .await?;
        Ok(Response::new(answer))
    }

    async fn history(
        &self,
        req: Request<pb::HistoryRequest>,
    ) -> Result<Response<pb::HistoryResponse>, Status> {
        let view = self.view(&req);
        let req = req.into_inner();
        let answer = self
            .blocking(move |e| searches::history(e, req, view))
            .await?;
        Ok(Response::new(answer))
    }
}

/// Serves the index service, health and reflection on the unix socket
/// until `shutdown` completes.
#[cfg(unix)]
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
        // One client connection holds at most this many calls at once
        // (HTTP/2 streams beyond are refused; a polite client queues them).
        .max_concurrent_streams(Some(MAX_STREAMS_PER_CONNECTION))
        .concurrency_limit_per_connection(MAX_STREAMS_PER_CONNECTION as usize)
        .layer(tonic::service::InterceptorLayer::new(check))
        .add_service(health)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(pb::index_server::IndexServer::new(service))
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await?;
    Ok(())
}

/// Calls one client connection may have open at once (HTTP/2
/// SETTINGS_MAX_CONCURRENT_STREAMS): fsctl opens one, fsgui a few; each
/// open stream may hold [`outbox::STREAM_BUFFER_BYTES`] for its client.
pub const MAX_STREAMS_PER_CONNECTION: u32 = 32;

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
