//! `fsctl map [PATH] --budget TOKENS`: a condensed outline of a tree for an
//! LLM's context, never over the budget (tokens estimated as bytes / 4).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::{Value, json};

use crate::global::Global;
use crate::output::{lossy, path_bytes, path_or_cwd, rfc3339};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder to outline (default: the current directory).
    path: Option<PathBuf>,
    /// Token budget for the text (tokens estimated as bytes / 4, rounded up).
    #[arg(long, short = 'b', default_value_t = 1024, value_name = "TOKENS")]
    budget: u32,
}

fn node_json(n: &pb::FsMapNode) -> Value {
    let kind = match pb::FsMapNodeType::try_from(n.r#type).unwrap_or_default() {
        pb::FsMapNodeType::Folder => "dir",
        pb::FsMapNodeType::Group => "group",
        pb::FsMapNodeType::FolderGroup => "dir_group",
        pb::FsMapNodeType::File | pb::FsMapNodeType::Unspecified => "file",
    };
    let mut v = json!({
        "name": lossy(&n.name),
        "type": kind,
        "bytes": n.bytes,
        "files": n.files,
        "recent": n.recent,
    });
    if n.count > 0 {
        v["count"] = json!(n.count);
    }
    if kind == "dir" || kind == "dir_group" {
        v["dirs"] = json!(n.dirs);
        v["kinds"] = n
            .kinds
            .iter()
            .map(|k| {
                json!({
                    "kind": k.kind,
                    "files": k.files,
                    "percent": k.percent,
                    "extensions": k.extensions,
                })
            })
            .collect();
        v["children"] = n.children.iter().map(node_json).collect();
        v["more"] = json!({
            "dirs": n.more_dirs,
            "files": n.more_files,
            "bytes": n.more_bytes,
        });
    }
    if !n.like.is_empty() {
        v["like"] = json!(n.like);
    }
    if n.year_min != 0 {
        v["years"] = json!([n.year_min, n.year_max]);
    }
    if n.photos > 0 {
        v["photos"] = json!({
            "count": n.photos,
            "first_year": n.photos_first_year,
            "last_year": n.photos_last_year,
        });
    }
    if n.excluded {
        v["excluded"] = json!(true);
        v["measured_at"] = json!(rfc3339(n.measured_at.saturating_mul(1_000_000_000)));
    }
    v
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let path = path_or_cwd(a.path.as_deref())?;
    let mut client = g.client().await?;
    let r = client
        .fs_map(pb::FsMapRequest {
            path: path_bytes(&path),
            budget: a.budget,
        })
        .await?
        .into_inner();
    let mut out = std::io::stdout().lock();
    if g.json {
        let v = json!({
            "path": lossy(&path_bytes(&path)),
            "budget": r.budget,
            "tokens": r.tokens,
            "text": r.text,
            "root": r.root.as_ref().map(node_json).unwrap_or(Value::Null),
        });
        writeln!(out, "{v}")?;
    } else {
        out.write_all(r.text.as_bytes())?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
