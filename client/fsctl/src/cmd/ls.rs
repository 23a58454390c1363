//! `fsctl ls PATH`: a folder's children from the index.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::{lossy, path_bytes, path_or_cwd, rfc3339, size, type_name};

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum SortBy {
    Name,
    Size,
    Mtime,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder (default: the current directory).
    path: Option<PathBuf>,
    /// Order: name (A-Z), size (largest first), mtime (newest first).
    #[arg(long, value_enum, default_value = "name")]
    sort: SortBy,
    #[arg(long, short = 'r')]
    reverse: bool,
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let path = path_or_cwd(a.path.as_deref())?;
    let sort = match a.sort {
        SortBy::Name => pb::SortOrder::Name,
        SortBy::Size => pb::SortOrder::Size,
        SortBy::Mtime => pb::SortOrder::Mtime,
    };
    let mut client = g.client().await?;
    let r = client
        .list(pb::ListRequest {
            path: path_bytes(&path),
            sort: sort as i32,
            reverse: a.reverse,
        })
        .await?
        .into_inner();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for e in &r.entries {
        if g.json {
            let v = json!({"path": lossy(&e.path), "name": lossy(&e.name), "type": type_name(e.r#type), "size": e.size, "mtime": rfc3339(e.mtime_ns), "sensitive": e.sensitive});
            writeln!(out, "{v}")?;
        } else {
            let dir = e.r#type == pb::EntryType::Dir as i32;
            let when = rfc3339(e.mtime_ns);
            writeln!(
                out,
                "{:>11}  {}  {}{}{}",
                size(e.size),
                &when[..when.len().min(19)],
                lossy(&e.name),
                if dir { "/" } else { "" },
                if e.sensitive { "  [sensitive]" } else { "" }
            )?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
