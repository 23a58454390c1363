//! The label tools: `list_tags`, `add_tags`, `remove_tags`,
//! `list_bookmarks`, `add_bookmark`, `remove_bookmark`. They change the
//! index's metadata (the user's tags and bookmarks, kept by the daemon),
//! never the user's files, so they are served without `--allow-write`.
//! Every path goes through the guard as an entry acted on as itself (a
//! symlink is tagged, not its target); what is listed is only what lies
//! under the allowed directories.

use fsindex_proto::v1 as pb;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::index::{Ctx, Failure, Outcome, reply};
use super::names::shown;
use crate::output::{path_bytes, type_name};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListTagsParams {
    /// A file or folder: its tags. Without it, every tag on entries under the allowed directories, with how many carry it (find them with find_files query `tag:NAME`).
    pub path: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagParams {
    /// The file or folder to tag, as the tools show it.
    pub path: String,
    /// Tags, as written (they compare case-insensitively; no commas).
    pub tags: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagItem {
    pub name: String,
    /// `user` (set with fsctl or these tools), `xattr` (read from the file's user.xdg.tags, as KDE writes it) or `finder` (macOS Finder tags).
    pub source: String,
    /// In a list of every tag: entries under the allowed directories carrying it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagsAnswer {
    /// The entry, when one was named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub tags: Vec<TagItem>,
    /// Tags left out to fit the answer's byte budget.
    pub left_out: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BookmarkParams {
    /// The folder or file to bookmark, as the tools show it.
    pub path: String,
    /// The bookmark's name (default: the entry's own name).
    pub name: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoveBookmarkParams {
    /// The bookmark's name, or the path of the entry whose bookmark goes.
    pub name_or_path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListBookmarksParams {
    /// Only the bookmarks whose name holds this text (case-insensitive).
    pub name: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BookmarkItem {
    pub name: String,
    /// Where the entry is now (bookmarks follow moves).
    pub path: String,
    /// `file`, `dir`, `symlink` or `other`.
    #[serde(rename = "type")]
    pub entry_type: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BookmarksAnswer {
    /// The user's bookmarks under the allowed directories, by name.
    pub bookmarks: Vec<BookmarkItem>,
    /// Bookmarks left out to fit the answer's byte budget.
    pub left_out: u64,
}

fn source(s: i32) -> String {
    crate::cmd::tag::source_name(s).to_owned()
}

async fn tags_call(
    ctx: &Ctx,
    raw: &str,
    req: pb::TagsRequest,
) -> Result<pb::TagsResponse, Failure> {
    ctx.rpc(|mut c| {
        let req = req.clone();
        async move { c.tags(req).await.map(tonic::Response::into_inner) }
    })
    .await
    .map_err(|s| ctx.daemon_error(raw, s))
}

async fn bookmarks_call(
    ctx: &Ctx,
    raw: &str,
    req: pb::BookmarksRequest,
) -> Result<pb::BookmarksResponse, Failure> {
    ctx.rpc(|mut c| {
        let req = req.clone();
        async move { c.bookmarks(req).await.map(tonic::Response::into_inner) }
    })
    .await
    .map_err(|s| match s.code() {
        // Said whole (a taken name, no such bookmark), not as a refusal.
        tonic::Code::AlreadyExists | tonic::Code::NotFound if !raw.is_empty() => {
            Failure(s.message().to_owned())
        }
        _ => ctx.daemon_error(raw, s),
    })
}

/// One entry's tags, or every tag with its count, fitted to the budget.
fn tags_answer(ctx: &Ctx, path: Option<String>, all: Vec<TagItem>) -> Outcome {
    let n = all.len();
    let (answer, text) = ctx.fit(n, |k| {
        let answer = TagsAnswer {
            path: path.clone(),
            tags: all[..k]
                .iter()
                .map(|t| TagItem {
                    name: t.name.clone(),
                    source: t.source.clone(),
                    entries: t.entries,
                })
                .collect(),
            left_out: (n - k) as u64,
        };
        let mut text = match &path {
            Some(p) => format!("{p}: {} tags\n", n),
            None => format!("{n} tags\n"),
        };
        for t in &answer.tags {
            text.push_str(&t.name);
            if let Some(e) = t.entries {
                text.push_str(&format!("  {e}"));
            }
            text.push_str(&format!("  ({})\n", t.source));
        }
        text.push_str(&format!("leftOut: {} (over the byte budget)\n", n - k));
        (answer, text)
    });
    reply(&answer, text)
}

pub async fn list_tags(ctx: &Ctx, p: ListTagsParams) -> Outcome {
    if let Some(raw) = &p.path {
        let path = ctx.guard().entry(raw, true)?;
        let r = tags_call(
            ctx,
            raw,
            pb::TagsRequest {
                action: pb::TagsAction::List as i32,
                path: path_bytes(&path),
                tags: Vec::new(),
            },
        )
        .await?;
        let tags = r
            .tags
            .iter()
            .map(|t| TagItem {
                name: t.name.clone(),
                source: source(t.source),
                entries: None,
            })
            .collect();
        return tags_answer(ctx, Some(shown(&r.path)), tags);
    }
    let r = tags_call(
        ctx,
        "",
        pb::TagsRequest {
            action: pb::TagsAction::List as i32,
            ..Default::default()
        },
    )
    .await?;
    // Counted again within the allowed directories (the daemon counts
    // every root): one `tag:` search per tag and source.
    let scope = ctx.scope(None)?;
    let mut tags = Vec::new();
    for t in &r.tags {
        let entries = if t.name.contains('"') {
            t.entries
        } else {
            let (total, _) = ctx
                .search(
                    format!("tag:\"{}\" {scope}", t.name),
                    pb::SortOrder::Path,
                    0,
                    1,
                )
                .await?;
            total
        };
        // Both sources of one name count the same entries: the search
        // cannot tell them apart, so the daemon's split is kept when the
        // allowed directories hold them all.
        let entries = entries.min(t.entries);
        if entries > 0 {
            tags.push(TagItem {
                name: t.name.clone(),
                source: source(t.source),
                entries: Some(entries),
            });
        }
    }
    tags_answer(ctx, None, tags)
}

async fn change_tags(ctx: &Ctx, p: TagParams, action: pb::TagsAction) -> Outcome {
    if p.tags.is_empty() {
        return Err(Failure("give at least one tag in `tags`".into()));
    }
    let path = ctx.guard().entry(&p.path, true)?;
    let r = tags_call(
        ctx,
        &p.path,
        pb::TagsRequest {
            action: action as i32,
            path: path_bytes(&path),
            tags: p.tags,
        },
    )
    .await?;
    let tags = r
        .tags
        .iter()
        .map(|t| TagItem {
            name: t.name.clone(),
            source: source(t.source),
            entries: None,
        })
        .collect();
    tags_answer(ctx, Some(shown(&r.path)), tags)
}

pub async fn add_tags(ctx: &Ctx, p: TagParams) -> Outcome {
    change_tags(ctx, p, pb::TagsAction::Add).await
}

pub async fn remove_tags(ctx: &Ctx, p: TagParams) -> Outcome {
    change_tags(ctx, p, pb::TagsAction::Remove).await
}

/// The bookmarks under the allowed directories (whose name holds `name`),
/// fitted to the budget.
fn bookmarks_answer(ctx: &Ctx, r: pb::BookmarksResponse, name: Option<&str>) -> Outcome {
    let guard = ctx.guard();
    let name = name.map(str::to_lowercase);
    let all: Vec<BookmarkItem> = r
        .bookmarks
        .iter()
        .filter(|b| guard.inside(&crate::output::path_from_bytes(&b.path)))
        .filter(|b| {
            name.as_deref()
                .is_none_or(|n| b.name.to_lowercase().contains(n))
        })
        .map(|b| BookmarkItem {
            name: b.name.clone(),
            path: shown(&b.path),
            entry_type: type_name(b.r#type).to_owned(),
        })
        .collect();
    let n = all.len();
    let (answer, text) = ctx.fit(n, |k| {
        let answer = BookmarksAnswer {
            bookmarks: all[..k]
                .iter()
                .map(|b| BookmarkItem {
                    name: b.name.clone(),
                    path: b.path.clone(),
                    entry_type: b.entry_type.clone(),
                })
                .collect(),
            left_out: (n - k) as u64,
        };
        let mut text = format!("{n} bookmarks\n");
        for b in &answer.bookmarks {
            text.push_str(&format!("{}  {}  ({})\n", b.name, b.path, b.entry_type));
        }
        text.push_str(&format!("leftOut: {} (over the byte budget)\n", n - k));
        (answer, text)
    });
    reply(&answer, text)
}

pub async fn list_bookmarks(ctx: &Ctx, p: ListBookmarksParams) -> Outcome {
    let r = bookmarks_call(
        ctx,
        "",
        pb::BookmarksRequest {
            action: pb::BookmarksAction::List as i32,
            ..Default::default()
        },
    )
    .await?;
    bookmarks_answer(ctx, r, p.name.as_deref())
}

pub async fn add_bookmark(ctx: &Ctx, p: BookmarkParams) -> Outcome {
    let path = ctx.guard().entry(&p.path, true)?;
    let r = bookmarks_call(
        ctx,
        &p.path,
        pb::BookmarksRequest {
            action: pb::BookmarksAction::Add as i32,
            path: path_bytes(&path),
            name: p.name.unwrap_or_default(),
        },
    )
    .await?;
    bookmarks_answer(ctx, r, None)
}

pub async fn remove_bookmark(ctx: &Ctx, p: RemoveBookmarkParams) -> Outcome {
    // A bookmark of that name must lie under the allowed directories.
    let listed = bookmarks_call(
        ctx,
        "",
        pb::BookmarksRequest {
            action: pb::BookmarksAction::List as i32,
            ..Default::default()
        },
    )
    .await?;
    if let Some(b) = listed
        .bookmarks
        .iter()
        .find(|b| b.name == p.name_or_path.trim())
        && !ctx.guard().inside(&crate::output::path_from_bytes(&b.path))
    {
        return Err(super::guard::Refusal::denied(&p.name_or_path).into());
    }
    // A name first; a path only when it is one the guard lets through.
    let path = ctx
        .guard()
        .entry(&p.name_or_path, true)
        .map(|p| path_bytes(&p))
        .unwrap_or_default();
    let r = bookmarks_call(
        ctx,
        &p.name_or_path,
        pb::BookmarksRequest {
            action: pb::BookmarksAction::Remove as i32,
            path,
            name: p.name_or_path.clone(),
        },
    )
    .await?;
    bookmarks_answer(ctx, r, None)
}
