//! Saved searches and search history (issue 34), kept in the index so that
//! fsctl, fsgui and MCP share them; one call per RPC given the caller's
//! view. Whose: as for labels ([`label_uid`]): a per-user daemon keeps its
//! user's, a machine-wide one each calling user's, never shown to another.
//!
//! What is recorded is the clients' choice, said in their docs (fsctl: a
//! search typed at a terminal; fsgui: a query acted on; MCP: an agent's
//! first page of find_files or search_files); the daemon keeps the newest
//! [`HISTORY_KEPT`] per user.

use std::borrow::Cow;

use super::*;
use crate::queries::query::Query;
use crate::queries::saved;
use crate::store::searches::{self, Edit, Outcome};
pub use crate::store::searches::{HISTORY_KEPT, Recent, Saved};

/// At most this many bytes in a client's name in the history.
const MAX_CLIENT_BYTES: usize = 32;

impl Engine {
    fn edit_searches(&self, edit: Edit) -> Result<Outcome, Error> {
        let (tx, rx) = mpsc::channel();
        self.writer.send(vec![Op::Searches { edit, reply: tx }])?;
        rx.recv().map_err(|_| Error::WriterGone)
    }

    /// `query` with the caller's saved searches in place of their `@name`
    /// (see [`saved`]); a query without `@` is not looked at twice.
    pub fn expand_saved<'a>(
        &self,
        query: &'a str,
        view: &Option<View>,
    ) -> Result<Cow<'a, str>, Error> {
        let uid = label_uid(view);
        saved::expand(
            query,
            |name| {
                Ok(self
                    .store
                    .read(|c| searches::named(c, uid, name))?
                    .map(|s| s.query))
            },
            || {
                Ok(self
                    .saved_searches(view)?
                    .into_iter()
                    .map(|s| s.name)
                    .collect())
            },
        )
    }

    /// The caller's saved searches, by name.
    pub fn saved_searches(&self, view: &Option<View>) -> Result<Vec<Saved>, Error> {
        let uid = label_uid(view);
        self.store.read(|c| searches::saved(c, uid))
    }

    /// Saves `query` as `name` for the caller (ALREADY_EXISTS for a name
    /// taken, unless `replace`). The query must parse, and may not call
    /// other saved searches. Answers the caller's saved searches.
    pub fn save_search(
        &self,
        name: &str,
        query: &str,
        replace: bool,
        view: &Option<View>,
    ) -> Result<Vec<Saved>, Error> {
        let name = saved::check_name(name)?;
        let query = query.trim();
        if let Some(inner) = saved::calls(query)?.first() {
            return Err(Error::InvalidArgument(format!(
                "a saved search cannot call another (`@{inner}`): save the terms themselves"
            )));
        }
        Query::parse(query)?;
        let outcome = self.edit_searches(Edit::Save {
            uid: label_uid(view),
            name: name.to_owned(),
            query: query.to_owned(),
            replace,
        })?;
        if let Outcome::Taken(old) = outcome {
            return Err(Error::Exists(format!(
                "a saved search named `{old}` exists already; remove it first, or replace it (`fsctl saved add --replace`)"
            )));
        }
        self.saved_searches(view)
    }

    /// Forgets the caller's saved search `name` (NOT_FOUND-like `Missing`,
    /// listing the names, when there is none).
    pub fn remove_saved_search(
        &self,
        name: &str,
        view: &Option<View>,
    ) -> Result<Vec<Saved>, Error> {
        let name = name.trim();
        let name = name.strip_prefix('@').unwrap_or(name);
        let outcome = self.edit_searches(Edit::Remove {
            uid: label_uid(view),
            name: name.to_owned(),
        })?;
        if outcome == Outcome::Missing {
            let names: Vec<String> = self
                .saved_searches(view)?
                .into_iter()
                .map(|s| format!("@{}", s.name))
                .collect();
            return Err(Error::Missing(if names.is_empty() {
                format!("no saved search called `@{name}`: there are none")
            } else {
                format!(
                    "no saved search called `@{name}`; saved: {}",
                    names.join(", ")
                )
            }));
        }
        self.saved_searches(view)
    }

    /// Adds a search to the caller's history: `client` is who ran it
    /// (fsctl, fsgui, mcp, or a program's own name).
    pub fn record_search(
        &self,
        query: &str,
        results: u64,
        client: &str,
        view: &Option<View>,
    ) -> Result<(), Error> {
        let query = query.trim();
        if query.is_empty() {
            return Err(Error::InvalidArgument(
                "record which query? it is empty".into(),
            ));
        }
        if query.len() > crate::queries::query::MAX_QUERY_BYTES {
            return Err(Error::InvalidArgument(format!(
                "the query is {} bytes long; at most {}",
                query.len(),
                crate::queries::query::MAX_QUERY_BYTES
            )));
        }
        let client = client.trim();
        if client.is_empty()
            || client.len() > MAX_CLIENT_BYTES
            || client.chars().any(char::is_control)
        {
            return Err(Error::InvalidArgument(format!(
                "client `{}`: name the program that searched (1 to {MAX_CLIENT_BYTES} bytes, no control characters)",
                client.escape_debug()
            )));
        }
        let at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        self.edit_searches(Edit::Record {
            uid: label_uid(view),
            query: query.to_owned(),
            results,
            client: client.to_owned(),
            at_ms,
        })?;
        Ok(())
    }

    /// The caller's newest `limit` searches (0: all kept), newest first.
    pub fn search_history(&self, limit: usize, view: &Option<View>) -> Result<Vec<Recent>, Error> {
        let uid = label_uid(view);
        let limit = if limit == 0 {
            HISTORY_KEPT as usize
        } else {
            limit
        };
        self.store.read(|c| searches::history(c, uid, limit))
    }
}
