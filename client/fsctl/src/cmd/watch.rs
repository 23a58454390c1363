//! `fsctl watch [PATH]`: stream changes as the daemon applies them.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::{lossy, optional_path, type_name};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only changes at or under this path (default: everything indexed).
    path: Option<PathBuf>,
}

fn kind_name(k: i32) -> &'static str {
    match pb::ChangeKind::try_from(k).unwrap_or_default() {
        pb::ChangeKind::Subscribed => "subscribed",
        pb::ChangeKind::Created => "created",
        pb::ChangeKind::Modified => "modified",
        pb::ChangeKind::Deleted => "deleted",
        pb::ChangeKind::Renamed => "renamed",
        pb::ChangeKind::Missed => "missed",
        pb::ChangeKind::Reread => "reread",
        pb::ChangeKind::Unspecified => "unknown",
    }
}

/// Runs until interrupted or the daemon stops. Every line is flushed at
/// once, so `fsctl watch | while read ...` reacts immediately.
pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let path = optional_path(a.path.as_deref())?;
    let mut client = g.client().await?;
    let mut stream = client
        .subscribe(pb::SubscribeRequest { path })
        .await?
        .into_inner();
    let stdout = std::io::stdout();
    loop {
        let e = match stream.message().await {
            Ok(Some(e)) => e,
            Ok(None) => break,
            // A daemon that stops ends every stream with this status.
            Err(s)
                if s.code() == tonic::Code::Unavailable && s.message() == "the daemon stopped" =>
            {
                eprintln!("the daemon stopped");
                break;
            }
            Err(s) => return Err(s.into()),
        };
        let kind = kind_name(e.kind);
        let mut out = stdout.lock();
        if g.json {
            let mut v = json!({"kind": kind});
            if e.kind == pb::ChangeKind::Missed as i32 {
                v["missed"] = json!(e.missed);
            } else if e.kind != pb::ChangeKind::Subscribed as i32 {
                v["path"] = json!(lossy(&e.path));
                v["type"] = json!(type_name(e.r#type));
                if !e.from_path.is_empty() {
                    v["from"] = json!(lossy(&e.from_path));
                }
            }
            writeln!(out, "{v}")?;
        } else if e.kind == pb::ChangeKind::Subscribed as i32 {
            eprintln!("watching; Ctrl-C stops");
        } else if e.kind == pb::ChangeKind::Missed as i32 {
            writeln!(
                out,
                "missed   {} events (this reader fell behind; `fsctl verify` re-checks)",
                e.missed
            )?;
        } else if e.kind == pb::ChangeKind::Reread as i32 {
            writeln!(
                out,
                "reread   {} (what you may see there changed too widely to list)",
                lossy(&e.path)
            )?;
        } else if !e.from_path.is_empty() {
            writeln!(
                out,
                "{kind:<8} {} -> {}",
                lossy(&e.from_path),
                lossy(&e.path)
            )?;
        } else {
            writeln!(out, "{kind:<8} {}", lossy(&e.path))?;
        }
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}
