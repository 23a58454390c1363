//! `fsctl tree PATH --depth N`: a subtree with sizes, collapsed where large.

use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::{Value, json};

use crate::global::Global;
use crate::output::{count, lossy, path_bytes, path_or_cwd, rfc3339, size, type_name};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder (default: the current directory).
    path: Option<PathBuf>,
    /// Levels to show below the folder.
    #[arg(long, short = 'd', default_value_t = 2)]
    depth: u32,
    /// At most this many children per folder (largest first); the rest are counted.
    #[arg(long, default_value_t = 20)]
    max_children: u32,
}

fn to_json(n: &pb::TreeNode) -> Value {
    let mut v = json!({
        "name": lossy(&n.name),
        "type": type_name(n.r#type),
        "bytes": n.bytes,
        "apparent_bytes": n.apparent_bytes,
        "files": n.files,
        "dirs": n.dirs,
        "hidden_children": n.hidden_children,
        "children": n.children.iter().map(to_json).collect::<Vec<_>>(),
        "excluded": n.excluded,
    });
    if n.excluded {
        v["measured_at"] = json!(rfc3339(n.measured_at.saturating_mul(1_000_000_000)));
    }
    v
}

fn print(n: &pb::TreeNode, prefix: &str, last: bool, top: bool) {
    let dir = n.r#type == pb::EntryType::Dir as i32;
    let counts = if n.excluded {
        format!(
            "  ({} files, excluded: not indexed, size as last measured)",
            count(n.files)
        )
    } else if dir {
        format!(
            "  ({} files, {} folders)",
            count(n.files),
            count(n.dirs.saturating_sub(1))
        )
    } else {
        String::new()
    };
    let branch = if top {
        ""
    } else if last {
        "└── "
    } else {
        "├── "
    };
    println!(
        "{prefix}{branch}{}{}  {}{counts}",
        lossy(&n.name),
        if dir { "/" } else { "" },
        size(n.bytes)
    );
    let child_prefix = if top {
        String::new()
    } else {
        format!("{prefix}{}", if last { "    " } else { "│   " })
    };
    let shown = n.children.len();
    for (i, c) in n.children.iter().enumerate() {
        print(
            c,
            &child_prefix,
            i + 1 == shown && n.hidden_children == 0,
            false,
        );
    }
    if n.hidden_children > 0 && shown > 0 {
        println!("{child_prefix}└── … {} more", count(n.hidden_children));
    }
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let path = path_or_cwd(a.path.as_deref())?;
    let mut client = g.client().await?;
    let r = client
        .tree(pb::TreeRequest {
            path: path_bytes(&path),
            depth: a.depth,
            max_children: a.max_children,
        })
        .await?
        .into_inner();
    let root = r.root.unwrap_or_default();
    if g.json {
        println!("{}", to_json(&root));
    } else {
        print(&root, "", true, true);
    }
    Ok(ExitCode::SUCCESS)
}
