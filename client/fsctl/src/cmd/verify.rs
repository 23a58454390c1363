//! `fsctl verify [PATH] [--fix]`

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::{count, lossy, optional_path};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A root or a folder under one (default: every root).
    path: Option<PathBuf>,
    /// Repair: rescan what was verified so the index matches the disk.
    #[arg(long)]
    fix: bool,
}

fn kind_name(k: i32) -> &'static str {
    match pb::DifferenceKind::try_from(k).unwrap_or_default() {
        pb::DifferenceKind::Missing => "missing",
        pb::DifferenceKind::Extra => "extra",
        pb::DifferenceKind::Stale => "stale",
        pb::DifferenceKind::Unspecified => "unknown",
    }
}

/// Exit 0 when the index matches the disk, 1 when it differs (after
/// `--fix`: when differences were found and repaired), 2 on error.
pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let path = optional_path(a.path.as_deref())?;
    let mut client = g.client().await?;
    let mut stream = client
        .verify(pb::VerifyRequest { path, fix: a.fix })
        .await?
        .into_inner();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut found = 0u64;
    let mut last = pb::VerifyResponse::default();
    while let Some(chunk) = stream.message().await? {
        for d in &chunk.differences {
            found += 1;
            if g.json {
                writeln!(
                    out,
                    "{}",
                    json!({"kind": kind_name(d.kind), "path": lossy(&d.path), "detail": d.detail})
                )?;
            } else {
                writeln!(
                    out,
                    "{:<8} {}  ({})",
                    kind_name(d.kind),
                    lossy(&d.path),
                    d.detail
                )?;
            }
        }
        last = chunk;
    }
    if g.json {
        writeln!(
            out,
            "{}",
            json!({"done": true, "checked": last.checked, "differences": found, "fixed": last.fixed})
        )?;
    } else if found == 0 {
        writeln!(
            out,
            "index matches the disk: {} entries checked",
            count(last.checked)
        )?;
    } else if a.fix {
        writeln!(
            out,
            "{} differences in {} entries; rescanned, {} changes written",
            count(found),
            count(last.checked),
            count(last.fixed)
        )?;
    } else {
        writeln!(
            out,
            "{} differences in {} entries (fsctl verify --fix repairs them)",
            count(found),
            count(last.checked)
        )?;
    }
    out.flush()?;
    Ok(if found == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
