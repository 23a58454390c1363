//! MCP Roots: a client that offers them says which folders the session is
//! about, and the allowed directories are narrowed to them, as the
//! reference filesystem server does. The outer bound stays what `--allow`
//! (or the daemon's roots) allow: a root inside it is allowed as it is, a
//! root that holds part of it allows that part, a root outside it allows
//! nothing. An empty list of roots leaves the bound as it is (the client
//! has no opinion); the list is asked again on `roots/list_changed`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::service::Peer;

use super::guard::Guard;
use super::index::Ctx;
use super::names::shown_path;

pub struct Roots {
    bound: Vec<PathBuf>,
    home: Option<PathBuf>,
    /// Whether the first answer to roots/list is in (or none is coming).
    settled: tokio::sync::watch::Sender<bool>,
}

impl Roots {
    pub fn new(bound: Vec<PathBuf>, home: Option<PathBuf>) -> Roots {
        Roots {
            bound,
            home,
            settled: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Waits until the client's roots are known, at most `limit`.
    pub async fn settled(&self, limit: Duration) {
        let mut rx = self.settled.subscribe();
        let _ = tokio::time::timeout(limit, rx.wait_for(|s| *s)).await;
    }

    /// After `initialized`: asks for the roots when the client offers them.
    pub async fn start(self: &Arc<Self>, peer: Peer<RoleServer>, ctx: Arc<Ctx>) {
        let offered = peer
            .peer_info()
            .is_some_and(|i| i.capabilities.roots.is_some());
        if !offered {
            self.settled.send_replace(true);
            return;
        }
        self.refresh(peer, ctx).await;
    }

    /// Asks the client for its roots (in a task of its own: the client may
    /// answer only after this notification is handled) and narrows.
    // Roots are deprecated by SEP-2577 (protocol 2026-07-28), but the
    // clients of the revisions before it offer them, and they are how such
    // a client says which folders a session is about.
    #[allow(deprecated)]
    pub async fn refresh(self: &Arc<Self>, peer: Peer<RoleServer>, ctx: Arc<Ctx>) {
        // Calls wait for the new roots (a while at most), not answer from the old.
        self.settled.send_replace(false);
        let me = self.clone();
        tokio::spawn(async move {
            match tokio::time::timeout(Duration::from_secs(10), peer.list_roots()).await {
                Ok(Ok(r)) => {
                    let uris: Vec<String> = r.roots.into_iter().map(|r| r.uri).collect();
                    let allowed = narrow(&me.bound, &uris);
                    eprintln!(
                        "fsctl mcp: the client's roots ({}) allow: {}",
                        uris.join(", "),
                        if allowed.is_empty() {
                            "nothing".to_owned()
                        } else {
                            allowed
                                .iter()
                                .map(|p| shown_path(p))
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    );
                    ctx.set_guard(Guard::new(allowed, me.home.clone()));
                }
                Ok(Err(e)) => {
                    eprintln!("fsctl mcp: roots/list failed ({e}); keeping the allowed directories")
                }
                Err(_) => eprintln!(
                    "fsctl mcp: roots/list got no answer in 10 s; keeping the allowed directories"
                ),
            }
            me.settled.send_replace(true);
        });
    }
}

/// The allowed directories under `bound` that the client's roots name.
pub fn narrow(bound: &[PathBuf], uris: &[String]) -> Vec<PathBuf> {
    if uris.is_empty() {
        return bound.to_vec();
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for u in uris {
        let Some(p) = file_uri_path(u) else {
            eprintln!("fsctl mcp: root {u}: not a file:// URI; left out");
            continue;
        };
        let Ok(real) = fsindex_proto::paths::canonicalize(&p) else {
            eprintln!("fsctl mcp: root {u}: cannot resolve it; left out");
            continue;
        };
        for b in bound {
            let pick = if real.starts_with(b) {
                real.clone()
            } else if b.starts_with(&real) {
                b.clone()
            } else {
                continue;
            };
            if !out.contains(&pick) {
                out.push(pick);
            }
        }
    }
    out
}

/// `file:///a/b%20c` -> `/a/b c` (percent escapes decoded to bytes).
fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // file://localhost/path and file:///path
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let b = rest.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(h) = rest.get(i + 1..i + 3)
            && let Ok(v) = u8::from_str_radix(h, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    #[cfg(unix)]
    {
        Some(super::names::path_of(out))
    }
    #[cfg(not(unix))]
    {
        // file:///C:/Users -> C:/Users
        let s = String::from_utf8(out).ok()?;
        Some(PathBuf::from(s.trim_start_matches('/')))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn roots_narrow_within_the_bound() {
        use std::path::Path;
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let allowed = base.join("allowed");
        std::fs::create_dir_all(allowed.join("a b/c")).unwrap();
        std::fs::create_dir_all(base.join("other")).unwrap();
        let bound = vec![allowed.clone()];
        let uri = |p: &Path| format!("file://{}", p.display()).replace(' ', "%20");
        assert_eq!(narrow(&bound, &[]), bound);
        assert_eq!(
            narrow(&bound, &[uri(&allowed.join("a b"))]),
            vec![allowed.join("a b")]
        );
        assert_eq!(narrow(&bound, &[uri(&base)]), bound);
        assert!(narrow(&bound, &[uri(&base.join("other"))]).is_empty());
        assert!(narrow(&bound, &["https://example.invalid/x".into()]).is_empty());
        assert_eq!(
            file_uri_path("file:///x/%E9t%C3%A9").unwrap(),
            super::super::names::path_of(b"/x/\xe9t\xc3\xa9".to_vec())
        );
    }
}
