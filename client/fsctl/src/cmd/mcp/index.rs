//! What every tool shares: the daemon connection, the guard, scoped search,
//! cursors, kinds, and turning answers and failures into tool results.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use fsindex_proto::v1 as pb;
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

use super::guard::{Guard, Refusal};
use crate::output::{lossy, path_bytes, rfc3339, type_name};

/// Why a tool call failed: one line, returned as a tool error (`isError`).
#[derive(Debug)]
pub struct Failure(pub String);

impl From<Refusal> for Failure {
    fn from(r: Refusal) -> Failure {
        Failure(r.0)
    }
}

pub type Outcome = Result<CallToolResult, Failure>;

/// Structured content plus its short text rendering.
pub fn reply<T: Serialize>(value: &T, text: String) -> Outcome {
    let v = serde_json::to_value(value).map_err(|e| Failure(format!("internal: {e}")))?;
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(v);
    Ok(r)
}

pub fn finish(o: Outcome) -> CallToolResult {
    o.unwrap_or_else(|f| CallToolResult::error(vec![ContentBlock::text(f.0)]))
}

/// State shared by every tool call.
pub struct Ctx {
    client: fsindex_client::Client,
    pub guard: Guard,
    /// Kind of each extension (lower case; the whole lower-case name for a
    /// name without one), learned from the daemon's Stat and kept.
    kinds: Mutex<HashMap<String, String>>,
}

/// One search result, as every tool shows it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FoundEntry {
    pub path: String,
    /// file, dir, symlink or other.
    #[serde(rename = "type")]
    pub kind_of_entry: String,
    /// Bytes (st_size).
    pub size: u64,
    /// Last modification, RFC 3339 UTC.
    pub mtime: String,
    /// Matches a WARN-tier sensitive pattern (e.g. `*password*`).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub sensitive: bool,
}

impl FoundEntry {
    pub fn from_pb(e: &pb::Entry) -> FoundEntry {
        FoundEntry {
            path: lossy(&e.path),
            kind_of_entry: type_name(e.r#type).to_owned(),
            size: e.size,
            mtime: rfc3339(e.mtime_ns),
            sensitive: e.sensitive,
        }
    }
}

/// A page of a long list: where it starts, and the cursor of the next one.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub offset: u64,
    pub limit: u64,
}

impl Ctx {
    pub fn new(client: fsindex_client::Client, guard: Guard) -> Ctx {
        Ctx {
            client,
            guard,
            kinds: Mutex::new(HashMap::new()),
        }
    }

    pub fn client(&self) -> fsindex_client::Client {
        self.client.clone()
    }

    /// A daemon error as one line; NOT_FOUND reads like the guard's refusal.
    pub fn daemon_error(&self, raw: &str, s: tonic::Status) -> Failure {
        match s.code() {
            tonic::Code::NotFound => Refusal::denied(raw).into(),
            tonic::Code::InvalidArgument => Failure(s.message().to_owned()),
            _ => Failure(format!("fsindexd: {}", s.message())),
        }
    }

    /// The `in:` scope of a search: the given folder, or every allowed
    /// directory as alternatives.
    pub fn scope(&self, path: Option<&Path>) -> Result<String, Failure> {
        let dirs: Vec<&Path> = match path {
            Some(p) => vec![p],
            None => self.guard.allowed().iter().map(PathBuf::as_path).collect(),
        };
        let mut alts = Vec::new();
        for d in dirs {
            let s = d.to_string_lossy();
            if s.contains('"') {
                return Err(Failure(format!(
                    "{s}: a folder whose path holds a double quote cannot be searched"
                )));
            }
            alts.push(format!("in:\"{s}\""));
        }
        Ok(alts.join("|"))
    }

    /// Guards the `in:` filters of a query an agent wrote (relative and `~`
    /// paths made absolute, outside ones refused).
    pub fn guard_query(&self, query: &str) -> Result<String, Failure> {
        let mut out = Vec::new();
        for t in query.split(' ') {
            let (neg, rest) = t.strip_prefix('!').map_or(("", t), |r| ("!", r));
            match rest.strip_prefix("in:") {
                Some(v) if !v.is_empty() && !v.starts_with('"') => {
                    let p = self.guard.existing(v)?;
                    out.push(format!("{neg}in:\"{}\"", p.to_string_lossy()));
                }
                _ => out.push(t.to_owned()),
            }
        }
        Ok(out.join(" "))
    }

    /// Runs a search; returns the total and the entries from `offset`,
    /// at most `limit` of them (0: all). The daemon skips the first
    /// `offset` (its orders are total, so pages fit together).
    pub async fn search(
        &self,
        query: String,
        sort: pb::SortOrder,
        offset: u64,
        limit: u64,
    ) -> Result<(u64, Vec<pb::Entry>), Failure> {
        let fail = |s: tonic::Status| match s.code() {
            // Every `in:` folder passed the guard: the daemon keeps it out.
            tonic::Code::NotFound => Failure(
                "a folder of the search is not in the index (excluded, or kept out as sensitive)"
                    .into(),
            ),
            _ => self.daemon_error(&query, s),
        };
        let mut c = self.client();
        let mut stream = c
            .search(pb::SearchRequest {
                query: query.clone(),
                limit,
                sort: sort as i32,
                sync: false,
                reverse: false,
                offset,
            })
            .await
            .map_err(fail)?
            .into_inner();
        let mut total = 0;
        let mut out = Vec::new();
        while let Some(chunk) = stream.message().await.map_err(fail)? {
            total = chunk.total;
            out.extend(chunk.entries);
        }
        Ok((total, out))
    }

    /// The kind of a file (`document`, `image`, ..., `other`), as the
    /// daemon's `kind:` filter sees it. The daemon's search results carry no
    /// kind, so one file per extension is asked about with Stat, and the
    /// answer kept.
    pub async fn kind(&self, path: &[u8], name: &str) -> String {
        let key = kind_key(name);
        if let Some(k) = self.kinds.lock().unwrap().get(&key) {
            return k.clone();
        }
        let mut c = self.client();
        let kind = match c
            .stat(pb::StatRequest {
                path: path.to_vec(),
            })
            .await
        {
            Ok(r) => {
                let k = r.into_inner().kind;
                if k.is_empty() { "other".to_owned() } else { k }
            }
            Err(_) => return "other".to_owned(),
        };
        self.kinds.lock().unwrap().insert(key, kind.clone());
        kind
    }

    pub async fn stat(&self, raw: &str, path: &Path) -> Result<pb::StatResponse, Failure> {
        let mut c = self.client();
        c.stat(pb::StatRequest {
            path: path_bytes(path),
        })
        .await
        .map(tonic::Response::into_inner)
        .map_err(|s| self.daemon_error(raw, s))
    }
}

/// What decides a file's kind: its extension, or its whole name without one.
pub fn kind_key(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    // The one name with an extension whose kind is not its extension's.
    if lower == "cmakelists.txt" {
        return lower;
    }
    match lower.rsplit_once('.') {
        Some((_, ext)) => format!(".{ext}"),
        None => lower,
    }
}

/// An opaque cursor: the offset of the next page and a fingerprint of the
/// request, so that a cursor is refused by any other request.
pub fn cursor(offset: u64, fingerprint: &impl Hash) -> String {
    format!("{offset}.{:016x}", digest(fingerprint))
}

fn digest(v: &impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

/// The page a request asks for: `limit` within `1..=max` (default
/// `default`), from the cursor's offset.
pub fn page(
    cursor_in: Option<&str>,
    limit: Option<u64>,
    default: u64,
    max: u64,
    fingerprint: &impl Hash,
) -> Result<Page, Failure> {
    let limit = limit.unwrap_or(default).clamp(1, max);
    let offset = match cursor_in.filter(|c| !c.is_empty()) {
        None => 0,
        Some(c) => {
            let bad = || {
                Failure(format!(
                    "cursor `{c}` does not belong to this request: pass back the nextCursor of the same call with the same arguments"
                ))
            };
            let (o, f) = c.split_once('.').ok_or_else(bad)?;
            if f != format!("{:016x}", digest(fingerprint)) {
                return Err(bad());
            }
            o.parse().map_err(|_| bad())?
        }
    };
    Ok(Page { offset, limit })
}

/// The next cursor when more remain after this page.
pub fn next_cursor(p: Page, shown: u64, total: u64, fingerprint: &impl Hash) -> Option<String> {
    let end = p.offset + shown;
    (end < total && shown > 0).then(|| cursor(end, fingerprint))
}

/// The path of `p` below `base`, or `p` itself.
pub fn relative(p: &str, base: &Path) -> String {
    let b = base.to_string_lossy();
    p.strip_prefix(b.as_ref())
        .map(|r| r.trim_start_matches('/'))
        .filter(|r| !r.is_empty())
        .unwrap_or(p)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_belong_to_their_request() {
        let fp = ("find_files", "report", 100u64);
        let c = cursor(300, &fp);
        let p = page(Some(&c), Some(100), 50, 1000, &fp).unwrap();
        assert_eq!((p.offset, p.limit), (300, 100));
        assert!(page(Some(&c), Some(100), 50, 1000, &("other", "q", 1u64)).is_err());
        assert!(page(Some("garbage"), None, 50, 1000, &fp).is_err());
        assert_eq!(
            page(None, Some(1_000_000), 50, 1000, &fp).unwrap().limit,
            1000
        );
        assert_eq!(
            next_cursor(
                Page {
                    offset: 0,
                    limit: 10
                },
                10,
                10,
                &fp
            ),
            None
        );
        assert!(
            next_cursor(
                Page {
                    offset: 0,
                    limit: 10
                },
                10,
                11,
                &fp
            )
            .is_some()
        );
    }

    #[test]
    fn kind_keys() {
        assert_eq!(kind_key("Report.PDF"), ".pdf");
        assert_eq!(kind_key("Makefile"), "makefile");
    }
}
