//! `fsctl search QUERY...`

use std::io::Write;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::Global;
use crate::output::{lossy, rfc3339, type_name};

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum SortBy {
    Relevance,
    Name,
    Path,
    Size,
    Mtime,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Terms, all of which must match; "quoted phrases" keep spaces.
    #[arg(required = true, value_name = "QUERY")]
    query: Vec<String>,
    /// At most N results; 0 means all.
    #[arg(long, short = 'n', default_value_t = 0, value_name = "N")]
    limit: u64,
    /// Order of the results (size and mtime: largest/newest first).
    #[arg(long, value_enum, default_value = "relevance")]
    sort: SortBy,
    /// Separate paths with NUL bytes and print them byte-exact (for xargs -0).
    #[arg(short = '0', long = "print0", conflicts_with = "json")]
    print0: bool,
    /// Include every change made before this command (waits for the
    /// watcher to catch up, like Watchman's cookies).
    #[arg(long)]
    sync: bool,
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    // Each argument is passed through as typed; the daemon splits terms.
    let query = a
        .query
        .iter()
        .map(|q| {
            if q.contains(char::is_whitespace) && !q.contains('"') {
                format!("\"{q}\"")
            } else {
                q.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let query = if a.query.len() == 1 {
        a.query[0].clone()
    } else {
        query
    };
    let sort = match a.sort {
        SortBy::Relevance => pb::SortOrder::Relevance,
        SortBy::Name => pb::SortOrder::Name,
        SortBy::Path => pb::SortOrder::Path,
        SortBy::Size => pb::SortOrder::Size,
        SortBy::Mtime => pb::SortOrder::Mtime,
    };
    let mut client = g.client().await?;
    let mut stream = client
        .search(pb::SearchRequest {
            query,
            limit: a.limit,
            sort: sort as i32,
            sync: a.sync,
        })
        .await?
        .into_inner();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(64 << 10, stdout.lock());
    let mut total = 0u64;
    let mut shown = 0u64;
    while let Some(chunk) = stream.message().await? {
        total = chunk.total;
        for e in chunk.entries {
            shown += 1;
            if a.print0 {
                out.write_all(&e.path)?;
                out.write_all(b"\0")?;
            } else if g.json {
                let mut line = serde_json::to_vec(&json!({
                    "path": lossy(&e.path),
                    "name": lossy(&e.name),
                    "type": type_name(e.r#type),
                    "size": e.size,
                    "mtime": rfc3339(e.mtime_ns),
                }))?;
                line.push(b'\n');
                out.write_all(&line)?;
            } else {
                out.write_all(lossy(&e.path).as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
    }
    out.flush()?;
    if shown < total && !g.json && !a.print0 {
        eprintln!("({shown} of {total} matches shown; --limit 0 shows all)");
    }
    Ok(if total > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
