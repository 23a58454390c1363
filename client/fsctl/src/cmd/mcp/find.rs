//! Tools that search the index: by query and fields, by glob, counts per
//! group, recent changes, a folder's manifest, duplicates, and content.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fsindex_proto::v1 as pb;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::content::{self, ContentMatch};
use super::index::{Ctx, Failure, FoundEntry, Outcome, next_cursor, page, relative, reply};
use crate::output::{lossy, rfc3339, size};

// ---------------------------------------------------------------- find_files

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, Hash)]
#[serde(rename_all = "camelCase")]
pub enum SortBy {
    Relevance,
    Name,
    Path,
    Size,
    Mtime,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, Hash)]
#[serde(rename_all = "camelCase")]
pub enum EntryKind {
    /// Anything but a folder.
    File,
    Directory,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindParams {
    /// The index's query language: terms all of which must match the path
    /// (case-insensitive substrings), "phrases", a|b, !not, wildcards
    /// (*.pdf), ext:pdf;docx, size:>10mb, dm:2025 / dm:thisweek /
    /// dm:2025-01..2025-03, kind:document|image|audio|video|archive|code|text|folder,
    /// in:FOLDER, path:Taxes/2025, regex:^IMG_\d+\.jpg$, case:README,
    /// content:invoice / content:"total due" (what files say, PDF and Office
    /// included, in folders with content search on).
    pub query: Option<String>,
    /// Only under this folder (default: every allowed directory).
    pub path: Option<String>,
    /// A glob on the name, e.g. "*.tar.gz" or "IMG_????.jpg".
    pub pattern: Option<String>,
    /// "file" (anything but folders) or "directory".
    #[serde(rename = "type")]
    pub entry_type: Option<EntryKind>,
    /// Extensions without the dot, e.g. ["pdf", "docx"].
    #[serde(default)]
    pub extensions: Vec<String>,
    /// Size bounds in bytes, inclusive.
    pub min_size: Option<u64>,
    pub max_size: Option<u64>,
    /// Modified on or after / before this day (YYYY-MM-DD, local time; also YYYY or YYYY-MM).
    pub modified_after: Option<String>,
    pub modified_before: Option<String>,
    /// relevance (default), name, path, size (largest first), mtime (newest first).
    pub sort_by: Option<SortBy>,
    /// Results per page (default 100, at most 1000).
    pub limit: Option<u64>,
    /// The nextCursor of the previous page.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FoundPage {
    /// The query the index ran.
    pub query: String,
    /// Matches in all.
    pub total: u64,
    /// Position of the first result of this page.
    pub offset: u64,
    pub results: Vec<FoundEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

fn sort_order(s: Option<SortBy>) -> pb::SortOrder {
    match s.unwrap_or(SortBy::Relevance) {
        SortBy::Relevance => pb::SortOrder::Relevance,
        SortBy::Name => pb::SortOrder::Name,
        SortBy::Path => pb::SortOrder::Path,
        SortBy::Size => pb::SortOrder::Size,
        SortBy::Mtime => pb::SortOrder::Mtime,
    }
}

/// A value spliced into a query must stay one word.
fn word(v: &str, what: &str) -> Result<String, Failure> {
    if v.is_empty() || v.contains(char::is_whitespace) || v.contains('"') {
        return Err(Failure(format!(
            "{what} `{v}`: give one word without spaces or quotes"
        )));
    }
    Ok(v.to_owned())
}

fn find_query(ctx: &Ctx, p: &FindParams) -> Result<String, Failure> {
    let scope = match &p.path {
        Some(raw) => ctx.scope(Some(&ctx.guard.existing(raw)?))?,
        None => ctx.scope(None)?,
    };
    let mut parts = vec![scope];
    if let Some(q) = p.query.as_deref().filter(|q| !q.trim().is_empty()) {
        parts.push(ctx.guard_query(q.trim())?);
    }
    if let Some(pat) = &p.pattern {
        parts.push(word(pat, "pattern")?);
    }
    match p.entry_type {
        Some(EntryKind::File) => parts.push("!kind:folder".into()),
        Some(EntryKind::Directory) => parts.push("kind:folder".into()),
        None => {}
    }
    if !p.extensions.is_empty() {
        let exts: Vec<String> = p
            .extensions
            .iter()
            .map(|e| word(e.trim_start_matches('.'), "extension"))
            .collect::<Result<_, _>>()?;
        parts.push(format!("ext:{}", exts.join(";")));
    }
    match (p.min_size, p.max_size) {
        (Some(a), Some(b)) => parts.push(format!("size:{a}..{b}")),
        (Some(a), None) => parts.push(format!("size:>={a}")),
        (None, Some(b)) => parts.push(format!("size:<={b}")),
        (None, None) => {}
    }
    if let Some(d) = &p.modified_after {
        parts.push(format!("dm:>={}", word(d, "modifiedAfter")?));
    }
    if let Some(d) = &p.modified_before {
        parts.push(format!("dm:<{}", word(d, "modifiedBefore")?));
    }
    Ok(parts.join(" "))
}

pub async fn find_files(ctx: &Ctx, p: FindParams) -> Outcome {
    let query = find_query(ctx, &p)?;
    let sort = sort_order(p.sort_by);
    let fp = ("find_files", query.clone(), sort as i32);
    let pg = page(p.cursor.as_deref(), p.limit, 100, 1000, &fp)?;
    let (total, entries) = ctx.search(query.clone(), sort, pg.offset, pg.limit).await?;
    let results: Vec<FoundEntry> = entries.iter().map(FoundEntry::from_pb).collect();
    let next = next_cursor(pg, results.len() as u64, total, &fp);
    let mut text = format!(
        "{} of {total} matches{}\n",
        results.len(),
        if pg.offset > 0 {
            format!(" (from {})", pg.offset + 1)
        } else {
            String::new()
        }
    );
    for r in &results {
        text.push_str(&r.path);
        text.push('\n');
    }
    if let Some(c) = &next {
        let _ = writeln!(text, "(more with cursor \"{c}\")");
    }
    reply(
        &FoundPage {
            query,
            total,
            offset: pg.offset,
            results,
            next_cursor: next,
        },
        text,
    )
}

// ---------------------------------------------------------------- search_files

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobParams {
    /// The folder to search under.
    pub path: String,
    /// A glob on the path relative to `path`: "*.ext" matches in the folder
    /// itself, "**/*.ext" at any depth; {a,b} and [abc] work.
    pub pattern: String,
    /// Globs on the relative path to leave out.
    #[serde(default)]
    pub exclude_patterns: Vec<String>,
    /// Results per page (default 1000, at most 5000).
    pub limit: Option<u64>,
    /// The nextCursor of the previous page.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobPage {
    pub total: u64,
    pub offset: u64,
    /// Full paths, sorted.
    pub paths: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

fn glob(p: &str) -> Result<globset::GlobMatcher, Failure> {
    Ok(globset::GlobBuilder::new(p)
        .literal_separator(true)
        .build()
        .map_err(|e| Failure(format!("bad pattern `{p}`: {e}")))?
        .compile_matcher())
}

pub async fn search_files(ctx: &Ctx, p: GlobParams) -> Outcome {
    let base = ctx.guard.existing(&p.path)?;
    let matcher = glob(&p.pattern)?;
    let mut excludes = globset::GlobSetBuilder::new();
    for e in &p.exclude_patterns {
        excludes.add(
            globset::GlobBuilder::new(e)
                .literal_separator(true)
                .build()
                .map_err(|err| Failure(format!("bad pattern `{e}`: {err}")))?,
        );
    }
    let excludes = excludes
        .build()
        .map_err(|e| Failure(format!("bad patterns: {e}")))?;
    // The index narrows by the last component when it is a plain name glob.
    let last = p.pattern.rsplit('/').next().unwrap_or("");
    let mut query = ctx.scope(Some(&base))?;
    if !last.is_empty()
        && !last.contains("**")
        && !last.contains(['{', '[', '"', '|', ':', '\\'])
        && !last.starts_with('!')
        && !last.contains(char::is_whitespace)
    {
        query.push(' ');
        query.push_str(last);
    }
    let fp = (
        "search_files",
        query.clone(),
        p.pattern.clone(),
        p.exclude_patterns.clone(),
    );
    let pg = page(p.cursor.as_deref(), p.limit, 1000, 5000, &fp)?;
    let (_, entries) = ctx.search(query, pb::SortOrder::Path, 0, 0).await?;
    let mut all: Vec<String> = entries
        .iter()
        .filter_map(|e| {
            let full = lossy(&e.path);
            let rel = relative(&full, &base);
            (rel != full && matcher.is_match(&rel) && !excludes.is_match(&rel)).then_some(full)
        })
        .collect();
    all.sort();
    let total = all.len() as u64;
    let paths: Vec<String> = all
        .into_iter()
        .skip(pg.offset as usize)
        .take(pg.limit as usize)
        .collect();
    let next = next_cursor(pg, paths.len() as u64, total, &fp);
    let mut text = if paths.is_empty() {
        "No matches found\n".to_owned()
    } else {
        paths.join("\n") + "\n"
    };
    if let Some(c) = &next {
        let _ = writeln!(
            text,
            "({} of {total} shown; more with cursor \"{c}\")",
            paths.len()
        );
    }
    reply(
        &GlobPage {
            total,
            offset: pg.offset,
            paths,
            next_cursor: next,
        },
        text,
    )
}

// ---------------------------------------------------------------- count_files

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum GroupBy {
    Extension,
    Kind,
    Folder,
    Year,
    Month,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CountParams {
    /// The index's query language (see find_files), e.g. "ext:pdf" or "kind:image dm:2024".
    pub query: Option<String>,
    /// Only under this folder (default: every allowed directory).
    pub path: Option<String>,
    /// extension, kind, folder (the first folder below `path`), year or month (of modification, UTC).
    pub group_by: Option<GroupBy>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CountAnswer {
    pub query: String,
    /// Files (anything but folders) matching, and their bytes (st_size).
    pub files: u64,
    pub bytes: u64,
    /// Largest count first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<CountGroup>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CountGroup {
    pub key: String,
    pub files: u64,
    pub bytes: u64,
}

const MAX_GROUPS: usize = 500;

pub async fn count_files(ctx: &Ctx, p: CountParams) -> Outcome {
    let base = ctx.guard.existing_opt(p.path.as_deref())?;
    let mut query = format!("{} !kind:folder", ctx.scope(base.as_deref())?);
    if let Some(q) = p.query.as_deref().filter(|q| !q.trim().is_empty()) {
        query.push(' ');
        query.push_str(&ctx.guard_query(q.trim())?);
    }
    let (_, entries) = ctx.search(query.clone(), pb::SortOrder::Path, 0, 0).await?;
    let mut files = 0;
    let mut bytes = 0;
    let mut groups: HashMap<String, (u64, u64)> = HashMap::new();
    let bases: Vec<PathBuf> = match &base {
        Some(b) => vec![b.clone()],
        None => ctx.guard.allowed().to_vec(),
    };
    for e in &entries {
        files += 1;
        bytes += e.size;
        let Some(g) = p.group_by else { continue };
        let key = match g {
            GroupBy::Extension => {
                let name = lossy(&e.name).to_lowercase();
                match name.rsplit_once('.') {
                    Some((stem, ext)) if !stem.is_empty() => ext.to_owned(),
                    _ => "(none)".to_owned(),
                }
            }
            GroupBy::Kind => ctx.kind(&e.path, &lossy(&e.name)).await,
            GroupBy::Folder => {
                let full = lossy(&e.path);
                let base = bases
                    .iter()
                    .find(|b| Path::new(&full).starts_with(b))
                    .cloned()
                    .unwrap_or_default();
                let rel = relative(&full, &base);
                match rel.split_once('/') {
                    Some((top, _)) => format!("{top}/"),
                    None => "(files directly in the folder)".to_owned(),
                }
            }
            GroupBy::Year => rfc3339(e.mtime_ns).get(..4).unwrap_or("").to_owned(),
            GroupBy::Month => rfc3339(e.mtime_ns).get(..7).unwrap_or("").to_owned(),
        };
        let slot = groups.entry(key).or_default();
        slot.0 += 1;
        slot.1 += e.size;
    }
    let mut groups: Vec<CountGroup> = groups
        .into_iter()
        .map(|(key, (files, bytes))| CountGroup { key, files, bytes })
        .collect();
    let by_time = matches!(p.group_by, Some(GroupBy::Year | GroupBy::Month));
    groups.sort_by(|a, b| {
        if by_time {
            b.key.cmp(&a.key)
        } else {
            b.files.cmp(&a.files).then(a.key.cmp(&b.key))
        }
    });
    if groups.len() > MAX_GROUPS {
        let rest = groups.split_off(MAX_GROUPS - 1);
        groups.push(CountGroup {
            key: format!("({} more groups)", rest.len()),
            files: rest.iter().map(|g| g.files).sum(),
            bytes: rest.iter().map(|g| g.bytes).sum(),
        });
    }
    let mut text = format!("{files} files, {}\n", size(bytes));
    for g in &groups {
        let _ = writeln!(text, "{:>8}  {:>10}  {}", g.files, size(g.bytes), g.key);
    }
    reply(
        &CountAnswer {
            query,
            files,
            bytes,
            groups,
        },
        text,
    )
}

// ---------------------------------------------------------------- recent_files

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecentParams {
    /// Only under this folder (default: every allowed directory).
    pub path: Option<String>,
    /// Only files modified at or after this: RFC 3339 ("2025-06-01T12:00:00Z"),
    /// a day ("2025-06-01", UTC), or an age ("30m", "24h", "7d").
    pub since: Option<String>,
    /// At most this many (default 50, at most 1000).
    pub limit: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecentAnswer {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Newest first; folders are left out (their times change with any file made or removed in them).
    pub results: Vec<FoundEntry>,
}

/// `since` as nanoseconds since the epoch.
pub fn parse_since(s: &str, now: jiff::Timestamp) -> Result<i64, Failure> {
    let bad = || {
        Failure(format!(
            "since `{s}`: give RFC 3339 (2025-06-01T12:00:00Z), a day (2025-06-01) or an age (30m, 24h, 7d)"
        ))
    };
    let s = s.trim();
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Ok(t.as_nanosecond() as i64);
    }
    if let Ok(d) = s.parse::<jiff::civil::Date>() {
        let z = d.to_zoned(jiff::tz::TimeZone::UTC).map_err(|_| bad())?;
        return Ok(z.timestamp().as_nanosecond() as i64);
    }
    let unit = s.chars().last().ok_or_else(bad)?;
    let n: i64 = s[..s.len() - unit.len_utf8()].parse().map_err(|_| bad())?;
    let secs = match unit {
        's' => n,
        'm' => n * 60,
        'h' => n * 3600,
        'd' => n * 86_400,
        'w' => n * 7 * 86_400,
        _ => return Err(bad()),
    };
    Ok(now.as_nanosecond() as i64 - secs * 1_000_000_000)
}

pub async fn recent_files(ctx: &Ctx, p: RecentParams) -> Outcome {
    let base = ctx.guard.existing_opt(p.path.as_deref())?;
    let since = p
        .since
        .as_deref()
        .map(|s| parse_since(s, jiff::Timestamp::now()))
        .transpose()?;
    let limit = p.limit.unwrap_or(50).clamp(1, 1000);
    let query = format!("{} !kind:folder", ctx.scope(base.as_deref())?);
    // Newest first, so the ones since `since` are a prefix.
    let (_, entries) = ctx.search(query, pb::SortOrder::Mtime, 0, limit).await?;
    let results: Vec<FoundEntry> = entries
        .iter()
        .filter(|e| since.is_none_or(|s| e.mtime_ns >= s))
        .map(FoundEntry::from_pb)
        .collect();
    let mut text = String::new();
    for r in &results {
        let _ = writeln!(text, "{}  {}", r.mtime, r.path);
    }
    if results.is_empty() {
        text.push_str("Nothing modified in that span\n");
    }
    reply(
        &RecentAnswer {
            since: since.map(rfc3339),
            results,
        },
        text,
    )
}

// ---------------------------------------------------------------- folder_manifest

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestParams {
    /// A project folder under an allowed directory.
    pub path: String,
    /// Files per page (default 500, at most 5000).
    pub limit: Option<u64>,
    /// The nextCursor of the previous page.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestAnswer {
    pub path: String,
    /// Files in all (folders are implied by the paths).
    pub total: u64,
    pub offset: u64,
    pub files: Vec<ManifestLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestLine {
    pub relative_path: String,
    /// document, image, audio, video, archive, code, text or other.
    pub kind: String,
    pub size: u64,
    pub mtime: String,
}

pub async fn folder_manifest(ctx: &Ctx, p: ManifestParams) -> Outcome {
    let base = ctx.guard.existing(&p.path)?;
    let query = format!("{} !kind:folder", ctx.scope(Some(&base))?);
    let fp = ("folder_manifest", query.clone());
    let pg = page(p.cursor.as_deref(), p.limit, 500, 5000, &fp)?;
    let (total, entries) = ctx
        .search(query, pb::SortOrder::Path, pg.offset, pg.limit)
        .await?;
    let mut files = Vec::with_capacity(entries.len());
    for e in &entries {
        files.push(ManifestLine {
            relative_path: relative(&lossy(&e.path), &base),
            kind: ctx.kind(&e.path, &lossy(&e.name)).await,
            size: e.size,
            mtime: rfc3339(e.mtime_ns),
        });
    }
    let next = next_cursor(pg, files.len() as u64, total, &fp);
    let mut text = format!(
        "# {} ({} files{})\n# relativePath\tkind\tsize\tmtime\n",
        base.to_string_lossy(),
        total,
        if pg.offset > 0 {
            format!(", from {}", pg.offset + 1)
        } else {
            String::new()
        }
    );
    for f in &files {
        let _ = writeln!(
            text,
            "{}\t{}\t{}\t{}",
            f.relative_path, f.kind, f.size, f.mtime
        );
    }
    if let Some(c) = &next {
        let _ = writeln!(text, "# more with cursor \"{c}\"");
    }
    reply(
        &ManifestAnswer {
            path: base.to_string_lossy().into_owned(),
            total,
            offset: pg.offset,
            files,
            next_cursor: next,
        },
        text,
    )
}

// ---------------------------------------------------------------- find_duplicates

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DupesParams {
    /// Only under this folder (default: every allowed directory).
    pub path: Option<String>,
    /// Smallest file size considered, in bytes (default 1: empty files are left out).
    pub min_size: Option<u64>,
    /// Groups per page, largest reclaimable first (default 50, at most 1000).
    pub limit: Option<u64>,
    /// The nextCursor of the previous page.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DupesAnswer {
    /// Groups in all, and the bytes their extra copies take (size × (copies − 1)).
    pub groups_total: u64,
    pub reclaimable_bytes: u64,
    pub offset: u64,
    pub groups: Vec<DupeGroup>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DupeGroup {
    /// Bytes of each copy.
    pub size: u64,
    /// BLAKE3 of the content, hex.
    pub hash: String,
    /// One list of paths per copy (hard links to one inode are one copy).
    pub copies: Vec<Vec<String>>,
    pub reclaimable_bytes: u64,
}

pub async fn find_duplicates(ctx: &Ctx, p: DupesParams) -> Outcome {
    let base = ctx.guard.existing_opt(p.path.as_deref())?;
    let fp = ("find_duplicates", base.clone(), p.min_size);
    let pg = page(p.cursor.as_deref(), p.limit, 50, 1000, &fp)?;
    // With no path, every root is searched and copies outside the allowed
    // directories are dropped (so pairs across two of them are found).
    let mut c = ctx.client();
    let mut stream = c
        .duplicates(pb::DuplicatesRequest {
            path: base
                .as_deref()
                .map(crate::output::path_bytes)
                .unwrap_or_default(),
            min_size: p.min_size.unwrap_or(1).max(1),
            include_empty: false,
        })
        .await
        .map_err(|s| ctx.daemon_error(p.path.as_deref().unwrap_or(""), s))?
        .into_inner();
    let mut groups = Vec::new();
    while let Some(m) = stream
        .message()
        .await
        .map_err(|s| ctx.daemon_error(p.path.as_deref().unwrap_or(""), s))?
    {
        let Some(pb::duplicates_response::Item::Group(g)) = m.item else {
            continue;
        };
        let copies: Vec<Vec<String>> = g
            .copies
            .iter()
            .map(|c| {
                c.paths
                    .iter()
                    .map(|p| lossy(p))
                    .filter(|p| ctx.guard.inside(Path::new(p)))
                    .collect::<Vec<_>>()
            })
            .filter(|c| !c.is_empty())
            .collect();
        if copies.len() < 2 {
            continue;
        }
        groups.push(DupeGroup {
            size: g.size,
            hash: g.hash.iter().map(|b| format!("{b:02x}")).collect(),
            reclaimable_bytes: g.size * (copies.len() as u64 - 1),
            copies,
        });
    }
    groups.sort_by(|a, b| {
        b.reclaimable_bytes
            .cmp(&a.reclaimable_bytes)
            .then(a.copies.cmp(&b.copies))
    });
    let groups_total = groups.len() as u64;
    let reclaimable_bytes = groups.iter().map(|g| g.reclaimable_bytes).sum();
    let shown: Vec<DupeGroup> = groups
        .into_iter()
        .skip(pg.offset as usize)
        .take(pg.limit as usize)
        .collect();
    let next = next_cursor(pg, shown.len() as u64, groups_total, &fp);
    let mut text = format!(
        "{groups_total} groups of identical files, {} reclaimable\n",
        size(reclaimable_bytes)
    );
    for g in &shown {
        let firsts: Vec<&str> = g.copies.iter().map(|c| c[0].as_str()).collect();
        let _ = writeln!(
            text,
            "{} x {}: {}",
            g.copies.len(),
            size(g.size),
            firsts.join(" | ")
        );
    }
    if let Some(c) = &next {
        let _ = writeln!(text, "(more with cursor \"{c}\")");
    }
    reply(
        &DupesAnswer {
            groups_total,
            reclaimable_bytes,
            offset: pg.offset,
            groups: shown,
            next_cursor: next,
        },
        text,
    )
}

// ---------------------------------------------------------------- search_file_content

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContentParams {
    /// A regular expression (Rust regex syntax), or literal text with literal: true.
    pub pattern: String,
    /// Only under this folder (default: every allowed directory).
    pub path: Option<String>,
    /// Take the pattern as plain text.
    pub literal: Option<bool>,
    /// Match case exactly (default false).
    pub case_sensitive: Option<bool>,
    /// A glob on the file name to select files, e.g. "*.rs" (index wildcard syntax).
    pub include: Option<String>,
    /// Lines of context before and after each match (default 0, at most 10).
    pub context_lines: Option<u32>,
    /// Stop after this many matching lines (default 100, at most 1000).
    pub max_results: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContentAnswer {
    /// Sorted by path and line.
    pub matches: Vec<ContentMatch>,
    /// Files the index selected, files read, files skipped (binary, unreadable or over 8 MiB).
    pub files_selected: u64,
    pub files_scanned: u64,
    pub files_skipped: u64,
    /// Why the scan ended early: "maxResults" or "timeBudget"; absent when every selected file was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// "scan": no content index exists yet, the selected files were read.
    pub method: String,
}

/// How long one content search may read.
const TIME_BUDGET: Duration = Duration::from_secs(10);

pub async fn search_file_content(ctx: &Ctx, p: ContentParams) -> Outcome {
    let base = ctx.guard.existing_opt(p.path.as_deref())?;
    let pattern = if p.literal.unwrap_or(false) {
        regex::escape(&p.pattern)
    } else {
        p.pattern.clone()
    };
    let regex = regex::RegexBuilder::new(&pattern)
        .case_insensitive(!p.case_sensitive.unwrap_or(false))
        .size_limit(1 << 22)
        .build()
        .map_err(|e| Failure(format!("bad pattern: {e}")))?;
    // Files that can hold text: not folders, not media, archives or documents.
    let mut query = format!(
        "{} !kind:folder !kind:image !kind:audio !kind:video !kind:archive !kind:document size:<={}",
        ctx.scope(base.as_deref())?,
        content::MAX_FILE
    );
    if let Some(inc) = &p.include {
        query.push(' ');
        query.push_str(&word(inc, "include")?);
    }
    let (_, entries) = ctx.search(query, pb::SortOrder::Path, 0, 0).await?;
    let files: Vec<(PathBuf, u64)> = entries
        .iter()
        .filter(|e| e.r#type == pb::EntryType::File as i32)
        .map(|e| (PathBuf::from(lossy(&e.path)), e.size))
        .collect();
    let selected = files.len() as u64;
    let scan = content::Scan {
        files,
        regex,
        context: p.context_lines.unwrap_or(0).min(10) as usize,
        max_results: p.max_results.unwrap_or(100).clamp(1, 1000) as usize,
        budget: TIME_BUDGET,
    };
    let out = tokio::task::spawn_blocking(move || content::run(scan))
        .await
        .map_err(|e| Failure(format!("internal: {e}")))?;
    let mut text = String::new();
    let mut last: Option<&str> = None;
    for m in &out.matches {
        if last != Some(m.path.as_str()) {
            let _ = writeln!(text, "{}", m.path);
            last = Some(m.path.as_str());
        }
        for (i, b) in m.before.iter().enumerate() {
            let _ = writeln!(text, "{}-{b}", m.line as usize - m.before.len() + i);
        }
        let _ = writeln!(text, "{}:{}", m.line, m.text);
        for (i, a) in m.after.iter().enumerate() {
            let _ = writeln!(text, "{}-{a}", m.line as usize + 1 + i);
        }
    }
    let _ = write!(
        text,
        "{} matches in {} of {} files read{}",
        out.matches.len(),
        out.matches
            .iter()
            .map(|m| m.path.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        selected,
        match out.stopped {
            Some("maxResults") => "; stopped at maxResults, there may be more".to_owned(),
            Some(_) => format!(
                "; stopped at the {} s time budget after {} files",
                TIME_BUDGET.as_secs(),
                out.files_scanned
            ),
            None => String::new(),
        }
    );
    reply(
        &ContentAnswer {
            matches: out.matches,
            files_selected: selected,
            files_scanned: out.files_scanned,
            files_skipped: out.files_skipped,
            stopped: out.stopped.map(str::to_owned),
            method: "scan".into(),
        },
        text,
    )
}
