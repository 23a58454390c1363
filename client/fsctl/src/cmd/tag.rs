//! `fsctl tag add PATH TAG...`, `fsctl tag remove PATH TAG...`,
//! `fsctl tag list [PATH]`: your tags, kept in the index by entry (they
//! follow a file through moves and renames), matched by `tag:NAME` in a
//! search. Tags other programs wrote in `user.xdg.tags` are listed too,
//! marked as such.

use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::{absolute, count, lossy, path_bytes, type_name};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Tag a file or folder (tags compare case-insensitively; no commas).
    Add {
        path: PathBuf,
        #[arg(required = true, value_name = "TAG")]
        tags: Vec<String>,
    },
    /// Take tags off a file or folder.
    Remove {
        path: PathBuf,
        #[arg(required = true, value_name = "TAG")]
        tags: Vec<String>,
    },
    /// One entry's tags; without PATH, every tag and how many entries carry it.
    List { path: Option<PathBuf> },
}

/// A tag's source as `--json` names it.
pub fn source_name(s: i32) -> &'static str {
    match pb::TagSource::try_from(s).unwrap_or_default() {
        pb::TagSource::Xattr => "xattr",
        pb::TagSource::Finder => "finder",
        _ => "user",
    }
}

/// Where a tag read from the file came from, for a person: `None` for
/// the user's own.
pub fn from_file(s: i32) -> Option<&'static str> {
    match pb::TagSource::try_from(s).unwrap_or_default() {
        pb::TagSource::Xattr => Some("user.xdg.tags"),
        pb::TagSource::Finder => Some("Finder"),
        _ => None,
    }
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let (action, path, tags) = match &a.action {
        Action::Add { path, tags } => (pb::TagsAction::Add, Some(path), tags.clone()),
        Action::Remove { path, tags } => (pb::TagsAction::Remove, Some(path), tags.clone()),
        Action::List { path } => (pb::TagsAction::List, path.as_ref(), Vec::new()),
    };
    let path = match path {
        Some(p) => path_bytes(&absolute(p)?),
        None => Vec::new(),
    };
    let whole = path.is_empty();
    let mut client = g.client().await?;
    let r = client
        .tags(pb::TagsRequest {
            action: action as i32,
            path,
            tags,
        })
        .await?
        .into_inner();
    if whole {
        let width = r.tags.iter().map(|t| t.name.chars().count()).max();
        for t in &r.tags {
            if g.json {
                println!(
                    "{}",
                    json!({"name": t.name, "source": source_name(t.source), "entries": t.entries})
                );
            } else {
                let from = from_file(t.source)
                    .map(|f| format!("  ({f})"))
                    .unwrap_or_default();
                println!(
                    "{:<w$}  {:>7}{from}",
                    t.name,
                    count(t.entries),
                    w = width.unwrap_or(0)
                );
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if g.json {
        let tags: Vec<_> = r
            .tags
            .iter()
            .map(|t| json!({"name": t.name, "source": source_name(t.source)}))
            .collect();
        println!(
            "{}",
            json!({"path": lossy(&r.path), "type": type_name(r.r#type), "tags": tags})
        );
    } else {
        for t in &r.tags {
            if let Some(f) = from_file(t.source) {
                println!("{}  ({f})", t.name);
            } else {
                println!("{}", t.name);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
