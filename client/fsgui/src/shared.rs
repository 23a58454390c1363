//! Saved searches and search history, kept by the daemon (the SavedSearches
//! and History RPCs) and shared with `fsctl` and MCP agents: a search saved
//! here runs as `fsctl search @NAME`, and `fsctl history` lists what was
//! searched here. The window keeps a copy to draw its menu from, read again
//! after each change ([`Call`] in, [`Answer`] out, through the backend).
//!
//! What the window records: a query acted on (Enter, or an action on its
//! rows), not each keystroke. A history and saved searches an older fsgui
//! kept in `fsgui.toml` are imported once, at the first connection, and
//! then taken out of the file.

use fsindex_client::Client;
use fsindex_proto::v1 as pb;

/// How many of the newest searches the menu reads.
pub const HISTORY_READ: u32 = 50;

/// What the window asks of the daemon; each call answers both lists after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// Only read the lists.
    Load,
    /// Save `query` under `name`.
    Save { name: String, query: String },
    /// Forget the saved search `name`.
    Remove { name: String },
    /// Add a query acted on, with how many results it had.
    Record { query: String, results: u64 },
    /// Bring a local history (newest first) and saved queries into the
    /// daemon.
    Import {
        history: Vec<String>,
        saved: Vec<String>,
    },
}

/// What comes back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Lists {
        /// (name, query), by name.
        saved: Vec<(String, String)>,
        /// Queries, newest first, without repeats.
        history: Vec<String>,
        /// The user's bookmarks, by name.
        bookmarks: Vec<Place>,
        /// Every tag the user sees, with how many entries carry it.
        tags: Vec<TagCount>,
        /// The call was an import, done.
        imported: bool,
    },
    Failed(String),
}

/// A bookmark: a named folder or file, where it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub name: String,
    pub path: Vec<u8>,
    pub folder: bool,
}

/// A tag and how many entries carry it (the user's and the files' own
/// counted apart: `from_file`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagCount {
    pub name: String,
    pub entries: u64,
    pub from_file: bool,
}

/// The window's copy of the daemon's lists.
#[derive(Clone, Debug, Default)]
pub struct SharedSearches {
    pub saved: Vec<(String, String)>,
    pub history: Vec<String>,
    pub bookmarks: Vec<Place>,
    pub tags: Vec<TagCount>,
    /// Read at least once.
    pub loaded: bool,
}

/// The query term that keeps entries carrying `tag`.
pub fn tag_term(tag: &str) -> String {
    if tag.contains([' ', '"', '|']) {
        format!("tag:\"{}\"", tag.replace('"', ""))
    } else {
        format!("tag:{tag}")
    }
}

/// `query` with `term` added at its end, or taken out where it stands as
/// a whole term.
pub fn toggle_term(query: &str, term: &str) -> String {
    let words: Vec<&str> = query.split(' ').filter(|w| !w.is_empty()).collect();
    // A term with a quoted space is several words when split: compare the
    // text, not the words.
    let padded = format!(" {} ", words.join(" "));
    let needle = format!(" {term} ");
    if let Some(at) = padded.find(&needle) {
        let rest = format!("{}{}", &padded[..at], &padded[at + needle.len() - 1..]);
        return rest.trim().to_owned();
    }
    if words.is_empty() {
        format!("{term} ")
    } else {
        format!("{} {term} ", words.join(" "))
    }
}

/// The query that searches in a bookmark: under a folder; a file by its
/// name in its folder.
pub fn query_for(place: &Place) -> String {
    let folder = crate::actions::folder_of(&place.path, place.folder);
    let mut q = crate::actions::search_in(&folder);
    if !place.folder {
        let name = place
            .path
            .rsplit(|&b| b == b'/')
            .next()
            .unwrap_or(&place.path);
        q.push_str(&format!(
            "\"{}\" ",
            String::from_utf8_lossy(name).replace('"', "")
        ));
    }
    q
}

impl SharedSearches {
    /// The saved search whose query is `query`, or which `query` (`@name`)
    /// runs: its name.
    pub fn saved_as(&self, query: &str) -> Option<&str> {
        let q = query.trim();
        let called = q.strip_prefix('@');
        self.saved
            .iter()
            .find(|(n, s)| s == q || called.is_some_and(|c| c.eq_ignore_ascii_case(n)))
            .map(|(n, _)| n.as_str())
    }
}

/// A name for a query saved without one (the ☆ button, an import): its
/// words joined by `-`, kept to what a name may hold, and made unlike the
/// names in `taken` (ASCII case-insensitively) with `-2`, `-3`...
pub fn name_for(query: &str, taken: &[String]) -> String {
    let mut base = String::new();
    for c in query.chars() {
        if c.is_alphanumeric() || c == '_' || c == '.' {
            base.push(c);
        } else if !base.is_empty() && !base.ends_with('-') {
            base.push('-');
        }
        if base.len() >= 40 {
            break;
        }
    }
    let base = base.trim_end_matches('-');
    let base = if base.is_empty() { "search" } else { base };
    let free = |n: &str| !taken.iter().any(|t| t.eq_ignore_ascii_case(n));
    if free(base) {
        return base.to_owned();
    }
    (2..)
        .map(|i| format!("{base}-{i}"))
        .find(|n| free(n))
        .expect("an unbounded range has a free name")
}

async fn save(client: &mut Client, name: String, query: String) -> Result<(), tonic::Status> {
    client
        .saved_searches(pb::SavedSearchesRequest {
            action: pb::SavedSearchesAction::Add as i32,
            name,
            query,
            replace: false,
        })
        .await
        .map(drop)
}

async fn record(client: &mut Client, query: String, results: u64) -> Result<(), tonic::Status> {
    client
        .history(pb::HistoryRequest {
            record: Some(pb::HistoryRecord {
                query,
                results,
                client: "fsgui".into(),
            }),
            limit: 0,
        })
        .await
        .map(drop)
}

/// How many entries `query` matches now (an imported query's count).
async fn count(client: &mut Client, query: &str) -> u64 {
    let req = pb::SearchRequest {
        query: query.to_owned(),
        limit: 1,
        snippets: Some(0),
        ..Default::default()
    };
    match client.search(req).await {
        Ok(r) => r
            .into_inner()
            .message()
            .await
            .ok()
            .flatten()
            .map_or(0, |m| m.total),
        Err(_) => 0,
    }
}

async fn lists(client: &mut Client, imported: bool) -> Result<Answer, tonic::Status> {
    let saved = client
        .saved_searches(pb::SavedSearchesRequest {
            action: pb::SavedSearchesAction::List as i32,
            ..Default::default()
        })
        .await?
        .into_inner()
        .searches
        .into_iter()
        .map(|s| (s.name, s.query))
        .collect();
    let mut history: Vec<String> = Vec::new();
    for e in client
        .history(pb::HistoryRequest {
            record: None,
            limit: HISTORY_READ,
        })
        .await?
        .into_inner()
        .entries
    {
        if !history.contains(&e.query) {
            history.push(e.query);
        }
    }
    let bookmarks = client
        .bookmarks(pb::BookmarksRequest {
            action: pb::BookmarksAction::List as i32,
            ..Default::default()
        })
        .await?
        .into_inner()
        .bookmarks
        .into_iter()
        .map(|b| Place {
            name: b.name,
            path: b.path,
            folder: b.r#type == pb::EntryType::Dir as i32,
        })
        .collect();
    let tags = client
        .tags(pb::TagsRequest {
            action: pb::TagsAction::List as i32,
            ..Default::default()
        })
        .await?
        .into_inner()
        .tags
        .into_iter()
        .map(|t| TagCount {
            name: t.name,
            entries: t.entries,
            from_file: t.source != pb::TagSource::User as i32,
        })
        .collect();
    Ok(Answer::Lists {
        saved,
        history,
        bookmarks,
        tags,
        imported,
    })
}

/// Does one call, then reads both lists.
pub async fn run(mut client: Client, call: Call) -> Answer {
    let done = async {
        let mut imported = false;
        match call {
            Call::Load => {}
            Call::Save { name, query } => save(&mut client, name, query).await?,
            Call::Remove { name } => {
                client
                    .saved_searches(pb::SavedSearchesRequest {
                        action: pb::SavedSearchesAction::Remove as i32,
                        name,
                        ..Default::default()
                    })
                    .await?;
            }
            Call::Record { query, results } => record(&mut client, query, results).await?,
            Call::Import { history, saved } => {
                // Oldest first, so the newest ends on top.
                for q in history.iter().rev() {
                    let n = count(&mut client, q).await;
                    record(&mut client, q.clone(), n).await?;
                }
                let already: Vec<(String, String)> = client
                    .saved_searches(pb::SavedSearchesRequest {
                        action: pb::SavedSearchesAction::List as i32,
                        ..Default::default()
                    })
                    .await?
                    .into_inner()
                    .searches
                    .into_iter()
                    .map(|s| (s.name, s.query))
                    .collect();
                let mut taken: Vec<String> = already.iter().map(|(n, _)| n.clone()).collect();
                for q in saved {
                    // `in:~/x` made absolute, as ☆ and `fsctl saved add` do.
                    let q = crate::backend::expand_home(&q);
                    // Saved already (with fsctl, or by an import cut short):
                    // not saved twice under two names.
                    if already.iter().any(|(_, s)| s.trim() == q.trim()) {
                        continue;
                    }
                    let name = name_for(&q, &taken);
                    match save(&mut client, name.clone(), q).await {
                        // A query the daemon refuses (it no longer parses)
                        // is left behind rather than blocking the rest.
                        Err(s) if s.code() == tonic::Code::InvalidArgument => {}
                        other => other?,
                    }
                    taken.push(name);
                }
                imported = true;
            }
        }
        lists(&mut client, imported).await
    };
    done.await
        .unwrap_or_else(|s| Answer::Failed(s.message().to_owned()))
}

// The window's side: what it sends and how it takes the answers.
impl crate::App {
    /// At each connection: the lists, or first the import of what an older
    /// fsgui kept in `fsgui.toml`.
    pub(crate) fn load_shared(&mut self) {
        let call = if self.settings.history.is_empty() && self.settings.saved.is_empty() {
            Call::Load
        } else {
            Call::Import {
                history: self.settings.history.clone(),
                saved: self.settings.saved.clone(),
            }
        };
        self.send(vec![crate::backend::Request::Shared(call)]);
    }

    /// Adds the current query, acted on, to the shared history.
    pub fn remember_query(&mut self) {
        let query = self.search.query.trim().to_owned();
        if query.is_empty() || self.search.error.is_some() {
            return;
        }
        let results = self.search.results.total;
        self.send(vec![crate::backend::Request::Shared(Call::Record {
            query,
            results,
        })]);
    }

    /// Saves the current query (named after its words), or forgets it if
    /// it is saved.
    pub fn toggle_saved(&mut self) {
        let query = self.search.query.trim().to_owned();
        if query.is_empty() {
            return;
        }
        let call = match self.shared.saved_as(&query) {
            Some(name) => {
                let name = name.to_owned();
                self.say(format!("removed @{name} from the saved searches"));
                Call::Remove { name }
            }
            None => {
                let taken: Vec<String> = self.shared.saved.iter().map(|(n, _)| n.clone()).collect();
                let name = name_for(&query, &taken);
                self.say(format!(
                    "saved as @{name} (fsctl search @{name} runs it too)"
                ));
                Call::Save {
                    name,
                    query: crate::backend::expand_home(&query),
                }
            }
        };
        self.send(vec![crate::backend::Request::Shared(call)]);
    }

    pub(crate) fn apply_shared(&mut self, answer: Answer) {
        match answer {
            Answer::Lists {
                saved,
                history,
                bookmarks,
                tags,
                imported,
            } => {
                if tags != self.shared.tags {
                    // Tags were added or taken off: the Tags column asks again.
                    self.details.forget();
                }
                self.shared = SharedSearches {
                    saved,
                    history,
                    bookmarks,
                    tags,
                    loaded: true,
                };
                if imported {
                    // Imported once: the daemon holds them now.
                    self.settings.history.clear();
                    self.settings.saved.clear();
                    self.save_settings();
                }
            }
            Answer::Failed(why) => self.fail(format!("saved searches and history: {why}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_filter_is_added_and_taken_out_whole() {
        assert_eq!(tag_term("work"), "tag:work");
        assert_eq!(tag_term("q3 plan"), "tag:\"q3 plan\"");
        assert_eq!(toggle_term("", "tag:work"), "tag:work ");
        assert_eq!(toggle_term("report ", "tag:work"), "report tag:work ");
        assert_eq!(
            toggle_term("report tag:work ext:pdf", "tag:work"),
            "report ext:pdf"
        );
        assert_eq!(toggle_term("a tag:\"q3 plan\"", "tag:\"q3 plan\""), "a");
        // Not a part of another term.
        assert_eq!(
            toggle_term("tag:workshop", "tag:work"),
            "tag:workshop tag:work "
        );
    }

    #[test]
    fn a_bookmark_searches_its_folder_or_its_file() {
        let folder = Place {
            name: "alpha".into(),
            path: b"/p/my alpha".to_vec(),
            folder: true,
        };
        assert_eq!(query_for(&folder), "in:\"/p/my alpha\" ");
        let file = Place {
            name: "plan".into(),
            path: b"/p/docs/plan.odt".to_vec(),
            folder: false,
        };
        assert_eq!(query_for(&file), "in:/p/docs \"plan.odt\" ");
    }

    #[test]
    fn names_for_queries_are_words_joined_and_never_taken() {
        assert_eq!(name_for("ext:pdf tax 2025", &[]), "ext-pdf-tax-2025");
        assert_eq!(name_for("size:>1gb", &[]), "size-1gb");
        assert_eq!(name_for("\"@@\"", &[]), "search");
        let taken = vec!["ext-pdf".to_owned(), "EXT-PDF-2".to_owned()];
        assert_eq!(name_for("ext:pdf", &taken), "ext-pdf-3");
        assert!(name_for(&"word ".repeat(40), &[]).len() <= 41);
    }
}
