//! `fsctl scan [PATH] [--wait]`

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::{count, optional_path};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A root or a folder under one (default: every root).
    path: Option<PathBuf>,
    /// Block until the index is current (a progress bar on a terminal).
    #[arg(long)]
    wait: bool,
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let path = optional_path(a.path.as_deref())?;
    let mut client = g.client().await?;
    let mut stream = client
        .rescan(pb::RescanRequest { path, wait: a.wait })
        .await?
        .into_inner();
    let bar = (a.wait && !g.json && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        b.enable_steady_tick(std::time::Duration::from_millis(120));
        b
    });
    let mut last = pb::ScanProgress::default();
    while let Some(p) = stream.message().await? {
        if let Some(b) = &bar {
            b.set_message(if p.content_queued > 0 {
                format!(
                    "{} entries walked; reading files for content search: {} to go",
                    count(p.scanned),
                    count(p.content_queued)
                )
            } else {
                format!(
                    "{} entries walked, {} changes, {} errors",
                    count(p.scanned),
                    count(p.written),
                    count(p.errors)
                )
            });
        }
        last = p;
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if g.json {
        println!(
            "{}",
            json!({"done": last.done, "scanned": last.scanned, "changes": last.written, "errors": last.errors, "elapsed_ms": last.elapsed_ms})
        );
    } else if a.wait {
        println!(
            "scanned {} entries in {:.1} s: {} changes, {} errors",
            count(last.scanned),
            last.elapsed_ms as f64 / 1000.0,
            count(last.written),
            count(last.errors)
        );
    } else {
        println!("scan queued");
    }
    Ok(ExitCode::SUCCESS)
}
