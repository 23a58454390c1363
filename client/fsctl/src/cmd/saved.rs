//! `fsctl saved add NAME QUERY...`, `fsctl saved list`, `fsctl saved
//! remove NAME`: searches saved under a name in the daemon, for every
//! client; `@NAME` in any query runs one (`fsctl search @NAME`, fsgui,
//! MCP's find_files).

use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::rfc3339;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Save a query under a name (letters, digits, - _ .); run it with `fsctl search @NAME`.
    Add {
        name: String,
        /// The query, as `fsctl search` takes it (`in:` paths made absolute).
        #[arg(required = true, value_name = "QUERY")]
        query: Vec<String>,
        /// Replace a saved search of that name.
        #[arg(long)]
        replace: bool,
    },
    /// Your saved searches, by name.
    List,
    /// Forget a saved search.
    Remove { name: String },
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let request = match &a.action {
        Action::Add {
            name,
            query,
            replace,
        } => pb::SavedSearchesRequest {
            action: pb::SavedSearchesAction::Add as i32,
            name: name.clone(),
            query: crate::cmd::search::query_of(query, false),
            replace: *replace,
        },
        Action::List => pb::SavedSearchesRequest {
            action: pb::SavedSearchesAction::List as i32,
            ..Default::default()
        },
        Action::Remove { name } => pb::SavedSearchesRequest {
            action: pb::SavedSearchesAction::Remove as i32,
            name: name.clone(),
            ..Default::default()
        },
    };
    let mut client = g.client().await?;
    let r = client.saved_searches(request.clone()).await?.into_inner();
    let wanted = request.name.trim().trim_start_matches('@');
    let shown: Vec<&pb::SavedSearch> = match &a.action {
        // What was saved.
        Action::Add { .. } => r
            .searches
            .iter()
            .filter(|s| s.name.eq_ignore_ascii_case(wanted))
            .collect(),
        Action::Remove { .. } => Vec::new(),
        Action::List => r.searches.iter().collect(),
    };
    let width = shown.iter().map(|s| s.name.chars().count() + 1).max();
    for s in shown {
        if g.json {
            println!(
                "{}",
                json!({
                    "name": s.name,
                    "query": s.query,
                    "added": rfc3339(s.added_unix.saturating_mul(1_000_000_000)),
                })
            );
        } else {
            println!(
                "{:<w$}  {}",
                format!("@{}", s.name),
                s.query,
                w = width.unwrap_or(0)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
