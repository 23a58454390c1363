//! `fsctl bookmark add PATH [--name NAME]`, `fsctl bookmark list`,
//! `fsctl bookmark remove NAME|PATH`: named places, kept in the index by
//! entry, so a bookmark follows its folder or file when it is moved.

use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::{absolute, lossy, path_bytes, rfc3339, type_name};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Bookmark a folder or file (named after it unless --name is given).
    Add {
        path: PathBuf,
        #[arg(long)]
        name: Option<String>,
    },
    /// Your bookmarks, each with where its entry is now.
    List,
    /// Remove a bookmark, by its name or by its path.
    Remove {
        #[arg(value_name = "NAME|PATH")]
        target: String,
    },
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let (action, path, name) = match &a.action {
        Action::Add { path, name } => (
            pb::BookmarksAction::Add,
            path_bytes(&absolute(path)?),
            name.clone().unwrap_or_default(),
        ),
        Action::List => (pb::BookmarksAction::List, Vec::new(), String::new()),
        Action::Remove { target } => (
            pb::BookmarksAction::Remove,
            // The daemon takes the name first, then the path's bookmark.
            absolute(std::path::Path::new(target))
                .map(|p| path_bytes(&p))
                .unwrap_or_default(),
            target.clone(),
        ),
    };
    let mut client = g.client().await?;
    let r = client
        .bookmarks(pb::BookmarksRequest {
            action: action as i32,
            path: path.clone(),
            name: name.clone(),
        })
        .await?
        .into_inner();
    let shown: Vec<&pb::Bookmark> = match action {
        // What was added, found by its path.
        pb::BookmarksAction::Add => r.bookmarks.iter().filter(|b| b.path == path).collect(),
        pb::BookmarksAction::Remove => Vec::new(),
        _ => r.bookmarks.iter().collect(),
    };
    let width = shown.iter().map(|b| b.name.chars().count()).max();
    for b in shown {
        if g.json {
            println!(
                "{}",
                json!({
                    "name": b.name,
                    "path": lossy(&b.path),
                    "type": type_name(b.r#type),
                    "added": rfc3339(b.added_unix.saturating_mul(1_000_000_000)),
                })
            );
        } else {
            println!("{:<w$}  {}", b.name, lossy(&b.path), w = width.unwrap_or(0));
        }
    }
    Ok(ExitCode::SUCCESS)
}
