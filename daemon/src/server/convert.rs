//! Conversions between protobuf messages and the engine's types, and the
//! one mapping from [`Error`] to a gRPC status.

use fsindex_proto::v1 as pb;
use tonic::Status;

use crate::Error;
use crate::engine::{
    HashFigures, ListOrder, Listed, RescanProgress, RootState, RootView, SearchArgs, UsageArgs,
    WatchFigures,
};
use crate::index::{ChangeEvent, ChangeKind};
use crate::ingest::scan::{DiffKind, Difference};
use crate::queries::search::Sort;
use crate::queries::{browse, du, dupes, fsmap};
use crate::store::Kind;

/// The most bytes of an error message sent to a client. A message names
/// what was asked (a path, a query), which may be megabytes long, and it
/// travels in an HTTP/2 header that clients refuse past 16 KiB (tonic and
/// grpc-go; the refusal resets the whole connection): a longer message
/// keeps its start and its end.
pub const MAX_STATUS_MESSAGE: usize = 1024;

/// `msg` within [`MAX_STATUS_MESSAGE`] bytes: the start and the end, with
/// how much was cut between them.
pub fn bounded_message(msg: String) -> String {
    if msg.len() <= MAX_STATUS_MESSAGE {
        return msg;
    }
    let floor = |mut i: usize| {
        while !msg.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let ceil = |mut i: usize| {
        while !msg.is_char_boundary(i) {
            i += 1;
        }
        i
    };
    let head = floor(MAX_STATUS_MESSAGE * 3 / 4 - 32);
    let tail = ceil(msg.len() - MAX_STATUS_MESSAGE / 4);
    format!(
        "{} [... {} bytes ...] {}",
        &msg[..head],
        tail - head,
        &msg[tail..]
    )
}

impl From<Error> for Status {
    fn from(e: Error) -> Self {
        let msg = bounded_message(e.to_string());
        match e {
            Error::InvalidQuery(_) | Error::InvalidArgument(_) => Status::invalid_argument(msg),
            Error::NotUnderRoot(..) | Error::NotFound(_) | Error::Missing(_) => {
                Status::not_found(msg)
            }
            Error::Exists(_) => Status::already_exists(msg),
            Error::PermissionDenied(_) => Status::permission_denied(msg),
            Error::Precondition(_) => Status::failed_precondition(msg),
            Error::Timeout(_) => Status::deadline_exceeded(msg),
            Error::Failed(crate::Runtime::RootRemoved | crate::Runtime::Outside { .. }) => {
                Status::not_found(msg)
            }
            Error::WriterGone => Status::unavailable(msg),
            Error::Cancelled => Status::cancelled(msg),
            Error::Failed(_) | Error::Sqlite(_) | Error::Io(_) => Status::internal(msg),
            // Error is non_exhaustive only for other crates.
        }
    }
}

pub fn entry_type(k: Kind) -> i32 {
    (match k {
        Kind::File => pb::EntryType::File,
        Kind::Dir => pb::EntryType::Dir,
        Kind::Symlink => pb::EntryType::Symlink,
        Kind::Other => pb::EntryType::Other,
    }) as i32
}

pub fn root_status(v: RootView) -> pb::RootStatus {
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
        priority: v.priority.unwrap_or_default().into(),
    }
}

pub fn usage(u: du::Usage) -> pb::Usage {
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
        photos: u.photos.count,
        photos_first_year: u.photos.first_year,
        photos_last_year: u.photos.last_year,
    }
}

pub fn entry(l: Listed) -> pb::Entry {
    pb::Entry {
        path: l.path,
        name: l.name,
        r#type: entry_type(l.kind),
        size: l.size,
        mtime_ns: l.mtime_ns,
        sensitive: l.sensitive,
        snippet: l.snippet,
        inside: l.inside.map(|i| pb::Inside {
            container: i.container,
            name: i.name,
            index: i.index,
            file: i.file,
        }),
    }
}

pub fn sort(order: i32) -> Sort {
    match pb::SortOrder::try_from(order).unwrap_or_default() {
        pb::SortOrder::Unspecified | pb::SortOrder::Relevance => Sort::Relevance,
        pb::SortOrder::Name => Sort::Name,
        pb::SortOrder::Path => Sort::Path,
        pb::SortOrder::Size => Sort::Size,
        pb::SortOrder::Mtime => Sort::Mtime,
    }
}

impl From<pb::SearchRequest> for SearchArgs {
    fn from(r: pb::SearchRequest) -> Self {
        SearchArgs {
            query: r.query,
            sort: sort(r.sort),
            reverse: r.reverse,
            offset: usize::try_from(r.offset).unwrap_or(usize::MAX),
            // 0 means all.
            limit: usize::try_from(r.limit).unwrap_or(usize::MAX),
            sync: r.sync,
            snippets: r.snippets.map_or(crate::engine::DEFAULT_SNIPPETS, |n| {
                (n as usize).min(crate::engine::MAX_SNIPPETS)
            }),
        }
    }
}

impl From<pb::DiskUsageRequest> for UsageArgs {
    fn from(r: pb::DiskUsageRequest) -> Self {
        UsageArgs {
            path: r.path,
            sync: r.sync,
            top: r.top as usize,
            all: r.all,
            depth: r.depth,
            files_only: r.files_only,
            dirs_only: r.dirs_only,
            apparent: r.apparent,
            photos: r.photos,
        }
    }
}

pub fn list_order(order: i32) -> ListOrder {
    match pb::SortOrder::try_from(order).unwrap_or_default() {
        pb::SortOrder::Size => ListOrder::Size,
        pb::SortOrder::Mtime => ListOrder::Mtime,
        _ => ListOrder::Name,
    }
}

pub fn disk_usage(report: du::Report) -> pb::DiskUsageResponse {
    pb::DiskUsageResponse {
        total: Some(usage(report.total)),
        children: report.children.into_iter().map(usage).collect(),
        children_total: report.children_total as u64,
    }
}

pub fn tree_node(n: browse::Node) -> pb::TreeNode {
    pb::TreeNode {
        name: n.name,
        r#type: n.usage.kind.map(entry_type).unwrap_or_default(),
        bytes: n.usage.bytes,
        apparent_bytes: n.usage.apparent,
        files: n.usage.files,
        dirs: n.usage.dirs,
        children: n.children.into_iter().map(tree_node).collect(),
        hidden_children: n.hidden,
        excluded: n.usage.excluded,
        measured_at: n.usage.measured_at,
    }
}

pub fn fs_map_node(n: fsmap::Node) -> pb::FsMapNode {
    use fsmap::NodeType;
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
        photos: n.photos.count,
        photos_first_year: n.photos.first_year,
        photos_last_year: n.photos.last_year,
        children: n.children.into_iter().map(fs_map_node).collect(),
        more_dirs: n.more.dirs,
        more_files: n.more.files,
        more_bytes: n.more.bytes,
        count: n.count,
        excluded: n.excluded.is_some(),
        measured_at: n.excluded.unwrap_or(0),
    }
}

pub fn fs_map(map: fsmap::Map, budget: u32) -> pb::FsMapResponse {
    let tokens = map.text.len().div_ceil(4) as u32;
    pb::FsMapResponse {
        text: map.text,
        root: Some(fs_map_node(map.root)),
        tokens,
        budget,
    }
}

pub fn stat(path: std::path::PathBuf, info: browse::Info) -> Result<pb::StatResponse, Status> {
    let row = info
        .row
        .ok_or_else(|| Status::not_found("entry vanished"))?;
    Ok(pb::StatResponse {
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
        media: info.media.map(media_info),
        tags: info
            .tags
            .into_iter()
            .map(|(name, s)| pb::Tag {
                name,
                source: super::labels::source(s),
                entries: 0,
            })
            .collect(),
    })
}

pub fn media_info(row: crate::store::media::MediaRow) -> pb::MediaInfo {
    let m = row.media;
    pb::MediaInfo {
        status: row.status,
        taken: m.taken,
        camera_make: m.camera_make,
        camera_model: m.camera_model,
        width: m.width,
        height: m.height,
        duration_ms: m.duration_ms,
        artist: m.artist,
        album: m.album,
        title: m.title,
        track: m.track,
        year: m.year,
        genre: m.genre,
        gps_lat: m.gps_lat,
        gps_lon: m.gps_lon,
        pages: m.pages,
        author: m.author,
    }
}

pub fn media_status(f: crate::engine::MediaFigures) -> pb::MediaStatus {
    pb::MediaStatus {
        rows: f.rows.into_iter().collect(),
        read: f.read,
        failed: f.failed,
        queued: f.queued,
        busy: f.busy,
    }
}

pub fn difference(d: Difference) -> pb::Difference {
    pb::Difference {
        kind: (match d.kind {
            DiffKind::Missing => pb::DifferenceKind::Missing,
            DiffKind::Extra => pb::DifferenceKind::Extra,
            DiffKind::Stale => pb::DifferenceKind::Stale,
        }) as i32,
        path: d.path.into_os_string().into_encoded_bytes(),
        detail: d.detail,
    }
}

pub fn group(g: dupes::Group) -> pb::DuplicateGroup {
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

pub fn duplicates_summary(report: &mut dupes::Report) -> pb::DuplicatesSummary {
    pb::DuplicatesSummary {
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
        unreadable_paths: std::mem::take(&mut report.unreadable_paths),
        changed: report.changed,
        skipped_roots: std::mem::take(&mut report.skipped_roots),
    }
}

pub fn scan_progress(p: RescanProgress, path: Vec<u8>) -> pb::ScanProgress {
    pb::ScanProgress {
        scanned: p.scanned,
        written: p.written,
        errors: p.errors,
        done: p.done,
        path,
        elapsed_ms: p.elapsed_ms,
        content_queued: p.content_queued,
    }
}

pub fn duplicates_progress(p: dupes::Progress) -> pb::DuplicatesProgress {
    pb::DuplicatesProgress {
        stage: p.stage.as_str().into(),
        files_done: p.files_done,
        files_total: p.files_total,
        bytes_done: p.bytes_done,
        bytes_total: p.bytes_total,
    }
}

pub fn hash_status(h: HashFigures) -> pb::HashStatus {
    let last = h.last_pass;
    pb::HashStatus {
        cached: h.cached,
        files_read: h.files_read,
        bytes_read: h.bytes_read,
        cache_hits: h.cache_hits,
        last_pass_secs_ago: last
            .as_ref()
            .map_or(-1, |l| l.at.elapsed().as_secs() as i64),
        last_pass_candidates: last.as_ref().map_or(0, |l| l.candidates),
        last_pass_read: last.as_ref().map_or(0, |l| l.files_read),
        last_pass_unreadable: last.as_ref().map_or(0, |l| l.unreadable),
        last_pass_background: last.as_ref().is_some_and(|l| l.background),
        last_pass_scope: last.and_then(|l| l.scope).unwrap_or_default(),
    }
}

pub fn watch_status(w: Option<WatchFigures>) -> pb::WatchStatus {
    match w {
        None => pb::WatchStatus::default(),
        Some(w) => pb::WatchStatus {
            enabled: true,
            watches: w.watches,
            os_limit: w.os_limit,
            polled: w.polled,
            events: w.events,
            overflows: w.overflows,
            recrawls: w.recrawls,
            last_event_ms: w.last_event_ms,
            note: w.note,
            backend: w.backend.into(),
        },
    }
}

pub fn change_event(e: ChangeEvent) -> pb::ChangeEvent {
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

pub fn content_status(s: &crate::engine::Status) -> pb::ContentStatus {
    pb::ContentStatus {
        folders: s
            .content
            .iter()
            .map(|f| pb::ContentFolder {
                path: crate::platform::bytes::vec(&f.path),
                indexed: f.indexed,
                queued: f.queued,
                failed: f.failed.clone().into_iter().collect(),
                text_bytes: f.text_bytes,
            })
            .collect(),
        fts_bytes: s.fts_bytes,
        extracted: s.extracted,
        failed: s.extract_failed,
    }
}

pub fn memory_status(m: &crate::engine::MemoryFigures) -> pb::MemoryStatus {
    pb::MemoryStatus {
        rss_anon: m.rss_anon,
        rss_file: m.rss_file,
        search_snapshot: m.search_snapshot,
        watches: m.watches,
        sqlite: m.sqlite,
        heap_in_use: m.heap_in_use,
        heap_free: m.heap_free,
    }
}

pub fn fleet_status(f: &crate::engine::fleet::FleetFigures) -> pb::FleetStatus {
    pb::FleetStatus {
        host: f.host.clone(),
        database: f.database.clone(),
        connected: f.connected,
        state: f.state.clone(),
        lag_batches: f.lag_batches,
        lag_secs: f.lag_secs,
        last_error: f.last_error.clone().unwrap_or_default(),
        rows_shipped: f.rows_shipped,
        reconciles: f.reconciles,
    }
}

/// A page of a file's text (ReadText).
pub fn text_page(p: crate::engine::TextPage) -> pb::ReadTextResponse {
    pb::ReadTextResponse {
        path: crate::platform::bytes::vec(&p.path),
        text: p.text,
        offset: p.offset,
        total_bytes: p.total_bytes,
        truncated: p.truncated,
        format: p.format,
        encoding: p.encoding,
        source: p.source.name().into(),
        sensitive: p.sensitive,
    }
}

pub fn projects(found: Vec<crate::engine::Project>) -> pb::ProjectsResponse {
    use crate::engine::Branch;
    let projects = found
        .into_iter()
        .map(|p| {
            let f = p.figures;
            let (branch, detached) = match p.branch {
                Branch::Unknown => (String::new(), false),
                Branch::Named(b) => (b, false),
                Branch::Detached(h) => (h, true),
            };
            pb::Project {
                path: p.path,
                kinds: p.kinds.iter().map(|k| k.name().to_string()).collect(),
                languages: f
                    .languages
                    .iter()
                    .map(|(l, n)| pb::ProjectLanguage {
                        language: l.to_string(),
                        files: *n,
                    })
                    .collect(),
                bytes: f.usage.bytes,
                apparent_bytes: f.usage.apparent,
                files: f.usage.files,
                dirs: f.usage.dirs,
                incomplete: f.usage.incomplete,
                mtime_ns: f.newest_ns,
                branch,
                detached,
                parent: p.parent.unwrap_or_default(),
                depth: p.depth,
            }
        })
        .collect();
    pb::ProjectsResponse { projects }
}

pub fn manifest_file(f: crate::engine::ManifestFile) -> pb::ManifestFile {
    pb::ManifestFile {
        relative_path: f.rel,
        kind: f.kind.to_owned(),
        size: f.size,
        mtime_ns: f.mtime_ns,
        summary: f.summary,
        source: f.source.to_owned(),
        sensitive: f.sensitive,
    }
}
