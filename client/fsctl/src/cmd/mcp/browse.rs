//! Tools that look at one place: allowed directories, file info, folder
//! listings, trees, disk usage, the map and reading a text file.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use fsindex_proto::v1 as pb;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::index::{Ctx, Failure, Outcome, next_cursor, page, reply};
use super::text::{self, Selection};
use crate::output::{lossy, path_bytes, rfc3339, size, type_name};

// ---------------------------------------------------------------- allowed

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AllowedDirectories {
    /// Absolute paths; every path given to a tool must be at or under one.
    pub directories: Vec<String>,
}

pub fn list_allowed_directories(ctx: &Ctx) -> Outcome {
    let dirs: Vec<String> = ctx
        .guard
        .allowed()
        .iter()
        .map(|d| d.to_string_lossy().into_owned())
        .collect();
    let text = format!("Allowed directories:\n{}", dirs.join("\n"));
    reply(&AllowedDirectories { directories: dirs }, text)
}

// ---------------------------------------------------------------- file info

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PathParams {
    /// A path under an allowed directory (absolute, `~/...`, or relative to an allowed directory).
    pub path: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileInfo {
    pub path: String,
    /// Bytes (st_size).
    pub size: u64,
    /// Birth time where the file system records it, RFC 3339 UTC.
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
    pub mime_type: Option<String>,
    /// Text files: the encoding detected (chardetng) and the line count.
    pub encoding: Option<String>,
    pub line_count: Option<i64>,
    /// Allocated bytes (st_blocks × 512).
    pub allocated: u64,
    /// Folders: what `du` counts below (allocated and apparent bytes, files, folders).
    pub usage: Option<UsageFigures>,
    /// A symlink's target.
    pub target: Option<String>,
    /// Matches a sensitive pattern (WARN tier: indexed and flagged).
    pub sensitive: bool,
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
    let path = ctx.guard.existing(&p.path)?;
    let i = ctx.stat(&p.path, &path).await?;
    let created = std::fs::symlink_metadata(&path)
        .and_then(|m| m.created())
        .ok()
        .and_then(|t| jiff::Timestamp::try_from(t).ok())
        .map(|t| t.to_string());
    let is_dir = i.r#type == pb::EntryType::Dir as i32;
    let info = FileInfo {
        path: lossy(&i.path),
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
        target: (!i.target.is_empty()).then(|| lossy(&i.target)),
        sensitive: i.sensitive,
    };
    let mut text = format!(
        "path: {}\nsize: {}\ncreated: {}\nmodified: {}\naccessed: {}\nisDirectory: {}\nisFile: {}\npermissions: {}\nkind: {}",
        info.path,
        info.size,
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
    if let (Some(e), Some(l)) = (&info.encoding, info.line_count) {
        let _ = write!(text, "\nencoding: {e}\nlineCount: {l}");
    }
    if let Some(u) = &info.usage {
        let _ = write!(
            text,
            "\ncontents: {} allocated, {} apparent, {} files, {} folders",
            size(u.bytes),
            size(u.apparent_bytes),
            u.files,
            u.dirs
        );
    }
    if let Some(t) = &info.target {
        let _ = write!(text, "\ntarget: {t}");
    }
    if info.sensitive {
        text.push_str("\nsensitive: true");
    }
    reply(&info, text)
}

// ---------------------------------------------------------------- list_directory

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListParams {
    /// A folder under an allowed directory.
    pub path: String,
    /// Entries per page (default 1000, at most 5000).
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
    pub entries: Vec<ListedEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListedEntry {
    pub name: String,
    /// file, dir, symlink or other.
    #[serde(rename = "type")]
    pub entry_type: String,
    pub size: u64,
    pub mtime: String,
}

async fn list(ctx: &Ctx, raw: &str, path: &Path) -> Result<Vec<pb::Entry>, Failure> {
    let mut c = ctx.client();
    Ok(c.list(pb::ListRequest {
        path: path_bytes(path),
        sort: pb::SortOrder::Name as i32,
        reverse: false,
    })
    .await
    .map_err(|s| ctx.daemon_error(raw, s))?
    .into_inner()
    .entries)
}

fn not_a_folder(raw: &str) -> Failure {
    Failure(format!("{raw}: not a folder"))
}

pub async fn list_directory(ctx: &Ctx, p: ListParams) -> Outcome {
    let path = ctx.guard.existing(&p.path)?;
    if !path.is_dir() {
        return Err(not_a_folder(&p.path));
    }
    let fp = ("list_directory", path.clone());
    let pg = page(p.cursor.as_deref(), p.limit, 1000, 5000, &fp)?;
    let all = list(ctx, &p.path, &path).await?;
    let total = all.len() as u64;
    let entries: Vec<ListedEntry> = all
        .iter()
        .skip(pg.offset as usize)
        .take(pg.limit as usize)
        .map(|e| ListedEntry {
            name: lossy(&e.name),
            entry_type: type_name(e.r#type).to_owned(),
            size: e.size,
            mtime: rfc3339(e.mtime_ns),
        })
        .collect();
    let next = next_cursor(pg, entries.len() as u64, total, &fp);
    let mut text = String::new();
    for e in &entries {
        let tag = if e.entry_type == "dir" {
            "[DIR]"
        } else {
            "[FILE]"
        };
        let _ = writeln!(text, "{tag} {}", e.name);
    }
    if let Some(c) = &next {
        let _ = writeln!(
            text,
            "({} of {total} shown; more with cursor \"{c}\")",
            entries.len()
        );
    }
    reply(
        &Listing {
            path: path.to_string_lossy().into_owned(),
            total,
            entries,
            next_cursor: next,
        },
        text,
    )
}

// ---------------------------------------------------------------- with sizes

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum NameOrSize {
    #[default]
    Name,
    Size,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SizesParams {
    /// A folder under an allowed directory.
    pub path: String,
    /// "name" (default) or "size" (largest first).
    pub sort_by: Option<NameOrSize>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SizedListing {
    pub path: String,
    pub entries: Vec<SizedEntry>,
    /// Files and folders directly in the folder.
    pub files: u64,
    pub directories: u64,
    /// Apparent bytes of everything below (as `du -s -b`), and allocated (as `du -s -B1`).
    pub total_apparent_bytes: u64,
    pub total_bytes: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SizedEntry {
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
    let path = ctx.guard.existing(&p.path)?;
    if !path.is_dir() {
        return Err(not_a_folder(&p.path));
    }
    let r = du(ctx, &p.path, &path, 0, 1).await?;
    let mut entries: Vec<SizedEntry> = r
        .children
        .iter()
        .map(|u| {
            let dir = u.r#type == pb::EntryType::Dir as i32;
            SizedEntry {
                name: lossy(u.path.rsplit(|&b| b == b'/').next().unwrap_or(&u.path)),
                entry_type: type_name(u.r#type).to_owned(),
                size: u.apparent_bytes,
                allocated: u.bytes,
                files: dir.then_some(u.files),
                dirs: dir.then_some(u.dirs.saturating_sub(1)),
            }
        })
        .collect();
    match p.sort_by.unwrap_or_default() {
        NameOrSize::Name => entries.sort_by(|a, b| a.name.cmp(&b.name)),
        NameOrSize::Size => entries.sort_by(|a, b| b.size.cmp(&a.size).then(a.name.cmp(&b.name))),
    }
    let directories = entries.iter().filter(|e| e.entry_type == "dir").count() as u64;
    let total = r.total.unwrap_or_default();
    let out = SizedListing {
        path: path.to_string_lossy().into_owned(),
        files: entries.len() as u64 - directories,
        directories,
        total_apparent_bytes: total.apparent_bytes,
        total_bytes: total.bytes,
        entries,
    };
    let mut text = String::new();
    for e in &out.entries {
        let tag = if e.entry_type == "dir" {
            "[DIR]"
        } else {
            "[FILE]"
        };
        let _ = writeln!(text, "{tag} {:<30} {:>10}", e.name, size(e.size));
    }
    let _ = write!(
        text,
        "\nTotal: {} files, {} directories\nCombined size: {} ({} allocated)",
        out.files,
        out.directories,
        size(out.total_apparent_bytes),
        size(out.total_bytes)
    );
    reply(&out, text)
}

async fn du(
    ctx: &Ctx,
    raw: &str,
    path: &Path,
    top: u32,
    depth: u32,
) -> Result<pb::DiskUsageResponse, Failure> {
    let mut c = ctx.client();
    c.disk_usage(pb::DiskUsageRequest {
        path: path_bytes(path),
        top,
        apparent: false,
        sync: false,
        depth,
        all: false,
        files_only: false,
        dirs_only: false,
    })
    .await
    .map(tonic::Response::into_inner)
    .map_err(|s| ctx.daemon_error(raw, s))
}

// ---------------------------------------------------------------- directory_tree

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TreeParams {
    /// A folder under an allowed directory.
    pub path: String,
    /// Levels below the folder to show (default: all, within maxEntries).
    pub max_depth: Option<u32>,
    /// Entries to show at most, shallowest first (default 1000, at most 10000).
    pub max_entries: Option<u64>,
    /// Globs on the path relative to `path` (as the reference server: `node_modules`, `*.log`, `build/**`).
    #[serde(default)]
    pub exclude_patterns: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TreeNode {
    pub name: String,
    /// "file" or "directory" (the reference server's words).
    #[serde(rename = "type")]
    pub node_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Folders: the children shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<TreeNode>>,
    /// Folders: children left out (beyond maxDepth or maxEntries).
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
    name: String,
    dir: bool,
    size: u64,
    children: Vec<usize>,
    more: u64,
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
    let path = ctx.guard.existing(&p.path)?;
    if !path.is_dir() {
        return Err(not_a_folder(&p.path));
    }
    let max_entries = p.max_entries.unwrap_or(1000).clamp(1, 10_000);
    let max_depth = p.max_depth.unwrap_or(u32::MAX);
    let excludes = exclude_set(&p.exclude_patterns)?;
    // Breadth first, so a budget keeps the shallow levels whole.
    let mut slots = vec![Slot {
        name: String::new(),
        dir: true,
        size: 0,
        children: Vec::new(),
        more: 0,
    }];
    let mut queue: VecDeque<(usize, PathBuf, String, u32)> = VecDeque::new();
    queue.push_back((0, path.clone(), String::new(), 0));
    let mut shown = 0u64;
    let mut truncated = false;
    while let Some((slot, dir, rel, depth)) = queue.pop_front() {
        let children = list(ctx, &p.path, &dir).await?;
        let kept: Vec<&pb::Entry> = children
            .iter()
            .filter(|e| {
                let r = if rel.is_empty() {
                    lossy(&e.name)
                } else {
                    format!("{rel}/{}", lossy(&e.name))
                };
                !excludes.is_match(&r)
            })
            .collect();
        if depth >= max_depth {
            slots[slot].more = kept.len() as u64;
            truncated |= !kept.is_empty();
            continue;
        }
        for e in kept {
            if shown >= max_entries {
                slots[slot].more += 1;
                truncated = true;
                continue;
            }
            shown += 1;
            let name = lossy(&e.name);
            let is_dir = e.r#type == pb::EntryType::Dir as i32;
            let id = slots.len();
            slots.push(Slot {
                name: name.clone(),
                dir: is_dir,
                size: e.size,
                children: Vec::new(),
                more: 0,
            });
            slots[slot].children.push(id);
            if is_dir {
                let r = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                queue.push_back((id, dir.join(&name), r, depth + 1));
            }
        }
    }
    fn build(slots: &[Slot], i: usize) -> TreeNode {
        let s = &slots[i];
        TreeNode {
            name: s.name.clone(),
            node_type: if s.dir { "directory" } else { "file" }.into(),
            size: (!s.dir).then_some(s.size),
            children: s
                .dir
                .then(|| s.children.iter().map(|&c| build(slots, c)).collect()),
            more: s.more,
        }
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
                let _ = writeln!(out, "{pad}{}", n.name);
            }
        }
    }
    let root = build(&slots, 0);
    let mut text = format!("{}/\n", path.to_string_lossy());
    for c in root.children.as_deref().unwrap_or_default() {
        render(c, 1, &mut text);
    }
    if root.more > 0 {
        let _ = writeln!(text, "  ... {} more", root.more);
    }
    reply(
        &TreeAnswer {
            path: path.to_string_lossy().into_owned(),
            entries: shown,
            truncated,
            tree: root.children.unwrap_or_default(),
        },
        text,
    )
}

// ---------------------------------------------------------------- disk_usage

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DuParams {
    /// A folder under an allowed directory.
    pub path: String,
    /// How many of the largest entries to list (default 20, 0: all).
    pub top: Option<u32>,
    /// Rank entries down to this many levels below (like `du -d N`; default 1: the children).
    pub depth: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
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
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DuAnswer {
    #[serde(flatten)]
    pub total: DuRow,
    /// Largest first.
    pub children: Vec<DuRow>,
    /// Entries the ranking had in all, whatever `top`.
    pub children_total: u64,
}

fn du_row(u: &pb::Usage) -> DuRow {
    DuRow {
        path: lossy(&u.path),
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
    }
}

pub async fn disk_usage(ctx: &Ctx, p: DuParams) -> Outcome {
    let path = ctx.guard.existing(&p.path)?;
    let r = du(
        ctx,
        &p.path,
        &path,
        p.top.unwrap_or(20),
        p.depth.unwrap_or(1).max(1),
    )
    .await?;
    let total = du_row(&r.total.unwrap_or_default());
    let children: Vec<DuRow> = r.children.iter().map(du_row).collect();
    let mut text = format!(
        "{}: {} allocated, {} apparent, {} files, {} folders{}\n",
        total.path,
        size(total.bytes),
        size(total.apparent_bytes),
        total.files,
        total.dirs,
        if total.incomplete {
            " (incomplete)"
        } else {
            ""
        }
    );
    for c in &children {
        let _ = writeln!(
            text,
            "{:>10}  {}{}{}",
            size(c.bytes),
            super::index::relative(&c.path, &path),
            if c.entry_type == "dir" { "/" } else { "" },
            match &c.measured_at {
                Some(at) => format!(" (excluded from the index; size measured {at})"),
                None => String::new(),
            }
        );
    }
    if (children.len() as u64) < r.children_total {
        let _ = writeln!(text, "({} more)", r.children_total - children.len() as u64);
    }
    reply(
        &DuAnswer {
            total,
            children,
            children_total: r.children_total,
        },
        text,
    )
}

// ---------------------------------------------------------------- fs_map

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MapParams {
    /// A folder under an allowed directory (default: every allowed directory, the budget shared).
    pub path: Option<String>,
    /// Token budget of the text (bytes / 4; default 1024, at least 16).
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
    let budget = p.token_budget.unwrap_or(1024).max(16);
    let dirs = match &p.path {
        Some(raw) => vec![ctx.guard.existing(raw)?],
        None => ctx.guard.allowed().to_vec(),
    };
    // Each map gets an equal share, less the newline that joins them.
    let share = if dirs.len() == 1 {
        budget as usize
    } else {
        (budget as usize * 4 / dirs.len()).saturating_sub(1) / 4
    };
    let mut text = String::new();
    for d in &dirs {
        let mut c = ctx.client();
        let r = c
            .fs_map(pb::FsMapRequest {
                path: path_bytes(d),
                budget: share.max(1) as u32,
            })
            .await
            .map_err(|s| ctx.daemon_error(&d.to_string_lossy(), s))?
            .into_inner();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&r.text);
    }
    let tokens = text.len().div_ceil(4) as u32;
    let out = MapAnswer {
        paths: dirs
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .collect(),
        token_budget: budget,
        tokens,
        text: text.clone(),
    };
    reply(&out, text)
}

// ---------------------------------------------------------------- read_text_file

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadParams {
    /// A file under an allowed directory.
    pub path: String,
    /// Only the first N lines.
    pub head: Option<u64>,
    /// Only the last N lines.
    pub tail: Option<u64>,
    /// First line to return, 1-based.
    pub start_line: Option<u64>,
    /// Last line to return, 1-based, inclusive.
    pub end_line: Option<u64>,
    /// Cap on the bytes of text returned (default 262144, at most 1048576).
    pub max_bytes: Option<u64>,
    /// Prefix each line with its number and a tab.
    pub line_numbers: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadAnswer {
    pub path: String,
    /// The encoding the bytes were decoded from (BOM, UTF-8, or chardetng's guess).
    pub encoding: String,
    pub content: String,
    /// Line numbers of the first and last line returned (0 when none).
    pub start_line: u64,
    pub end_line: u64,
    /// Lines in the file (absent when it is larger than the 16 MiB read window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<u64>,
    /// The answer stopped at maxBytes (or the read window); ask again from endLine + 1.
    pub truncated: bool,
}

pub async fn read_text_file(ctx: &Ctx, p: ReadParams) -> Outcome {
    if p.head.is_some() && p.tail.is_some() {
        return Err(Failure("give head or tail, not both".into()));
    }
    let path = ctx.guard.existing(&p.path)?;
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
    // The daemon calls a file with a NUL byte binary; UTF-16 with a BOM is text.
    let utf16 = i.encoding.is_empty() && i.r#type == pb::EntryType::File as i32 && {
        let mut head = [0u8; 2];
        std::fs::File::open(&path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
            .is_ok()
            && (head == [0xff, 0xfe] || head == [0xfe, 0xff])
    };
    if i.r#type != pb::EntryType::File as i32 || (i.encoding.is_empty() && !utf16) {
        let kind = if i.kind.is_empty() { "other" } else { &i.kind };
        return Err(Failure(format!(
            "{}: not a text file (kind {kind}, {}, {} bytes); not read",
            p.path,
            if i.mime.is_empty() { "binary" } else { &i.mime },
            i.size
        )));
    }
    let max = p
        .max_bytes
        .map_or(text::DEFAULT_MAX_BYTES, |m| m as usize)
        .clamp(1, text::MAX_BYTES_CEILING);
    let sel = Selection {
        head: p.head,
        tail: p.tail,
        start_line: p.start_line,
        end_line: p.end_line,
    };
    let numbered = p.line_numbers.unwrap_or(false);
    let size = i.size;
    let file = path.clone();
    let x = tokio::task::spawn_blocking(move || text::read_lines(&file, size, sel, max, numbered))
        .await
        .map_err(|e| Failure(format!("internal: {e}")))?
        .map_err(|e| Failure(format!("{}: {e}", p.path)))?;
    let mut text = x.content.clone();
    if x.truncated {
        let _ = write!(
            text,
            "\n[truncated after line {}; continue with startLine={}]",
            x.last_line,
            x.last_line + 1
        );
    }
    reply(
        &ReadAnswer {
            path: path.to_string_lossy().into_owned(),
            encoding: x.encoding.to_owned(),
            content: x.content,
            start_line: x.first_line,
            end_line: x.last_line,
            total_lines: x.total_lines,
            truncated: x.truncated,
        },
        text,
    )
}
