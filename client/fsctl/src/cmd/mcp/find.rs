//! Tools that search the index: by query and fields, by glob, counts per
//! group, recent changes, a folder's manifest, duplicates, and content.
//!
//! As in `browse`, each text rendering carries the structured content's
//! fields, and each answer fits the byte budget, paged beyond it.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use fsindex_proto::v1 as pb;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::content::{self, ContentMatch, SkippedFile};
use super::index::{
    Ctx, FOUND_HEADER, Failure, FoundEntry, Outcome, Page, next_cursor, page, relative, reply,
    showing,
};
use super::names::{shown, shown_path};
use crate::output::{lossy, path_bytes, rfc3339, size};

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
    /// (case-insensitive substrings), "phrases", a|b, !not, wildcards on the
    /// name (*.pdf), ext:pdf;docx, size:>10mb, dm:2025 / dm:thisweek /
    /// dm:2025-01..2025-03, kind:document|image|audio|video|archive|code|text|folder,
    /// in:FOLDER, path:Taxes/2025, regex:^IMG_\d+\.jpg$, case:README,
    /// content:invoice / content:"total due" (what files say, PDF and Office
    /// included, in folders with content search on); accents:ignore makes
    /// the whole query ignore accents (cafe finds café); @NAME runs the
    /// user's saved search NAME (see list_saved_searches).
    pub query: Option<String>,
    /// Only under this folder (default: every allowed directory).
    pub path: Option<String>,
    /// A glob on the whole name, case-insensitive: "*.tar.gz",
    /// "IMG_????.jpg", "[ab]*.txt", "*.{jpg,png}", ".git" (exactly that
    /// name); spaces are part of the name.
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
    /// Results per page at most (default 100; fewer when the answer would pass the byte budget).
    #[schemars(range(min = 1, max = 1000))]
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

/// A glob on the whole name as one item of the query language: the
/// index's own wildcard where the glob has only `*` and `?` (literal runs
/// quoted, so spaces and `|` are part of the name), else a `regex:` on the
/// name whose literal characters are all `\x{..}` escapes (no space, quote
/// or `|` to split the query).
pub fn name_glob(pattern: &str, what: &str) -> Result<String, Failure> {
    if pattern.is_empty() {
        return Err(Failure(format!("{what}: give a name glob, e.g. *.pdf")));
    }
    globset::Glob::new(pattern).map_err(|e| Failure(format!("{what} `{pattern}`: {e}")))?;
    let simple = !pattern.contains(['[', ']', '{', '}', '"', '\\']);
    if simple && pattern.contains(['*', '?']) {
        let mut q = String::new();
        let mut lit = String::new();
        for c in pattern.chars() {
            if c == '*' || c == '?' {
                if !lit.is_empty() {
                    q.push('"');
                    q.push_str(&lit);
                    q.push('"');
                    lit.clear();
                }
                q.push(c);
            } else {
                lit.push(c);
            }
        }
        if !lit.is_empty() {
            q.push('"');
            q.push_str(&lit);
            q.push('"');
        }
        return Ok(q);
    }
    let esc = |c: char, re: &mut String| {
        if c.is_ascii_alphanumeric() || c == '_' {
            re.push(c);
        } else {
            let _ = write!(re, "\\x{{{:X}}}", c as u32);
        }
    };
    let mut re = String::from("^");
    let mut chars = pattern.chars().peekable();
    let mut in_alt = 0;
    while let Some(c) = chars.next() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            '\\' => {
                if let Some(n) = chars.next() {
                    esc(n, &mut re);
                }
            }
            '[' => {
                re.push('[');
                if matches!(chars.peek(), Some('!' | '^')) {
                    chars.next();
                    re.push('^');
                }
                for n in chars.by_ref() {
                    if n == ']' {
                        break;
                    }
                    if n == '-' {
                        re.push('-');
                    } else {
                        esc(n, &mut re);
                    }
                }
                re.push(']');
            }
            '{' => {
                in_alt += 1;
                re.push_str("(?:");
            }
            ',' if in_alt > 0 => re.push('|'),
            '}' if in_alt > 0 => {
                in_alt -= 1;
                re.push(')');
            }
            c => esc(c, &mut re),
        }
    }
    re.push('$');
    Ok(format!("regex:{re}"))
}

fn find_query(ctx: &Ctx, p: &FindParams) -> Result<String, Failure> {
    let scope = match &p.path {
        Some(raw) => ctx.scope(Some(&ctx.guard().existing(raw)?))?,
        None => ctx.scope(None)?,
    };
    let mut parts = vec![scope];
    if let Some(q) = p.query.as_deref().filter(|q| !q.trim().is_empty()) {
        parts.push(ctx.guard_query(q.trim())?);
    }
    if let Some(pat) = &p.pattern {
        parts.push(name_glob(pat, "pattern")?);
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

/// A page of search results, as find_files and recent_files show them.
fn found_page(
    ctx: &Ctx,
    query: String,
    pg: super::index::Page,
    total: u64,
    results: Vec<FoundEntry>,
    fp: &impl std::hash::Hash,
    what: &str,
) -> Outcome {
    let (out, text) = ctx.fit(results.len(), |k| {
        let next = next_cursor(pg, k as u64, total, fp);
        let mut text = format!(
            "{}\nquery: {query}\n{FOUND_HEADER}\n",
            showing(pg.offset, k, total, what, next.as_deref())
        );
        for r in &results[..k] {
            text.push_str(&r.line());
            text.push('\n');
        }
        (
            FoundPage {
                query: query.clone(),
                total,
                offset: pg.offset,
                results: results[..k].to_vec(),
                next_cursor: next,
            },
            text,
        )
    });
    reply(&out, text)
}

pub async fn find_files(ctx: &Ctx, p: FindParams) -> Outcome {
    let query = find_query(ctx, &p)?;
    let sort = sort_order(p.sort_by);
    let fp = ("find_files", query.clone(), sort as i32);
    let pg = page(p.cursor.as_deref(), p.limit, 100, 1000, &fp)?;
    // Each result of a page carries its passage for content: words (a
    // page is at most 1000; the byte budget cuts it further).
    let snippets = u32::try_from(pg.limit).unwrap_or(u32::MAX);
    let (total, entries) = ctx
        .search_with_snippets(query.clone(), sort, pg.offset, pg.limit, snippets)
        .await?;
    // The agent's own query, once (not again for each page), into the
    // user's history.
    if let Some(q) = p.query.as_deref().map(str::trim).filter(|q| !q.is_empty())
        && p.cursor.is_none()
    {
        super::searches::record(ctx, q, total).await;
    }
    let results: Vec<FoundEntry> = entries.iter().map(FoundEntry::from_pb).collect();
    found_page(ctx, query, pg, total, results, &fp, "matches")
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
    /// Only files whose text holds these words, in this order (content search, as content:"..." in find_files; PDF and Office included, in folders with content search on); each path then comes with the passage that matched.
    pub content: Option<String>,
    /// Results per page at most (default 1000; fewer when the answer would pass the byte budget).
    #[schemars(range(min = 1, max = 5000))]
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
    /// With `content`: the passage of each path's text that matched (same order as paths; empty when none could be cut).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub snippets: Vec<String>,
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
    let base = ctx.guard().existing(&p.path)?;
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
    // The index narrows by the last component when it is a name glob.
    let last = p.pattern.rsplit('/').next().unwrap_or("");
    let mut query = ctx.scope(Some(&base))?;
    if !last.is_empty() && !last.contains("**") && last != "*" {
        query.push(' ');
        query.push_str(&name_glob(last, "pattern")?);
    }
    let content = p
        .content
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty());
    if let Some(c) = content {
        let _ = write!(query, " content:\"{}\"", c.replace('"', " "));
    }
    let fp = (
        "search_files",
        query.clone(),
        p.pattern.clone(),
        p.exclude_patterns.clone(),
    );
    let pg = page(p.cursor.as_deref(), p.limit, 1000, 5000, &fp)?;
    // With content words every result carries its passage (the daemon
    // cuts at most 10,000, from the text it keeps).
    let snippets = if content.is_some() { u32::MAX } else { 0 };
    let (_, entries) = ctx
        .search_with_snippets(query, pb::SortOrder::Path, 0, 0, snippets)
        .await?;
    let base_lossy = base.to_string_lossy().into_owned();
    let mut all: Vec<(String, String)> = entries
        .iter()
        .filter_map(|e| {
            let full = lossy(&e.path);
            let rel = full.strip_prefix(&base_lossy)?.strip_prefix('/')?;
            (matcher.is_match(rel) && !excludes.is_match(rel))
                .then(|| (shown(&e.path), e.snippet.clone()))
        })
        .collect();
    all.sort();
    let total = all.len() as u64;
    let (rows, passages): (Vec<String>, Vec<String>) = all
        .into_iter()
        .skip(pg.offset as usize)
        .take(pg.limit as usize)
        .unzip();
    let (out, text) = ctx.fit(rows.len(), |k| {
        let next = next_cursor(pg, k as u64, total, &fp);
        let mut text = if total == 0 {
            "No matches found\n".to_owned()
        } else {
            format!(
                "{}\n",
                showing(pg.offset, k, total, "paths", next.as_deref())
            )
        };
        for (r, s) in rows[..k].iter().zip(&passages) {
            text.push_str(r);
            text.push('\n');
            if !s.is_empty() {
                let _ = writeln!(text, "\t> {s}");
            }
        }
        (
            GlobPage {
                total,
                offset: pg.offset,
                paths: rows[..k].to_vec(),
                snippets: if content.is_some() {
                    passages[..k].to_vec()
                } else {
                    Vec::new()
                },
                next_cursor: next,
            },
            text,
        )
    });
    reply(&out, text)
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
    /// extension, kind, folder (the first folder below `path`), year (the year a photo was taken where its metadata says, else of modification, UTC) or month (of modification, UTC).
    pub group_by: Option<GroupBy>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CountAnswer {
    pub query: String,
    /// Files (anything but folders) matching, and their bytes (st_size).
    pub files: u64,
    pub bytes: u64,
    /// Groups in all; those beyond what the answer holds are summed in a last "(N more groups)".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups_total: Option<u64>,
    /// Largest count first (newest first by year or month).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<CountGroup>,
    /// By year: how many files were placed by the date they were taken
    /// (photo metadata); the rest by their modification date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_date_taken: Option<u64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CountGroup {
    pub key: String,
    pub files: u64,
    pub bytes: u64,
}

pub async fn count_files(ctx: &Ctx, p: CountParams) -> Outcome {
    let guard = ctx.guard();
    let base = guard.existing_opt(p.path.as_deref())?;
    let mut query = format!("{} !kind:folder", ctx.scope(base.as_deref())?);
    if let Some(q) = p.query.as_deref().filter(|q| !q.trim().is_empty()) {
        query.push(' ');
        query.push_str(&ctx.guard_query(q.trim())?);
    }
    let (_, entries) = ctx.search(query.clone(), pb::SortOrder::Path, 0, 0).await?;
    let taken = if p.group_by == Some(GroupBy::Year) {
        Some(years_taken(ctx, &query).await?)
    } else {
        None
    };
    let mut files = 0;
    let mut bytes = 0;
    let mut groups: HashMap<String, (u64, u64)> = HashMap::new();
    let bases: Vec<PathBuf> = match &base {
        Some(b) => vec![b.clone()],
        None => guard.allowed().to_vec(),
    };
    for e in &entries {
        files += 1;
        bytes += e.size;
        let Some(g) = p.group_by else { continue };
        let key = match g {
            GroupBy::Extension => {
                let name = lossy(&e.name).to_lowercase();
                match name.rsplit_once('.') {
                    Some((stem, ext)) if !stem.is_empty() => shown(ext.as_bytes()),
                    _ => "(none)".to_owned(),
                }
            }
            GroupBy::Kind => ctx.kind(&e.path, &lossy(&e.name)).await,
            GroupBy::Folder => {
                let full = shown(&e.path);
                let base = bases
                    .iter()
                    .find(|b| e.path.starts_with(b.as_os_str().as_encoded_bytes()))
                    .cloned()
                    .unwrap_or_default();
                let rel = relative(&full, &base);
                match rel.split_once('/') {
                    Some((top, _)) => format!("{top}/"),
                    None => "(files directly in the folder)".to_owned(),
                }
            }
            GroupBy::Year => match taken.as_ref().and_then(|t| t.get(&e.path)) {
                Some(y) => format!("{y:04}"),
                None => rfc3339(e.mtime_ns).get(..4).unwrap_or("").to_owned(),
            },
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
    let n = groups.len();
    let (out, text) = ctx.fit(n, |k| {
        let mut shown_groups = groups[..k].to_vec();
        if k < n {
            let rest = &groups[k..];
            shown_groups.push(CountGroup {
                key: format!("({} more groups)", rest.len()),
                files: rest.iter().map(|g| g.files).sum(),
                bytes: rest.iter().map(|g| g.bytes).sum(),
            });
        }
        let mut text = format!(
            "{files} files, {bytes} bytes ({})\nquery: {query}\n",
            size(bytes)
        );
        if let Some(t) = &taken {
            let _ = writeln!(
                text,
                "years: the year taken for {} files (photo metadata), the year modified (UTC) for the other {}",
                t.len(),
                files - t.len() as u64
            );
        }
        if p.group_by.is_some() {
            let _ = writeln!(text, "{n} groups\n# files\tbytes\tkey");
        }
        for g in &shown_groups {
            let _ = writeln!(text, "{}\t{}\t{}", g.files, g.bytes, g.key);
        }
        (
            CountAnswer {
                query: query.clone(),
                files,
                bytes,
                groups_total: p.group_by.map(|_| n as u64),
                groups: shown_groups,
                by_date_taken: taken.as_ref().map(|t| t.len() as u64),
            },
            text,
        )
    });
    reply(&out, text)
}

/// The year each file matching `query` was taken, for the files whose
/// metadata says: ranges of years asked with `taken:A..B` and halved while
/// they hold any, so the searches grow with the years present, not the
/// files.
async fn years_taken(ctx: &Ctx, query: &str) -> Result<HashMap<Vec<u8>, i32>, Failure> {
    let mut years = HashMap::new();
    let mut ranges = vec![(1800, 2200)];
    while let Some((a, b)) = ranges.pop() {
        let (_, hits) = ctx
            .search(
                format!("{query} taken:{a:04}..{b:04}"),
                pb::SortOrder::Path,
                0,
                0,
            )
            .await?;
        if hits.is_empty() {
            continue;
        }
        if a == b {
            years.extend(hits.into_iter().map(|h| (h.path, a)));
            continue;
        }
        let mid = (a + b) / 2;
        ranges.push((a, mid));
        ranges.push((mid + 1, b));
    }
    Ok(years)
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
    /// Files per page at most (default 50; fewer when the answer would pass the byte budget).
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// The nextCursor of the previous page.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecentAnswer {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Files modified since then (all files when no `since`), and where this page starts.
    pub total: u64,
    pub offset: u64,
    /// Newest first; folders are left out (their times change with any file made or removed in them).
    pub results: Vec<FoundEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
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
    let base = ctx.guard().existing_opt(p.path.as_deref())?;
    let since = p
        .since
        .as_deref()
        .map(|s| parse_since(s, jiff::Timestamp::now()))
        .transpose()?;
    let mut query = format!("{} !kind:folder", ctx.scope(base.as_deref())?);
    if let Some(s) = since {
        // The index's own filter, a day wide of the bound (it counts days
        // in local time); the exact bound below.
        let secs = s.div_euclid(1_000_000_000) - 86_400;
        if let Ok(t) = jiff::Timestamp::from_second(secs) {
            let _ = write!(query, " dm:>={}", t.strftime("%Y-%m-%d"));
        }
    }
    let fp = ("recent_files", query.clone(), since);
    let pg = page(p.cursor.as_deref(), p.limit, 50, 1000, &fp)?;
    let (total, results) = match since {
        // Newest first: one page from the index, counted by it.
        None => {
            let (total, entries) = ctx
                .search(query.clone(), pb::SortOrder::Mtime, pg.offset, pg.limit)
                .await?;
            (
                total,
                entries.iter().map(FoundEntry::from_pb).collect::<Vec<_>>(),
            )
        }
        // Every candidate, cut at the exact bound, so the total is exact.
        Some(s) => {
            let (_, entries) = ctx
                .search(query.clone(), pb::SortOrder::Mtime, 0, 0)
                .await?;
            let all: Vec<&pb::Entry> = entries.iter().filter(|e| e.mtime_ns >= s).collect();
            let rows = all
                .iter()
                .skip(pg.offset as usize)
                .take(pg.limit as usize)
                .map(|e| FoundEntry::from_pb(e))
                .collect();
            (all.len() as u64, rows)
        }
    };
    let since_text = since.map(rfc3339);
    let (out, text) = ctx.fit(results.len(), |k| {
        let next = next_cursor(pg, k as u64, total, &fp);
        let mut text = format!(
            "{}{} (newest first)\n{FOUND_HEADER}\n",
            showing(pg.offset, k, total, "files", next.as_deref()),
            since_text
                .as_deref()
                .map(|s| format!(" modified since {s}"))
                .unwrap_or_default()
        );
        for r in &results[..k] {
            text.push_str(&r.line());
            text.push('\n');
        }
        (
            RecentAnswer {
                since: since_text.clone(),
                total,
                offset: pg.offset,
                results: results[..k].to_vec(),
                next_cursor: next,
            },
            text,
        )
    });
    reply(&out, text)
}

// ---------------------------------------------------------------- folder_manifest

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestParams {
    /// A project folder under an allowed directory.
    pub path: String,
    /// Files per page at most (default 500; fewer when the answer would pass the byte budget).
    #[schemars(range(min = 1, max = 5000))]
    pub limit: Option<u64>,
    /// The nextCursor of the previous page.
    pub cursor: Option<String>,
    /// Tokens (bytes / 4) the manifest may take: the newest files that fit, the oldest left out (counted in leftOut); no paging then.
    #[schemars(range(min = 16))]
    pub token_budget: Option<u32>,
    /// Summarise sensitive files (e.g. a password file) too: set it only when the user asked for them.
    pub allow_sensitive: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestAnswer {
    pub path: String,
    /// Files in all (folders are implied by the paths).
    pub total: u64,
    pub offset: u64,
    /// With tokenBudget: the oldest files left out to fit it.
    pub left_out: u64,
    pub files: Vec<ManifestLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestLine {
    pub relative_path: String,
    /// document, image, audio, video, archive, code, text or other.
    pub kind: String,
    pub size: u64,
    pub mtime: String,
    /// One line: the document's title, its first heading, its first sentence, or a source file's module doc comment; empty when there is none.
    pub summary: String,
    /// title, heading, sentence or doc-comment (absent with no summary).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// A sensitive file: no summary unless allowSensitive.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

/// The daemon's Manifest stream, gathered: the files and the summary.
async fn manifest_rpc(
    ctx: &Ctx,
    raw: &str,
    req: pb::ManifestRequest,
) -> Result<(Vec<pb::ManifestFile>, pb::ManifestSummary), Failure> {
    ctx.rpc(|mut c| {
        let req = req.clone();
        async move {
            let mut stream = c.manifest(req).await?.into_inner();
            let mut files = Vec::new();
            let mut summary = pb::ManifestSummary::default();
            while let Some(m) = stream.message().await? {
                match m.item {
                    Some(pb::manifest_response::Item::File(f)) => files.push(f),
                    Some(pb::manifest_response::Item::Summary(s)) => summary = s,
                    _ => {}
                }
            }
            Ok((files, summary))
        }
    })
    .await
    .map_err(|s| ctx.daemon_error(raw, s))
}

pub async fn folder_manifest(ctx: &Ctx, p: ManifestParams) -> Outcome {
    let base = ctx.guard().existing(&p.path)?;
    let allow_sensitive = p.allow_sensitive.unwrap_or(false);
    let fp = ("folder_manifest", base.clone(), allow_sensitive);
    let (pg, budget) = match p.token_budget {
        // What the byte budget holds, at most (the text and the structured
        // content each carry every line).
        Some(t) => (
            Page {
                offset: 0,
                limit: u64::MAX,
            },
            t.clamp(16, (ctx.text_room() / 4 / 2) as u32),
        ),
        None => (page(p.cursor.as_deref(), p.limit, 500, 5000, &fp)?, 0),
    };
    let request = |budget: u32| pb::ManifestRequest {
        path: path_bytes(&base),
        budget,
        offset: pg.offset,
        limit: if budget > 0 { 0 } else { pg.limit },
        allow_sensitive,
    };
    let mut budget = budget;
    let mut tries = 0;
    loop {
        let (found, summary) = manifest_rpc(ctx, &p.path, request(budget)).await?;
        let files: Vec<ManifestLine> = found
            .iter()
            .map(|f| ManifestLine {
                relative_path: shown(&f.relative_path),
                kind: f.kind.clone(),
                size: f.size,
                mtime: rfc3339(f.mtime_ns),
                summary: f.summary.clone(),
                source: f.source.clone(),
                sensitive: f.sensitive,
            })
            .collect();
        let (out, text) = manifest_answer(ctx, &base, pg, budget, &fp, &files, &summary);
        // With a budget, what the byte budget cuts must be the oldest too:
        // ask again for less (summaries are cached by now).
        if budget > 16 && out.files.len() < files.len() && tries < 4 {
            tries += 1;
            let share = out.files.len() as u64 * u64::from(budget) / files.len().max(1) as u64;
            budget = (share as u32).clamp(16, budget - 1);
            continue;
        }
        return reply(&out, text);
    }
}

fn manifest_answer(
    ctx: &Ctx,
    base: &std::path::Path,
    pg: Page,
    budget: u32,
    fp: &impl std::hash::Hash,
    files: &[ManifestLine],
    summary: &pb::ManifestSummary,
) -> (ManifestAnswer, String) {
    let total = summary.total;
    let sp = shown_path(base);
    ctx.fit(files.len(), |k| {
        let next = (budget == 0)
            .then(|| next_cursor(pg, k as u64, total, fp))
            .flatten();
        let left = summary.left_out + (files.len() - k) as u64 * u64::from(budget > 0);
        let mut text = format!(
            "# {sp}: {}{}\n# relativePath\tkind\tsize\tmtime\tsummary\n",
            showing(pg.offset, k, total, "files", next.as_deref()),
            if left > 0 {
                format!("; the {left} oldest left out to fit the budget")
            } else {
                String::new()
            }
        );
        for f in &files[..k] {
            let _ = writeln!(
                text,
                "{}\t{}\t{}\t{}\t{}",
                f.relative_path, f.kind, f.size, f.mtime, f.summary
            );
        }
        (
            ManifestAnswer {
                path: sp.clone(),
                total,
                offset: pg.offset,
                left_out: left,
                files: files[..k].to_vec(),
                next_cursor: next,
            },
            text,
        )
    })
}

// ---------------------------------------------------------------- find_duplicates

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, Hash)]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    Document,
    Image,
    Audio,
    Video,
    Archive,
    Code,
    Text,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DupesParams {
    /// Only under this folder (default: every allowed directory).
    pub path: Option<String>,
    /// Only groups with a copy that matches this query (the index's query language, see find_files), e.g. "ext:jpg" or "Photos size:>10mb".
    pub query: Option<String>,
    /// Only groups of this kind of file.
    pub kind: Option<Kind>,
    /// Smallest file size considered, in bytes (default 1: empty files are left out).
    #[schemars(range(min = 1))]
    pub min_size: Option<u64>,
    /// Only the totals and a breakdown by extension, no groups.
    pub summary_only: Option<bool>,
    /// Groups per page at most, largest reclaimable first (default 50; fewer when the answer would pass the byte budget).
    #[schemars(range(min = 1, max = 1000))]
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
    /// Groups and reclaimable bytes per extension of the files, most reclaimable first.
    pub by_extension: Vec<DupeSummary>,
    /// Where this page of groups starts (absent with summaryOnly).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Largest reclaimable first (none with summaryOnly).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<DupeGroup>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DupeSummary {
    pub extension: String,
    pub groups: u64,
    pub reclaimable_bytes: u64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DupeGroup {
    /// Bytes of each copy.
    pub size: u64,
    /// BLAKE3 of the content, hex.
    pub hash: String,
    /// Copies in all (distinct inodes).
    pub copies_total: u64,
    /// One list of paths per copy (hard links to one inode are one copy); at most 20 copies.
    pub copies: Vec<Vec<String>>,
    pub reclaimable_bytes: u64,
}

/// Copies listed per group at most.
const MAX_COPIES: usize = 20;
/// Extensions in a summary at most.
const MAX_SUMMARY: usize = 30;

pub async fn find_duplicates(ctx: &Ctx, p: DupesParams) -> Outcome {
    let guard = ctx.guard();
    let base = guard.existing_opt(p.path.as_deref())?;
    let mut filter_query = String::new();
    if let Some(q) = p.query.as_deref().filter(|q| !q.trim().is_empty()) {
        filter_query.push_str(&ctx.guard_query(q.trim())?);
    }
    if let Some(k) = p.kind {
        let word = serde_json::to_value(k)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = write!(filter_query, " kind:{word}");
    }
    let filter_query = filter_query.trim().to_owned();
    // The files the filter lets through, from one search.
    let wanted: Option<std::collections::HashSet<Vec<u8>>> = if filter_query.is_empty() {
        None
    } else {
        let q = format!(
            "{} !kind:folder {filter_query}",
            ctx.scope(base.as_deref())?
        );
        let (_, entries) = ctx.search(q, pb::SortOrder::Path, 0, 0).await?;
        Some(entries.into_iter().map(|e| e.path).collect())
    };
    let summary_only = p.summary_only.unwrap_or(false);
    let fp = (
        "find_duplicates",
        base.clone(),
        p.min_size,
        filter_query.clone(),
        summary_only,
    );
    let pg = page(p.cursor.as_deref(), p.limit, 50, 1000, &fp)?;
    // With no path, every root is searched and copies outside the allowed
    // directories are dropped (so pairs across two of them are found).
    let raw = p.path.as_deref().unwrap_or("");
    let req = pb::DuplicatesRequest {
        path: base
            .as_deref()
            .map(crate::output::path_bytes)
            .unwrap_or_default(),
        min_size: p.min_size.unwrap_or(1).max(1),
        include_empty: false,
    };
    let found = ctx
        .rpc(|mut c| {
            let req = req.clone();
            async move {
                let mut stream = c.duplicates(req).await?.into_inner();
                let mut out = Vec::new();
                while let Some(m) = stream.message().await? {
                    if let Some(pb::duplicates_response::Item::Group(g)) = m.item {
                        out.push(g);
                    }
                }
                Ok(out)
            }
        })
        .await
        .map_err(|s| ctx.daemon_error(raw, s))?;
    let mut groups = Vec::new();
    let mut by_ext: HashMap<String, (u64, u64)> = HashMap::new();
    for g in found {
        let copies: Vec<Vec<&Vec<u8>>> = g
            .copies
            .iter()
            .map(|c| {
                c.paths
                    .iter()
                    .filter(|p| guard.inside(&crate::output::path_from_bytes(p)))
                    .collect::<Vec<_>>()
            })
            .filter(|c| !c.is_empty())
            .collect();
        if copies.len() < 2 {
            continue;
        }
        if let Some(w) = &wanted
            && !copies.iter().flatten().any(|p| w.contains(*p))
        {
            continue;
        }
        let reclaimable = g.size * (copies.len() as u64 - 1);
        let name = copies[0][0]
            .rsplit(|&b| b == b'/')
            .next()
            .unwrap_or_default();
        let ext = match lossy(name).to_lowercase().rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => shown(ext.as_bytes()),
            _ => "(none)".to_owned(),
        };
        let slot = by_ext.entry(ext).or_default();
        slot.0 += 1;
        slot.1 += reclaimable;
        groups.push(DupeGroup {
            size: g.size,
            hash: g.hash.iter().map(|b| format!("{b:02x}")).collect(),
            copies_total: copies.len() as u64,
            copies: copies
                .iter()
                .take(MAX_COPIES)
                .map(|c| c.iter().map(|p| shown(p)).collect())
                .collect(),
            reclaimable_bytes: reclaimable,
        });
    }
    groups.sort_by(|a, b| {
        b.reclaimable_bytes
            .cmp(&a.reclaimable_bytes)
            .then(a.copies.cmp(&b.copies))
    });
    let groups_total = groups.len() as u64;
    let reclaimable_bytes: u64 = groups.iter().map(|g| g.reclaimable_bytes).sum();
    let mut by_extension: Vec<DupeSummary> = by_ext
        .into_iter()
        .map(|(extension, (groups, reclaimable_bytes))| DupeSummary {
            extension,
            groups,
            reclaimable_bytes,
        })
        .collect();
    by_extension.sort_by(|a, b| {
        b.reclaimable_bytes
            .cmp(&a.reclaimable_bytes)
            .then(a.extension.cmp(&b.extension))
    });
    by_extension.truncate(MAX_SUMMARY);
    let rows: Vec<DupeGroup> = if summary_only {
        Vec::new()
    } else {
        groups
            .into_iter()
            .skip(pg.offset as usize)
            .take(pg.limit as usize)
            .collect()
    };
    let (out, text) = ctx.fit(rows.len(), |k| {
        let next = if summary_only {
            None
        } else {
            next_cursor(pg, k as u64, groups_total, &fp)
        };
        let mut text = format!(
            "{groups_total} groups of identical files, {reclaimable_bytes} bytes reclaimable ({}){}\n# extension\tgroups\treclaimableBytes\n",
            size(reclaimable_bytes),
            if filter_query.is_empty() {
                String::new()
            } else {
                format!("; filter: {filter_query}")
            }
        );
        for s in &by_extension {
            let _ = writeln!(text, "{}\t{}\t{}", s.extension, s.groups, s.reclaimable_bytes);
        }
        if !summary_only {
            let _ = writeln!(
                text,
                "{} (most reclaimable first)\n# copies\tsize\treclaimableBytes\thash, then one line per copy (hard links joined by \" = \")",
                showing(pg.offset, k, groups_total, "groups", next.as_deref())
            );
            for g in &rows[..k] {
                let _ = writeln!(
                    text,
                    "{}\t{}\t{}\t{}",
                    g.copies_total, g.size, g.reclaimable_bytes, g.hash
                );
                for c in &g.copies {
                    let _ = writeln!(text, "  {}", c.join(" = "));
                }
                if g.copies_total > g.copies.len() as u64 {
                    let _ = writeln!(text, "  ... {} more copies", g.copies_total - g.copies.len() as u64);
                }
            }
        }
        (
            DupesAnswer {
                groups_total,
                reclaimable_bytes,
                by_extension: by_extension.clone(),
                offset: (!summary_only).then_some(pg.offset),
                groups: rows[..k].to_vec(),
                next_cursor: next,
            },
            text,
        )
    });
    reply(&out, text)
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
    /// A glob on the file name to select files, e.g. "*.rs" or "*.{rs,toml}".
    pub include: Option<String>,
    /// Lines of context before and after each match (default 0).
    #[schemars(range(max = 10))]
    pub context_lines: Option<u32>,
    /// Stop after this many matching lines (default 100; fewer shown when the answer would pass the byte budget).
    #[schemars(range(min = 1, max = 1000))]
    pub max_results: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContentAnswer {
    /// Sorted by path and line.
    pub matches: Vec<ContentMatch>,
    /// Matching lines found, of which `matches` holds the first (all unless the byte budget cut them).
    pub matches_found: u64,
    /// Files the index selected, files read, files not read (named in `skipped`, the first 50).
    pub files_selected: u64,
    pub files_scanned: u64,
    pub files_skipped: u64,
    pub skipped: Vec<SkippedFile>,
    /// Why the scan ended early: "maxResults" or "timeBudget"; absent when every selected file was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// "scan": no content index exists yet, the selected files were read.
    pub method: String,
}

/// How long one content search may read.
const TIME_BUDGET: Duration = Duration::from_secs(10);

pub async fn search_file_content(ctx: &Ctx, p: ContentParams) -> Outcome {
    let base = ctx.guard().existing_opt(p.path.as_deref())?;
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
        "{} !kind:folder !kind:image !kind:audio !kind:video !kind:archive !kind:document",
        ctx.scope(base.as_deref())?,
    );
    if let Some(inc) = &p.include {
        query.push(' ');
        query.push_str(&name_glob(inc, "include")?);
    }
    let (_, entries) = ctx.search(query, pb::SortOrder::Path, 0, 0).await?;
    let files: Vec<(PathBuf, u64)> = entries
        .iter()
        .filter(|e| e.r#type == pb::EntryType::File as i32)
        .map(|e| (crate::output::path_from_bytes(&e.path), e.size))
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
    let found = out.matches.len();
    let (answer, text) = ctx.fit(found, |k| {
        let shown_matches = &out.matches[..k];
        let mut text = String::new();
        let mut last: Option<&str> = None;
        for m in shown_matches {
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
        let files_with = shown_matches
            .iter()
            .map(|m| m.path.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let _ = write!(
            text,
            "{} matches in {files_with} files; {} files selected, {} read, {} not read (method: scan){}{}",
            if k < found {
                format!("showing {k} of {found}")
            } else {
                found.to_string()
            },
            selected,
            out.files_scanned,
            out.files_skipped,
            match out.stopped {
                Some("maxResults") => "; stopped at maxResults, there may be more".to_owned(),
                Some(_) => format!(
                    "; stopped at the {} s time budget after {} files",
                    TIME_BUDGET.as_secs(),
                    out.files_scanned
                ),
                None => String::new(),
            },
            if k < found {
                "; the rest would pass the byte budget: narrow with path or include"
            } else {
                ""
            }
        );
        for s in &out.skipped {
            let _ = write!(text, "\nnot read: {}: {}", s.path, s.reason);
        }
        if out.files_skipped > out.skipped.len() as u64 {
            let _ = write!(
                text,
                "\n... and {} more not read",
                out.files_skipped - out.skipped.len() as u64
            );
        }
        (
            ContentAnswer {
                matches: shown_matches.to_vec(),
                matches_found: found as u64,
                files_selected: selected,
                files_scanned: out.files_scanned,
                files_skipped: out.files_skipped,
                skipped: out.skipped.clone(),
                stopped: out.stopped.map(str::to_owned),
                method: "scan".into(),
            },
            text,
        )
    });
    reply(&answer, text)
}
