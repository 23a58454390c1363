//! `fsctl history [-n N]`: your recent searches, newest first, with when
//! and how many results, as the daemon keeps them for every client (fsctl,
//! fsgui, MCP agents).
//!
//! What fsctl records: a search typed at a terminal (stdout a TTY), like a
//! shell's history; a search in a pipe or a script is not the user's
//! history, and pays nothing for it. `FSINDEX_HISTORY=1` records every
//! search, `FSINDEX_HISTORY=0` none.

use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::rfc3339;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// At most N searches, newest first; 0 shows every one kept (1,000).
    #[arg(short = 'n', long, default_value_t = 20, value_name = "N")]
    limit: u32,
}

/// Whether this `fsctl search` goes into the history (see the module doc).
pub fn recording(tty: bool) -> bool {
    match std::env::var("FSINDEX_HISTORY").as_deref() {
        Ok("1") | Ok("always") => true,
        Ok("0") | Ok("never") => false,
        _ => tty,
    }
}

/// Adds a search to the history. Best effort: a daemon too old for it, or
/// one that went away, costs the search nothing.
pub async fn record(mut client: fsindex_client::Client, query: &str, results: u64) {
    let _ = client
        .history(pb::HistoryRequest {
            record: Some(pb::HistoryRecord {
                query: query.to_owned(),
                results,
                client: "fsctl".into(),
            }),
            limit: 0,
        })
        .await;
}

/// When, in local time, for a person.
fn local(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| {
            t.to_zoned(jiff::tz::TimeZone::system())
                .strftime("%Y-%m-%d %H:%M:%S")
                .to_string()
        })
        .unwrap_or_default()
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let mut client = g.client().await?;
    let r = client
        .history(pb::HistoryRequest {
            record: None,
            limit: a.limit,
        })
        .await?
        .into_inner();
    let width = r.entries.iter().map(|e| e.results.to_string().len()).max();
    for e in &r.entries {
        if g.json {
            println!(
                "{}",
                json!({
                    "query": e.query,
                    "results": e.results,
                    "client": e.client,
                    "at": rfc3339(e.at_unix_ms.saturating_mul(1_000_000)),
                })
            );
        } else {
            println!(
                "{}  {:>w$}  {:<5}  {}",
                local(e.at_unix_ms),
                e.results,
                e.client,
                e.query,
                w = width.unwrap_or(0)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
