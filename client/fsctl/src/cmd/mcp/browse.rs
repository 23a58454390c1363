//! Tools that look at one place: allowed directories, file info, folder
//! listings, trees, disk usage, the map and reading a text file.
//!
//! Every text rendering carries the fields of the structured content
//! (sizes in bytes, times in RFC 3339, paths shown as in `names`), and
//! every answer fits the byte budget: a list longer than that is cut, says
//! so, and gives the cursor of the rest.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use fsindex_proto::v1 as pb;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::index::{Ctx, Failure, Outcome, next_cursor, page, reply, showing};
use super::names::{path_of, shown, shown_path};
use super::text::{self, Selection};
use crate::output::{path_bytes, rfc3339, size, type_name};

// ---------------------------------------------------------------- allowed

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AllowedDirectories {
    /// Absolute paths; every path given to a tool must be at or under one.
    pub directories: Vec<String>,
}

pub fn list_allowed_directories(ctx: &Ctx) -> Outcome {
    let dirs: Vec<String> = ctx
        .guard()
        .allowed()
        .iter()
        .map(|d| shown_path(d))
        .collect();
    let text = if dirs.is_empty() {
        "Allowed directories: none (the client's roots lie outside what this server may read)"
            .to_owned()
    } else {
        format!("Allowed directories:\n{}", dirs.join("\n"))
    };
    reply(&AllowedDirectories { directories: dirs }, text)
}

// ---------------------------------------------------------------- file info

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PathParams {
    /// A path under an allowed directory (absolute, `~/...`, or relative to an allowed directory), as the tools show it.
    pub path: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileInfo {
    pub path: String,
    /// Bytes (st_size).
    pub size: u64,
    /// Birth time where the file system records it, RFC 3339 UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    pub modified: String,
    pub accessed: String,
    pub is_directory: bool,
    pub is_file: bool,
    /// Permission bits in octal, e.g. "644".
    pub permissions: String,
    /// file, dir, symlink or other.
    #[serde(rename = "type")]
    pub entry_type: String,
    /// document, image, audio, video, archive, code, text, folder or other.
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text files: the encoding detected (chardetng) and the line count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_count: Option<i64>,
    /// Allocated bytes (st_blocks × 512).
    pub allocated: u64,
    /// Folders: what `du` counts below (allocated and apparent bytes, files, folders).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageFigures>,
    /// A symlink's target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Matches a sensitive pattern (WARN tier: indexed and flagged).
    pub sensitive: bool,
    /// Photos, songs, videos, documents: what the file says about itself
    /// (status, then taken, cameraMake, cameraModel, width, height,
    /// durationMs, artist, album, title, track, year, genre, gpsLat, gpsLon,
    /// pages, author where known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media: Option<serde_json::Value>,
    /// The user's tags (source `user`) and those the file carries (source `xattr`: its user.xdg.tags, as KDE writes it), by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<super::labels::TagItem>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageFigures {
    pub bytes: u64,
    pub apparent_bytes: u64,
    pub files: u64,
    pub dirs: u64,
    pub incomplete: bool,
}

pub async fn get_file_info(ctx: &Ctx, p: PathParams) -> Outcome {
    let path = ctx.guard().existing(&p.path)?;
    let i = ctx.stat(&p.path, &path).await?;
    let created = std::fs::symlink_metadata(&path)
        .and_then(|m| m.created())
        .ok()
        .and_then(|t| jiff::Timestamp::try_from(t).ok())
        .map(|t| t.to_string());
    let is_dir = i.r#type == pb::EntryType::Dir as i32;
    let info = FileInfo {
        path: shown(&i.path),
        size: i.size,
        created,
        modified: rfc3339(i.mtime_ns),
        accessed: rfc3339(i.atime_ns),
        is_directory: is_dir,
        is_file: i.r#type == pb::EntryType::File as i32,
        permissions: format!("{:03o}", i.mode & 0o777),
        entry_type: type_name(i.r#type).to_owned(),
        kind: if i.kind.is_empty() {
            "other".into()
        } else {
            i.kind.clone()
        },
        mime_type: (!i.mime.is_empty()).then(|| i.mime.clone()),
        encoding: (!i.encoding.is_empty()).then(|| i.encoding.clone()),
        line_count: (i.lines >= 0 && !i.encoding.is_empty()).then_some(i.lines),
        allocated: i.allocated,
        usage: i.usage.as_ref().map(|u| UsageFigures {
            bytes: u.bytes,
            apparent_bytes: u.apparent_bytes,
            files: u.files,
            dirs: u.dirs,
            incomplete: u.incomplete,
        }),
        target: (!i.target.is_empty()).then(|| shown(&i.target)),
        sensitive: i.sensitive,
        media: i.media.as_ref().map(|m| crate::output::media_json(m, true)),
        tags: i
            .tags
            .iter()
            .map(|t| super::labels::TagItem {
                name: t.name.clone(),
                source: crate::cmd::tag::source_name(t.source).to_owned(),
                entries: None,
            })
            .collect(),
    };
    let mut text = format!(
        "path: {}\ntype: {}\nsize: {} ({})\nallocated: {}\ncreated: {}\nmodified: {}\naccessed: {}\nisDirectory: {}\nisFile: {}\npermissions: {}\nkind: {}",
        info.path,
        info.entry_type,
        info.size,
        size(info.size),
        info.allocated,
        info.created.as_deref().unwrap_or("unknown"),
        info.modified,
        info.accessed,
        info.is_directory,
        info.is_file,
        info.permissions,
        info.kind
    );
    if let Some(m) = &info.mime_type {
        let _ = write!(text, "\nmimeType: {m}");
    }
    if let Some(e) = &info.encoding {
        let _ = write!(text, "\nencoding: {e}");
    }
    if let Some(l) = info.line_count {
        let _ = write!(text, "\nlineCount: {l}");
    }
    for t in &info.tags {
        let _ = write!(text, "\ntag: {} ({})", t.name, t.source);
    }
    if let Some(u) = &info.usage {
        let _ = write!(
            text,
            "\nusage: {} bytes allocated ({}), {} apparent bytes, {} files, {} folders{}",
            u.bytes,
            size(u.bytes),
            u.apparent_bytes,
            u.files,
            u.dirs,
            if u.incomplete {
                " (incomplete: a folder below could not be read)"
            } else {
                ""
            }
        );
    }
    if let Some(t) = &info.target {
        let _ = write!(text, "\ntarget: {t}");
    }
    let _ = write!(text, "\nsensitive: {}", info.sensitive);
    if let Some(m) = &i.media {
        for (label, value) in crate::output::media_lines(m) {
            let _ = write!(text, "\n{label}: {value}");
        }
    }
    reply(&info, text)
}

// ---------------------------------------------------------------- list_directory

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, Hash)]
#[serde(rename_all = "camelCase")]
pub enum ListSort {
    /// By name (the default).
    #[default]
    Name,
    /// Largest first.
    Size,
    /// Newest first.
    Mtime,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListParams {
    /// A folder under an allowed directory.
    pub path: String,
    /// name (default), size (largest first) or mtime (newest first).
    pub sort_by: Option<ListSort>,
    /// Entries per page at most (default 1000; fewer when the answer would pass the byte budget).
    #[schemars(range(min = 1, max = 5000))]
    pub limit: Option<u64>,
    /// The nextCursor of the previous page.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    pub path: String,
    /// Children in all.
    pub total: u64,
    /// Position of the first entry of this page.
    pub offset: u64,
    pub entries: Vec<ListedEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListedEntry {
    /// The name, shown (see the server's instructions).
    pub name: String,
    /// file, dir, symlink or other.
    #[serde(rename = "type")]
    pub entry_type: String,
    /// Bytes (st_size).
    pub size: u64,
    /// RFC 3339 UTC.
    pub mtime: String,
}

fn not_a_folder(raw: &str) -> Failure {
    Failure(format!("{raw}: not a folder"))
}

fn tag(entry_type: &str) -> &'static str {
    match entry_type {
        "dir" => "[DIR]",
        "symlink" => "[SYMLINK]",
        "other" => "[OTHER]",
        _ => "[FILE]",
    }
}

pub async fn list_directory(ctx: &Ctx, p: ListParams) -> Outcome {
    let path = ctx.guard().existing(&p.path)?;
    if !path.is_dir() {
        return Err(not_a_folder(&p.path));
    }
    let sort = p.sort_by.unwrap_or_default();
    let fp = ("list_directory", path.clone(), sort);
    let pg = page(p.cursor.as_deref(), p.limit, 1000, 5000, &fp)?;
    let order = match sort {
        ListSort::Name => pb::SortOrder::Name,
        ListSort::Size => pb::SortOrder::Size,
        ListSort::Mtime => pb::SortOrder::Mtime,
    };
    let all = ctx.list(&p.path, &path, order, false).await?;
    let total = all.len() as u64;
    let rows: Vec<ListedEntry> = all
        .iter()
        .skip(pg.offset as usize)
        .take(pg.limit as usize)
        .map(|e| ListedEntry {
            name: shown(&e.name),
            entry_type: type_name(e.r#type).to_owned(),
            size: e.size,
            mtime: rfc3339(e.mtime_ns),
        })
        .collect();
    let shown_path = shown_path(&path);
    let sort_word = match sort {
        ListSort::Name => "by name",
        ListSort::Size => "largest first",
        ListSort::Mtime => "newest first",
    };
    let (out, text) = ctx.fit(rows.len(), |k| {
        let entries = rows[..k].to_vec();
        let next = next_cursor(pg, k as u64, total, &fp);
        let mut text = format!(
            "{shown_path}: {} ({sort_word})\n# type name\tsize\tmtime\n",
            showing(pg.offset, k, total, "entries", next.as_deref())
        );
        for e in &entries {
            let _ = writeln!(
                text,
                "{} {}\t{}\t{}",
                tag(&e.entry_type),
                e.name,
                e.size,
                e.mtime
            );
        }
        (
            Listing {
                path: shown_path.clone(),
                total,
                offset: pg.offset,
                entries,
                next_cursor: next,
            },
            text,
        )
    });
    reply(&out, text)
}

// ---------------------------------------------------------------- with sizes

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, Hash)]
#[serde(rename_all = "camelCase")]
pub enum NameOrSize {
    /// By name (the default).
    #[default]
    Name,
    /// Largest first.
    Size,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SizesParams {
    /// A folder under an allowed directory.
    pub path: String,
    /// "name" (default) or "size" (largest first).
    pub sort_by: Option<NameOrSize>,
    /// Entries per page at most (default 1000; fewer when the answer would pass the byte budget).
    #[schemars(range(min = 1, max = 5000))]
    pub limit: Option<u64>,
    /// The nextCursor of the previous page.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SizedListing {
    pub path: String,
    /// Children in all, and where this page starts.
    pub total: u64,
    pub offset: u64,
    pub entries: Vec<SizedEntry>,
    /// Files and folders directly in the folder (all of them, not only this page's).
    pub files: u64,
    pub directories: u64,
    /// Apparent bytes of everything below (as `du -s -b`), and allocated (as `du -s -B1`).
    pub total_apparent_bytes: u64,
    pub total_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SizedEntry {
    /// The name, shown.
    pub name: String,
    #[serde(rename = "type")]
    pub entry_type: String,
    /// Apparent bytes: a file's size, a folder's whole content (as `du -s -b`).
    pub size: u64,
    /// Allocated bytes (as `du -s -B1`).
    pub allocated: u64,
    /// Folders: files and folders below.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirs: Option<u64>,
}

pub async fn list_directory_with_sizes(ctx: &Ctx, p: SizesParams) -> Outcome {
    let path = ctx.guard().existing(&p.path)?;
    if !path.is_dir() {
        return Err(not_a_folder(&p.path));
    }
    let sort = p.sort_by.unwrap_or_default();
    let fp = ("list_directory_with_sizes", path.clone(), sort);
    let pg = page(p.cursor.as_deref(), p.limit, 1000, 5000, &fp)?;
    let r = du(ctx, &p.path, &path, 0, 1, false).await?;
    let mut all: Vec<SizedEntry> = r
        .children
        .iter()
        .map(|u| {
            let dir = u.r#type == pb::EntryType::Dir as i32;
            SizedEntry {
                name: shown(u.path.rsplit(|&b| b == b'/').next().unwrap_or(&u.path)),
                entry_type: type_name(u.r#type).to_owned(),
                size: u.apparent_bytes,
                allocated: u.bytes,
                files: dir.then_some(u.files),
                dirs: dir.then_some(u.dirs.saturating_sub(1)),
            }
        })
        .collect();
    match sort {
        NameOrSize::Name => all.sort_by(|a, b| a.name.cmp(&b.name)),
        NameOrSize::Size => all.sort_by(|a, b| b.size.cmp(&a.size).then(a.name.cmp(&b.name))),
    }
    let directories = all.iter().filter(|e| e.entry_type == "dir").count() as u64;
    let total_n = all.len() as u64;
    let files = total_n - directories;
    let totals = r.total.unwrap_or_default();
    let rows: Vec<SizedEntry> = all
        .into_iter()
        .skip(pg.offset as usize)
        .take(pg.limit as usize)
        .collect();
    let sp = shown_path(&path);
    let (out, text) = ctx.fit(rows.len(), |k| {
        let entries = rows[..k].to_vec();
        let next = next_cursor(pg, k as u64, total_n, &fp);
        let mut text = format!(
            "{sp}: {}\n# type name\tsize\tallocated\tfiles\tdirs\n",
            showing(pg.offset, k, total_n, "entries", next.as_deref())
        );
        for e in &entries {
            let _ = writeln!(
                text,
                "{} {}\t{}\t{}\t{}\t{}",
                tag(&e.entry_type),
                e.name,
                e.size,
                e.allocated,
                e.files.map_or("-".into(), |f| f.to_string()),
                e.dirs.map_or("-".into(), |d| d.to_string())
            );
        }
        let _ = write!(
            text,
            "Total: {files} files, {directories} directories\nCombined size: {} bytes ({}), {} allocated bytes",
            totals.apparent_bytes,
            size(totals.apparent_bytes),
            totals.bytes
        );
        (
            SizedListing {
                path: sp.clone(),
                total: total_n,
                offset: pg.offset,
                entries,
                files,
                directories,
                total_apparent_bytes: totals.apparent_bytes,
                total_bytes: totals.bytes,
                next_cursor: next,
            },
            text,
        )
    });
    reply(&out, text)
}

async fn du(
    ctx: &Ctx,
    raw: &str,
    path: &Path,
    top: u32,
    depth: u32,
    photos: bool,
) -> Result<pb::DiskUsageResponse, Failure> {
    let bytes = path_bytes(path);
    ctx.rpc(|mut c| {
        let path = bytes.clone();
        async move {
            c.disk_usage(pb::DiskUsageRequest {
                path,
                top,
                apparent: false,
                sync: false,
                depth,
                all: false,
                files_only: false,
                dirs_only: false,
                photos,
            })
            .await
            .map(tonic::Response::into_inner)
        }
    })
    .await
    .map_err(|s| ctx.daemon_error(raw, s))
}

// ---------------------------------------------------------------- directory_tree

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TreeParams {
    /// A folder under an allowed directory.
    pub path: String,
    /// Levels below the folder to show (default: all, within maxEntries and the byte budget).
    #[schemars(range(min = 1))]
    pub max_depth: Option<u32>,
    /// Entries to show at most, shallowest first (default 1000; fewer when the answer would pass the byte budget).
    #[schemars(range(min = 1, max = 10000))]
    pub max_entries: Option<u64>,
    /// Globs on the path relative to `path` (as the reference server: `node_modules`, `*.log`, `build/**`).
    #[serde(default)]
    pub exclude_patterns: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TreeNode {
    /// The name, shown.
    pub name: String,
    /// "file" or "directory" (the reference server's words).
    #[serde(rename = "type")]
    pub node_type: String,
    /// Files: bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Folders: the children shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<TreeNode>>,
    /// Folders: children left out (beyond maxDepth, maxEntries or the byte budget).
    #[serde(skip_serializing_if = "is_zero", default)]
    pub more: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TreeAnswer {
    pub path: String,
    /// Entries shown.
    pub entries: u64,
    /// Some entries were left out (see each folder's `more`).
    pub truncated: bool,
    pub tree: Vec<TreeNode>,
}

struct Slot {
    parent: usize,
    name: String,
    dir: bool,
    size: u64,
    /// Children kept (after excludes) that were not listed as slots.
    unlisted: u64,
}

/// Glob matching the reference server's excludePatterns: a pattern with a
/// `*` matches the relative path; without one it also matches a name at
/// any depth and everything below it.
pub fn exclude_set(patterns: &[String]) -> Result<globset::GlobSet, Failure> {
    let mut b = globset::GlobSetBuilder::new();
    for p in patterns {
        let mut forms = vec![p.clone()];
        if !p.contains('*') {
            forms.push(format!("**/{p}"));
            forms.push(format!("**/{p}/**"));
        }
        for f in forms {
            b.add(
                globset::GlobBuilder::new(&f)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| Failure(format!("bad pattern `{p}`: {e}")))?,
            );
        }
    }
    b.build().map_err(|e| Failure(format!("bad patterns: {e}")))
}

pub async fn directory_tree(ctx: &Ctx, p: TreeParams) -> Outcome {
    let path = ctx.guard().existing(&p.path)?;
    if !path.is_dir() {
        return Err(not_a_folder(&p.path));
    }
    let max_entries = p.max_entries.unwrap_or(1000).clamp(1, 10_000) as usize;
    let max_depth = p.max_depth.unwrap_or(u32::MAX);
    let excludes = exclude_set(&p.exclude_patterns)?;
    // Breadth first, so a budget keeps the shallow levels whole. Slot 0 is
    // the folder itself; the others in the order they were reached.
    let mut slots = vec![Slot {
        parent: 0,
        name: String::new(),
        dir: true,
        size: 0,
        unlisted: 0,
    }];
    // (slot, the folder's exact path, its path relative to `path`, depth)
    let mut queue: VecDeque<(usize, PathBuf, String, u32)> = VecDeque::new();
    queue.push_back((0, path.clone(), String::new(), 0));
    while let Some((slot, dir, rel, depth)) = queue.pop_front() {
        let children = ctx.list(&p.path, &dir, pb::SortOrder::Name, false).await?;
        let kept: Vec<&pb::Entry> = children
            .iter()
            .filter(|e| {
                let name = crate::output::lossy(&e.name);
                let r = if rel.is_empty() {
                    name
                } else {
                    format!("{rel}/{name}")
                };
                !excludes.is_match(&r)
            })
            .collect();
        if depth >= max_depth {
            slots[slot].unlisted = kept.len() as u64;
            continue;
        }
        for e in kept {
            if slots.len() > max_entries {
                slots[slot].unlisted += 1;
                continue;
            }
            let is_dir = e.r#type == pb::EntryType::Dir as i32;
            let id = slots.len();
            slots.push(Slot {
                parent: slot,
                name: shown(&e.name),
                dir: is_dir,
                size: e.size,
                unlisted: 0,
            });
            if is_dir {
                let lossy = crate::output::lossy(&e.name);
                let r = if rel.is_empty() {
                    lossy
                } else {
                    format!("{rel}/{lossy}")
                };
                // The child's exact bytes: a name that is not UTF-8 is
                // listed like any other.
                queue.push_back((id, path_of(e.path.clone()), r, depth + 1));
            }
        }
    }
    // The first `k` slots after the folder itself, as a tree.
    fn build(slots: &[Slot], k: usize) -> (TreeNode, bool) {
        let n = (k + 1).min(slots.len());
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut more: Vec<u64> = slots[..n].iter().map(|s| s.unlisted).collect();
        for (i, s) in slots.iter().enumerate().skip(1) {
            if i < n {
                children[s.parent].push(i);
            } else if s.parent < n {
                more[s.parent] += 1;
            }
        }
        fn node(slots: &[Slot], i: usize, children: &[Vec<usize>], more: &[u64]) -> TreeNode {
            let s = &slots[i];
            TreeNode {
                name: s.name.clone(),
                node_type: if s.dir { "directory" } else { "file" }.into(),
                size: (!s.dir).then_some(s.size),
                children: s.dir.then(|| {
                    children[i]
                        .iter()
                        .map(|&c| node(slots, c, children, more))
                        .collect()
                }),
                more: more[i],
            }
        }
        let truncated = more.iter().any(|m| *m > 0);
        (node(slots, 0, &children, &more), truncated)
    }
    fn render(n: &TreeNode, level: usize, out: &mut String) {
        let pad = "  ".repeat(level);
        match &n.children {
            Some(ch) => {
                let _ = writeln!(out, "{pad}{}/", n.name);
                for c in ch {
                    render(c, level + 1, out);
                }
                if n.more > 0 {
                    let _ = writeln!(out, "{pad}  ... {} more", n.more);
                }
            }
            None => {
                let _ = writeln!(out, "{pad}{}\t{}", n.name, n.size.unwrap_or(0));
            }
        }
    }
    let sp = shown_path(&path);
    let listed = slots.len() - 1;
    let (out, text) = ctx.fit(listed, |k| {
        let (root, truncated) = build(&slots, k);
        let mut text = format!("{sp}/\n");
        for c in root.children.as_deref().unwrap_or_default() {
            render(c, 1, &mut text);
        }
        if root.more > 0 {
            let _ = writeln!(text, "  ... {} more", root.more);
        }
        let _ = write!(
            text,
            "({k} entries shown{}; type directory ends in /, type file shows its size in bytes)",
            if truncated {
                "; folders cut short say how many more they hold: narrow with path, maxDepth or excludePatterns"
            } else {
                ""
            }
        );
        (
            TreeAnswer {
                path: sp.clone(),
                entries: k as u64,
                truncated,
                tree: root.children.unwrap_or_default(),
            },
            text,
        )
    });
    reply(&out, text)
}

// ---------------------------------------------------------------- disk_usage

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DuParams {
    /// A folder under an allowed directory.
    pub path: String,
    /// How many of the largest entries to list per page (default 20; 0: as many as fit the byte budget).
    #[schemars(range(max = 100000))]
    pub top: Option<u32>,
    /// Rank entries down to this many levels below (like `du -d N`; default 1: the children).
    #[schemars(range(min = 1, max = 1000))]
    pub depth: Option<u32>,
    /// The nextCursor of the previous page.
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DuRow {
    pub path: String,
    #[serde(rename = "type")]
    pub entry_type: String,
    /// Allocated bytes, as `du -s -B1`.
    pub bytes: u64,
    /// Apparent bytes, as `du -s -b`.
    pub apparent_bytes: u64,
    pub files: u64,
    pub dirs: u64,
    /// Some folder below could not be read: the figures are a lower bound.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub incomplete: bool,
    /// A folder kept out of the index by an exclusion (caches, trash, the
    /// user's `excludes`): its figures come from a sizes-only walk made at
    /// `measuredAt`, not live, and its contents cannot be listed.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub excluded: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_at: Option<String>,
    /// Photos with a date taken anywhere beneath a folder, and the years
    /// taken ("3,120 photos 2015-2024"); absent without photos.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub photos: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DuAnswer {
    #[serde(flatten)]
    pub total: DuRow,
    /// Largest first.
    pub children: Vec<DuRow>,
    /// Entries the ranking had in all, whatever `top`, and where this page starts.
    pub children_total: u64,
    pub offset: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

fn du_row(u: &pb::Usage) -> DuRow {
    DuRow {
        path: shown(&u.path),
        entry_type: type_name(u.r#type).to_owned(),
        bytes: u.bytes,
        apparent_bytes: u.apparent_bytes,
        files: u.files,
        dirs: u.dirs,
        incomplete: u.incomplete,
        excluded: u.excluded,
        measured_at: u
            .excluded
            .then(|| rfc3339(u.measured_at.saturating_mul(1_000_000_000))),
        photos: (u.photos > 0).then(|| {
            crate::cmd::du::photos_text(u.photos, u.photos_first_year, u.photos_last_year)
        }),
    }
}

fn du_line(r: &DuRow) -> String {
    let mut s = format!(
        "{}\t{}\t{}\t{}\t{}\t{}",
        r.bytes, r.apparent_bytes, r.files, r.dirs, r.entry_type, r.path
    );
    if r.incomplete {
        s.push_str("\tincomplete");
    }
    if let Some(at) = &r.measured_at {
        let _ = write!(s, "\texcluded from the index, measured {at}");
    }
    if let Some(p) = &r.photos {
        let _ = write!(s, "\t{p}");
    }
    s
}

pub async fn disk_usage(ctx: &Ctx, p: DuParams) -> Outcome {
    let path = ctx.guard().existing(&p.path)?;
    let depth = p.depth.unwrap_or(1).max(1);
    let top = p.top.unwrap_or(20);
    let fp = ("disk_usage", path.clone(), depth);
    let pg = page(
        p.cursor.as_deref(),
        Some(u64::from(top).max(1)),
        20,
        100_000,
        &fp,
    )?;
    // The daemon ranks the largest `top`: ask for this page's end.
    let want = if top == 0 {
        0
    } else {
        (pg.offset + u64::from(top)).min(u64::from(u32::MAX)) as u32
    };
    let r = du(ctx, &p.path, &path, want, depth, true).await?;
    let total = du_row(&r.total.unwrap_or_default());
    let rows: Vec<DuRow> = r
        .children
        .iter()
        .skip(pg.offset as usize)
        .map(du_row)
        .collect();
    let children_total = r.children_total;
    let (out, text) = ctx.fit(rows.len(), |k| {
        let children = rows[..k].to_vec();
        let next = next_cursor(pg, k as u64, children_total, &fp);
        let mut text = format!(
            "{}: {} bytes allocated ({}), {} apparent bytes, {} files, {} folders{}{}\n{} (largest first)\n# bytes\tapparentBytes\tfiles\tdirs\ttype\tpath\n",
            total.path,
            total.bytes,
            size(total.bytes),
            total.apparent_bytes,
            total.files,
            total.dirs,
            total.photos.as_deref().map(|p| format!(", {p}")).unwrap_or_default(),
            if total.incomplete { " (incomplete)" } else { "" },
            showing(pg.offset, k, children_total, "entries", next.as_deref())
        );
        for c in &children {
            text.push_str(&du_line(c));
            text.push('\n');
        }
        (
            DuAnswer {
                total: total.clone(),
                children,
                children_total,
                offset: pg.offset,
                next_cursor: next,
            },
            text,
        )
    });
    reply(&out, text)
}

// ---------------------------------------------------------------- fs_map

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MapParams {
    /// A folder under an allowed directory (default: every allowed directory, the budget shared).
    pub path: Option<String>,
    /// Token budget of the text (bytes / 4; default 1024; at most what the byte budget holds).
    #[schemars(range(min = 16))]
    pub token_budget: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MapAnswer {
    pub paths: Vec<String>,
    pub token_budget: u32,
    /// Tokens of `text` (bytes / 4, rounded up); never over the budget.
    pub tokens: u32,
    /// The outline: one folder, file or group of alike names per line.
    pub text: String,
}

pub async fn fs_map(ctx: &Ctx, p: MapParams) -> Outcome {
    // The map is in the text and in the structured content: each must fit.
    let ceiling = (ctx.text_room() / 4 * 3 / 4) as u32;
    let budget = p.token_budget.unwrap_or(1024).max(16).min(ceiling);
    let guard = ctx.guard();
    let dirs = match &p.path {
        Some(raw) => vec![guard.existing(raw)?],
        None => guard.allowed().to_vec(),
    };
    if dirs.is_empty() {
        return Err(super::index::no_allowed());
    }
    // Each map gets an equal share, less the newline that joins them.
    let share = if dirs.len() == 1 {
        budget as usize
    } else {
        (budget as usize * 4 / dirs.len()).saturating_sub(1) / 4
    };
    let mut text = String::new();
    for d in &dirs {
        let bytes = path_bytes(d);
        let r = ctx
            .rpc(|mut c| {
                let path = bytes.clone();
                async move {
                    c.fs_map(pb::FsMapRequest {
                        path,
                        budget: share.max(1) as u32,
                    })
                    .await
                    .map(tonic::Response::into_inner)
                }
            })
            .await
            .map_err(|s| ctx.daemon_error(&shown_path(d), s))?;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&r.text);
    }
    let tokens = text.len().div_ceil(4) as u32;
    let paths: Vec<String> = dirs.iter().map(|d| shown_path(d)).collect();
    let mut shown_text = text.clone();
    if !shown_text.ends_with('\n') {
        shown_text.push('\n');
    }
    let _ = write!(
        shown_text,
        "({tokens} of {budget} tokens; map of {})",
        paths.join(", ")
    );
    let out = MapAnswer {
        paths,
        token_budget: budget,
        tokens,
        text,
    };
    reply(&out, shown_text)
}

// ---------------------------------------------------------------- read_text_file

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadParams {
    /// A file under an allowed directory.
    pub path: String,
    /// Only the first N lines.
    #[schemars(range(min = 1))]
    pub head: Option<u64>,
    /// Only the last N lines.
    #[schemars(range(min = 1))]
    pub tail: Option<u64>,
    /// First line to return, 1-based.
    #[schemars(range(min = 1))]
    pub start_line: Option<u64>,
    /// Last line to return, 1-based, inclusive.
    #[schemars(range(min = 1))]
    pub end_line: Option<u64>,
    /// Cap on the bytes of text returned (default and most: what fits the byte budget, about 30 KiB).
    #[schemars(range(min = 1))]
    pub max_bytes: Option<u64>,
    /// Prefix each line with its number and a tab.
    pub line_numbers: Option<bool>,
    /// Read a file flagged sensitive (WARN tier, e.g. `*password*`); without it such a file is refused.
    pub allow_sensitive: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadAnswer {
    pub path: String,
    /// The encoding the bytes were decoded from (BOM, UTF-8, or chardetng's guess); for a document, how its format stores text.
    pub encoding: String,
    /// For a document (PDF, DOCX, ODT, XLSX, PPTX, RTF, mail, ...): what it was read as; its text is what the index extracts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// A sensitive file (WARN tier), read because allowSensitive was set.
    pub sensitive: bool,
    pub content: String,
    /// Line numbers of the first and last line returned (0 when none).
    pub start_line: u64,
    pub end_line: u64,
    /// Lines in the file (absent when it is larger than the 16 MiB read window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<u64>,
    /// The answer stopped at maxBytes, the byte budget or the read window; ask again from endLine + 1.
    pub truncated: bool,
}

pub async fn read_text_file(ctx: &Ctx, p: ReadParams) -> Outcome {
    if p.head.is_some() && p.tail.is_some() {
        return Err(Failure("give head or tail, not both".into()));
    }
    let path = ctx.guard().existing(&p.path)?;
    let i = ctx.stat(&p.path, &path).await?;
    if i.r#type == pb::EntryType::Dir as i32 {
        return Err(Failure(format!("{}: a folder, not a file", p.path)));
    }
    if i.skip_tier {
        return Err(Failure(format!(
            "{}: a sensitive file (config.toml [sensitive] skip); not read",
            p.path
        )));
    }
    let allow = p.allow_sensitive.unwrap_or(false);
    if i.sensitive && !allow {
        return Err(Failure(format!(
            "{}: a sensitive file (config.toml [sensitive] warn, e.g. a password file); not read. \
             Read it only if the user asked for it: allowSensitive: true",
            p.path
        )));
    }
    // The daemon calls a file with a NUL byte binary; UTF-16 with a BOM is text.
    let utf16 = i.encoding.is_empty() && i.r#type == pb::EntryType::File as i32 && {
        let mut head = [0u8; 2];
        std::fs::File::open(&path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
            .is_ok()
            && (head == [0xff, 0xfe] || head == [0xfe, 0xff])
    };
    let not_text = || {
        let kind = if i.kind.is_empty() { "other" } else { &i.kind };
        Failure(format!(
            "{}: not a text file (kind {kind}, {}, {} bytes); not read",
            p.path,
            if i.mime.is_empty() { "binary" } else { &i.mime },
            i.size
        ))
    };
    if i.r#type != pb::EntryType::File as i32 {
        return Err(not_text());
    }
    // A document (a PDF may hold no NUL byte and pass for text), or not
    // text: its text as the daemon extracts it (from the content index, or
    // read now by its sandboxed extractor).
    let document = if i.kind == "document" || (i.encoding.is_empty() && !utf16) {
        match ctx.read_text(&path, allow, text::READ_WINDOW).await {
            Ok(t) => Some(t),
            Err(s)
                if s.code() == tonic::Code::FailedPrecondition
                    && s.message().contains("not a text file") =>
            {
                return Err(not_text());
            }
            Err(s) => return Err(ctx.daemon_error(&p.path, s)),
        }
    } else {
        None
    };
    let room = ctx.text_room();
    let mut max = p.max_bytes.map_or(room, |m| m as usize).clamp(1, room);
    let sel = Selection {
        head: p.head,
        tail: p.tail,
        start_line: p.start_line,
        end_line: p.end_line,
    };
    let numbered = p.line_numbers.unwrap_or(false);
    let size = i.size;
    let sp = shown_path(&path);
    // Text with many quotes or control characters grows in JSON: read
    // less until the structured content fits too.
    for _ in 0..4 {
        let x = match &document {
            Some(d) => {
                let complete = d.offset + d.text.len() as u64 >= d.total_bytes;
                text::select(
                    &d.text,
                    d.encoding.clone(),
                    complete,
                    false,
                    sel,
                    max,
                    numbered,
                )
            }
            None => {
                let file = path.clone();
                tokio::task::spawn_blocking(move || {
                    text::read_lines(&file, size, sel, max, numbered)
                })
                .await
                .map_err(|e| Failure(format!("internal: {e}")))?
                .map_err(|e| Failure(format!("{}: {e}", p.path)))?
            }
        };
        let mut text = x.content.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        let _ = write!(
            text,
            "[{sp}: lines {}-{}{}; {}encoding {}{}{}{}]",
            x.first_line,
            x.last_line,
            x.total_lines
                .map(|t| format!(" of {t}"))
                .unwrap_or_default(),
            document
                .as_ref()
                .map(|d| format!("{} document, extracted text; ", d.format))
                .unwrap_or_default(),
            x.encoding,
            if document.as_ref().is_some_and(|d| d.truncated) {
                "; the document holds more text than the index keeps"
            } else {
                ""
            },
            if i.sensitive {
                "; SENSITIVE (warn tier), read because allowSensitive was set"
            } else {
                ""
            },
            if x.truncated {
                format!("; truncated: continue with startLine={}", x.last_line + 1)
            } else {
                String::new()
            }
        );
        let out = ReadAnswer {
            path: sp.clone(),
            encoding: x.encoding.clone(),
            format: document.as_ref().map(|d| d.format.clone()),
            sensitive: i.sensitive,
            content: x.content,
            start_line: x.first_line,
            end_line: x.last_line,
            total_lines: x.total_lines,
            truncated: x.truncated,
        };
        let json = serde_json::to_vec(&out).map_or(0, |v| v.len());
        if json <= room + 512 || max <= 1 {
            return reply(&out, text);
        }
        max = (max * room / json).max(1);
    }
    Err(Failure(format!(
        "{}: its text does not fit the byte budget; read fewer lines (head, startLine/endLine)",
        p.path
    )))
}
