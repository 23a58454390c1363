//! The user's saved searches for agents: `list_saved_searches` lists them
//! (run one with `@NAME` in find_files' query: the daemon puts the saved
//! query in its place), and find_files records the agent's queries in the
//! user's search history (client `mcp`), so that `fsctl history` and fsgui
//! show what an agent looked for. Both are the daemon's, shared with fsctl
//! and fsgui.

use fsindex_proto::v1 as pb;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::index::{Ctx, Outcome, reply};
use crate::output::rfc3339;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListSavedParams {
    /// Only the saved searches whose name holds this text (case-insensitive).
    pub name: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SavedItem {
    /// Run it with `@NAME` in find_files' query (alone, or with more terms).
    pub name: String,
    /// The query it stands for.
    pub query: String,
    /// When it was saved, RFC 3339 UTC.
    pub added: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SavedAnswer {
    pub saved_searches: Vec<SavedItem>,
    /// Saved searches left out to fit the answer's byte budget.
    pub left_out: u64,
}

pub async fn list_saved_searches(ctx: &Ctx, p: ListSavedParams) -> Outcome {
    let r = ctx
        .rpc(|mut c| async move {
            c.saved_searches(pb::SavedSearchesRequest {
                action: pb::SavedSearchesAction::List as i32,
                ..Default::default()
            })
            .await
            .map(tonic::Response::into_inner)
        })
        .await
        .map_err(|s| ctx.daemon_error("", s))?;
    let name = p.name.map(|n| n.to_lowercase());
    let all: Vec<SavedItem> = r
        .searches
        .into_iter()
        .filter(|s| {
            name.as_deref()
                .is_none_or(|n| s.name.to_lowercase().contains(n))
        })
        .map(|s| SavedItem {
            name: s.name,
            query: s.query,
            added: rfc3339(s.added_unix.saturating_mul(1_000_000_000)),
        })
        .collect();
    let n = all.len();
    let (answer, text) = ctx.fit(n, |k| {
        let answer = SavedAnswer {
            saved_searches: all[..k].to_vec(),
            left_out: (n - k) as u64,
        };
        let mut text = format!("{n} saved searches (run one with `@NAME` in find_files' query)\n");
        for s in &all[..k] {
            text.push_str(&format!("@{}  {}  (saved {})\n", s.name, s.query, s.added));
        }
        text.push_str(&format!("leftOut: {} (over the byte budget)\n", n - k));
        (answer, text)
    });
    reply(&answer, text)
}

/// Adds an agent's query to the user's history. Best effort: a history
/// that cannot be written never fails the search.
pub async fn record(ctx: &Ctx, query: &str, results: u64) {
    let record = pb::HistoryRecord {
        query: query.to_owned(),
        results,
        client: "mcp".into(),
    };
    let _ = ctx
        .rpc(|mut c| {
            let record = record.clone();
            async move {
                c.history(pb::HistoryRequest {
                    record: Some(record),
                    limit: 0,
                })
                .await
            }
        })
        .await;
}
