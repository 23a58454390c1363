//! `fsctl mcp`: an MCP server on stdio that gives an AI agent the index in
//! a few read-only tools (rmcp). A client like the rest of fsctl: it asks
//! the daemon over gRPC and never links the daemon crate.
//!
//! stdout carries protocol messages only; anything for a person goes to
//! stderr.
//!
//! - `server`: the tools as the protocol sees them (thin), and what each
//!   call goes through first;
//! - `schema`: plain schemas, and arguments checked against them;
//! - `index`: the connection (started again when it goes away), scoped
//!   search, cursors, kinds, the byte budget, notices, replies;
//! - `guard`: every path an agent names is checked here first;
//! - `names`: names shown so that they survive JSON and come back exact;
//! - `roots`: MCP Roots narrowing the allowed directories;
//! - `browse`, `find`, `plan`: the tools' work;
//! - `organise`: the two tools that change files (`--allow-write` only);
//! - `labels`: tags and bookmarks (the index's metadata, not files: no
//!   `--allow-write` needed);
//! - `text`, `content`: decoding and the content scan.

mod browse;
mod content;
mod find;
mod guard;
mod index;
mod labels;
pub(crate) mod names;
mod organise;
mod plan;
mod projects;
mod roots;
mod schema;
mod searches;
mod server;
mod text;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use fsindex_proto::v1 as pb;
use rmcp::ServiceExt;

use crate::global::Global;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Allow only this directory (repeatable); the default is every root
    /// of the daemon visible to the caller. Each must lie under a root, or
    /// hold one (then that root is allowed).
    #[arg(long = "allow", value_name = "DIR")]
    allow: Vec<PathBuf>,
    /// The most bytes an answer's text, and its structured content, may
    /// take; longer lists are paged, and the answer says so.
    #[arg(long, value_name = "BYTES", default_value_t = index::DEFAULT_BUDGET, value_parser = clap::value_parser!(u64).range(4096..=16 << 20))]
    max_answer_bytes: u64,
    /// Serve the tools that change files: apply_move_plan and
    /// undo_move_plan (run by this process, as this user, journalled like
    /// `fsctl organise`). Without it the server is read-only.
    #[arg(long)]
    allow_write: bool,
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let mut client = g.client().await?;
    let daemon_client = client.clone();
    let roots = client
        .roots(pb::RootsRequest {
            action: pb::RootsAction::List as i32,
            ..Default::default()
        })
        .await?
        .into_inner()
        .roots;
    let roots: Vec<PathBuf> = roots
        .iter()
        .map(|r| crate::output::path_from_bytes(&r.path))
        .filter_map(|p| fsindex_proto::paths::canonicalize(p).ok())
        .collect();
    let allowed = allowed_dirs(&roots, &a.allow)?;
    eprintln!(
        "fsctl mcp: serving on stdio ({}); allowed: {}",
        if a.allow_write {
            "writes allowed: apply_move_plan, undo_move_plan"
        } else {
            "read-only"
        },
        allowed
            .iter()
            .map(|p| p.to_string_lossy())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let daemon = index::Daemon::new(g.target()?, !g.no_spawn, daemon_client);
    let ctx = index::Ctx::new(
        daemon,
        guard::Guard::new(allowed.clone(), home.clone()),
        a.max_answer_bytes as usize,
    );
    let service = server::FsIndexServer::new(ctx, allowed, home, a.allow_write)
        .serve(rmcp::transport::stdio())
        .await
        .context("starting the MCP session")?;
    service.waiting().await.context("the MCP session")?;
    Ok(ExitCode::SUCCESS)
}

/// The allowed directories: the roots, or where `--allow` narrows them,
/// each `--allow` that lies under a root (and each root that lies under an
/// `--allow`).
fn allowed_dirs(roots: &[PathBuf], allow: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    if roots.is_empty() {
        bail!("the daemon has no roots this user can see; add one with `fsctl roots add PATH`");
    }
    if allow.is_empty() {
        return Ok(roots.to_vec());
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for a in allow {
        let real = fsindex_proto::paths::canonicalize(a)
            .with_context(|| format!("--allow {}: cannot resolve it", a.display()))?;
        let mut any = false;
        for r in roots {
            let pick = if real.starts_with(r) {
                Some(real.clone())
            } else if r.starts_with(&real) {
                Some(r.clone())
            } else {
                None
            };
            if let Some(p) = pick {
                any = true;
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        if !any {
            bail!(
                "--allow {}: not under any root of the daemon (roots: {})",
                a.display(),
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_narrows_the_roots() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(base.join("other")).unwrap();
        let roots = vec![root.clone()];
        assert_eq!(allowed_dirs(&roots, &[]).unwrap(), roots);
        assert_eq!(
            allowed_dirs(&roots, &[root.join("a/b")]).unwrap(),
            vec![root.join("a/b")]
        );
        assert_eq!(
            allowed_dirs(&roots, std::slice::from_ref(&base)).unwrap(),
            roots
        );
        assert!(allowed_dirs(&roots, &[base.join("other")]).is_err());
    }
}
