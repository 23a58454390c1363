//! `fsctl projects [PATH]`: the folders that hold a project's markers
//! (`.git`, `Cargo.toml`, `package.json`, ...), each with its kinds, main
//! languages, size, newest change and git branch; nested projects under
//! the one that holds them. Answered by the daemon from its index.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::{Value, json};

use crate::global::Global;
use crate::output::{lossy, optional_path, rfc3339, size};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder to look under (default: every root).
    path: Option<PathBuf>,
}

pub fn project_json(p: &pb::Project) -> Value {
    json!({
        "path": lossy(&p.path),
        "kinds": p.kinds,
        "languages": p.languages.iter().map(|l| json!({"language": l.language, "files": l.files})).collect::<Vec<_>>(),
        "bytes": p.bytes,
        "apparent_bytes": p.apparent_bytes,
        "files": p.files,
        "dirs": p.dirs,
        "incomplete": p.incomplete,
        "mtime": (p.mtime_ns != 0).then(|| rfc3339(p.mtime_ns)),
        "branch": (!p.branch.is_empty()).then(|| p.branch.clone()),
        "detached": p.detached,
        "parent": (!p.parent.is_empty()).then(|| lossy(&p.parent)),
        "depth": p.depth,
    })
}

/// The branch as a human reads it.
pub fn branch_text(p: &pb::Project) -> String {
    match (p.branch.is_empty(), p.detached) {
        (true, _) => String::new(),
        (false, true) => format!("detached at {}", p.branch),
        (false, false) => p.branch.clone(),
    }
}

/// The main languages as "Rust 12, Shell 2".
pub fn languages_text(p: &pb::Project) -> String {
    p.languages
        .iter()
        .map(|l| format!("{} {}", l.language, l.files))
        .collect::<Vec<_>>()
        .join(", ")
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let path = optional_path(a.path.as_deref())?;
    let mut client = g.client().await?;
    let r = client
        .projects(pb::ProjectsRequest { path })
        .await?
        .into_inner();
    let mut out = std::io::stdout().lock();
    if g.json {
        for p in &r.projects {
            writeln!(out, "{}", project_json(p))?;
        }
    } else if r.projects.is_empty() {
        eprintln!("fsctl: no projects found");
    } else {
        for p in &r.projects {
            let full = lossy(&p.path);
            // A nested project by its path below the one holding it.
            let shown = match lossy(&p.parent) {
                parent if !p.parent.is_empty() => full
                    .strip_prefix(parent.as_str())
                    .map(|s| s.trim_start_matches('/').to_owned())
                    .unwrap_or_else(|| full.clone()),
                _ => full.clone(),
            };
            let mut line = format!(
                "{}{}  [{}]",
                "  ".repeat(p.depth as usize),
                shown,
                p.kinds.join(", ")
            );
            let branch = branch_text(p);
            if !branch.is_empty() {
                line += &format!("  ({branch})");
            }
            let langs = languages_text(p);
            if !langs.is_empty() {
                line += &format!("  {langs}");
            }
            line += &format!("  {}", size(p.bytes));
            if p.mtime_ns != 0 {
                line += &format!("  changed {}", &rfc3339(p.mtime_ns)[..10]);
            }
            if p.incomplete {
                line += "  (incomplete: some folders could not be read)";
            }
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(if r.projects.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
