//! `fsctl reload`: the daemon re-reads config.toml (as on SIGHUP).

use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::lossy;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub async fn run(g: &Global, _a: &Args) -> anyhow::Result<ExitCode> {
    let mut client = g.client().await?;
    let r = client.reload(pb::ReloadRequest {}).await?.into_inner();
    if g.json {
        println!(
            "{}",
            json!({ "config_path": lossy(&r.config_path), "changes": r.changes })
        );
    } else {
        println!("reloaded {}", lossy(&r.config_path));
        for c in &r.changes {
            println!("  {c}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
