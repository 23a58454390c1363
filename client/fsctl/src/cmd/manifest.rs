//! `fsctl manifest PATH [--budget TOKENS]`: every file under a folder with
//! its relative path, kind, size, mtime and a one-line summary (a title,
//! heading, first sentence or doc comment), made by the daemon without a
//! language model; over the budget the oldest files are left out first.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::global::Global;
use crate::output::{lossy, path_bytes, path_or_cwd, rfc3339};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder to list (default: the current directory).
    path: Option<PathBuf>,
    /// Tokens the text may take (bytes / 4, rounded up); the oldest files
    /// are left out until it fits. Default: no budget, every file.
    #[arg(long, short = 'b', value_name = "TOKENS", value_parser = clap::value_parser!(u32).range(1..))]
    budget: Option<u32>,
    /// Summarise sensitive files too (config.toml [sensitive] warn).
    #[arg(long)]
    sensitive: bool,
}

/// A time as RFC 3339 in UTC, to the second (the text form's mtime).
fn seconds(ns: i64) -> String {
    jiff::Timestamp::from_second(ns.div_euclid(1_000_000_000))
        .map(|t| t.to_string())
        .unwrap_or_default()
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let path = path_or_cwd(a.path.as_deref())?;
    let mut client = g.client().await?;
    let mut stream = client
        .manifest(pb::ManifestRequest {
            path: path_bytes(&path),
            budget: a.budget.unwrap_or(0),
            offset: 0,
            limit: 0,
            allow_sensitive: a.sensitive,
        })
        .await?
        .into_inner();
    let bar = if !g.json && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let b = ProgressBar::new(0);
        b.set_style(
            ProgressStyle::with_template("{spinner} summaries {pos}/{len}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Some(b)
    } else {
        None
    };
    let mut files = Vec::new();
    let mut summary = None;
    while let Some(msg) = stream.message().await? {
        match msg.item {
            Some(pb::manifest_response::Item::Progress(p)) => {
                if let Some(b) = &bar {
                    b.set_length(p.todo);
                    b.set_position(p.done);
                }
            }
            Some(pb::manifest_response::Item::File(f)) => files.push(f),
            Some(pb::manifest_response::Item::Summary(s)) => summary = Some(s),
            None => {}
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let s = summary.ok_or_else(|| anyhow::anyhow!("the daemon's answer ended early"))?;
    let mut out = std::io::stdout().lock();
    let shown_path = lossy(&path_bytes(&path));
    if g.json {
        let v = json!({
            "path": shown_path,
            "total": s.total,
            "shown": s.shown,
            "left_out": s.left_out,
            "tokens": s.tokens,
            "budget": a.budget,
            "files": files.iter().map(|f| {
                let mut v = json!({
                    "path": lossy(&f.relative_path),
                    "kind": f.kind,
                    "size": f.size,
                    "mtime": rfc3339(f.mtime_ns),
                    "summary": f.summary,
                    "source": f.source,
                });
                if f.sensitive {
                    v["sensitive"] = json!(true);
                }
                v
            }).collect::<Vec<_>>(),
        });
        writeln!(out, "{v}")?;
    } else {
        write!(out, "# {shown_path}: {} of {} files", s.shown, s.total)?;
        if s.left_out > 0 {
            write!(
                out,
                ", the {} oldest left out to fit the budget",
                s.left_out
            )?;
        }
        writeln!(out, "\n# relativePath\tkind\tsize\tmtime\tsummary")?;
        for f in &files {
            writeln!(
                out,
                "{}\t{}\t{}\t{}\t{}",
                lossy(&f.relative_path),
                f.kind,
                f.size,
                seconds(f.mtime_ns),
                f.summary
            )?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
