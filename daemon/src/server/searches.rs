//! Conversions for the SavedSearches and History RPCs (the engine's
//! `engine::searches` does the work).

use fsindex_proto::v1 as pb;

use crate::Error;
use crate::engine::{Engine, Recent, Saved, View};

fn saved(s: Saved) -> pb::SavedSearch {
    pb::SavedSearch {
        name: s.name,
        query: s.query,
        added_unix: s.added_at,
    }
}

fn entry(r: Recent) -> pb::HistoryEntry {
    pb::HistoryEntry {
        query: r.query,
        results: r.results,
        client: r.client,
        at_unix_ms: r.at_ms,
    }
}

/// One SavedSearches call.
pub(super) fn saved_searches(
    e: &Engine,
    req: pb::SavedSearchesRequest,
    view: Option<View>,
) -> Result<pb::SavedSearchesResponse, Error> {
    let list = match pb::SavedSearchesAction::try_from(req.action).unwrap_or_default() {
        pb::SavedSearchesAction::Add => e.save_search(&req.name, &req.query, req.replace, &view)?,
        pb::SavedSearchesAction::Remove => e.remove_saved_search(&req.name, &view)?,
        _ => e.saved_searches(&view)?,
    };
    Ok(pb::SavedSearchesResponse {
        searches: list.into_iter().map(saved).collect(),
    })
}

/// One History call: the record first, then the reading.
pub(super) fn history(
    e: &Engine,
    req: pb::HistoryRequest,
    view: Option<View>,
) -> Result<pb::HistoryResponse, Error> {
    let recorded = req.record.is_some();
    if let Some(r) = req.record {
        e.record_search(&r.query, r.results, &r.client, &view)?;
    }
    let entries = if recorded && req.limit == 0 {
        Vec::new()
    } else {
        e.search_history(req.limit as usize, &view)?
    };
    Ok(pb::HistoryResponse {
        entries: entries.into_iter().map(entry).collect(),
    })
}
