//! `fsctl du [PATH]`

use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::{Value, json};

use crate::Global;
use crate::output::{count, lossy, path_bytes, path_or_cwd, size, type_name};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder to measure (default: the current directory).
    path: Option<PathBuf>,
    /// How many of the largest children to show.
    #[arg(long, default_value_t = 20, value_name = "N")]
    top: u32,
    /// Rank and show by apparent size (st_size, as du -b) instead of allocated bytes.
    #[arg(long)]
    apparent: bool,
    /// Show every child, not only the top N.
    #[arg(long)]
    all: bool,
    /// Include every change made before this command.
    #[arg(long)]
    sync: bool,
}

fn usage_json(u: &pb::Usage) -> Value {
    json!({
        "path": lossy(&u.path),
        "type": type_name(u.r#type),
        "bytes": u.bytes,
        "apparent_bytes": u.apparent_bytes,
        "files": u.files,
        "dirs": u.dirs,
        "incomplete": u.incomplete,
    })
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let path = path_or_cwd(a.path.as_deref())?;
    let mut client = g.client().await?;
    let top = if a.all { 0 } else { a.top };
    let r = client
        .disk_usage(pb::DiskUsageRequest {
            path: path_bytes(&path),
            top,
            apparent: a.apparent,
            sync: a.sync,
        })
        .await?
        .into_inner();
    let total = r.total.unwrap_or_default();
    if g.json {
        let mut v = usage_json(&total);
        v["children"] = Value::Array(r.children.iter().map(usage_json).collect());
        v["children_total"] = json!(r.children_total);
        println!("{v}");
        return Ok(ExitCode::SUCCESS);
    }
    let main = |u: &pb::Usage| {
        if a.apparent {
            u.apparent_bytes
        } else {
            u.bytes
        }
    };
    println!(
        "{}  {} allocated, {} apparent, {} files, {} folders{}",
        lossy(&total.path),
        size(total.bytes),
        size(total.apparent_bytes),
        count(total.files),
        count(total.dirs),
        if total.incomplete {
            "  (incomplete: some folders could not be read)"
        } else {
            ""
        }
    );
    if r.children.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:>11}  {:>11}  {:>6}  {:>9}  {:>7}  NAME",
        "SIZE", "APPARENT", "SHARE", "FILES", "DIRS"
    );
    let parent = main(&total).max(1) as f64;
    for c in &r.children {
        let name = lossy(&c.path);
        let name = name.rsplit('/').next().unwrap_or(&name).to_owned();
        let dir = c.r#type == pb::EntryType::Dir as i32;
        println!(
            "{:>11}  {:>11}  {:>5.1}%  {:>9}  {:>7}  {}{}{}",
            size(c.bytes),
            size(c.apparent_bytes),
            main(c) as f64 * 100.0 / parent,
            count(c.files),
            count(c.dirs),
            name,
            if dir { "/" } else { "" },
            if c.incomplete { "  (incomplete)" } else { "" }
        );
    }
    if (r.children.len() as u64) < r.children_total {
        println!(
            "({} more; --all shows every child)",
            r.children_total - r.children.len() as u64
        );
    }
    Ok(ExitCode::SUCCESS)
}
