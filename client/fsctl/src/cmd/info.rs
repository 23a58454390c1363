//! `fsctl info PATH`: one entry in detail.

use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::{
    absolute, count, lossy, media_json, media_lines, path_bytes, rfc3339, size, type_name,
};

#[derive(Debug, clap::Args)]
pub struct Args {
    path: PathBuf,
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let path = path_bytes(&absolute(&a.path)?);
    let mut client = g.client().await?;
    let i = client.stat(pb::StatRequest { path }).await?.into_inner();
    let text = i.lines >= 0;
    if g.json {
        let mut v = json!({
            "path": lossy(&i.path),
            "type": type_name(i.r#type),
            "size": i.size,
            "allocated": i.allocated,
            "mtime": rfc3339(i.mtime_ns),
            "atime": rfc3339(i.atime_ns),
            "ctime": rfc3339(i.ctime_ns),
            "mode": format!("{:o}", i.mode & 0o7777),
            "uid": i.uid,
            "gid": i.gid,
            "nlink": i.nlink,
            "inode": i.inode,
            "kind": i.kind,
            "mime": i.mime,
            "sensitive": i.sensitive,
        });
        if i.sensitive {
            v["tier"] = json!(if i.skip_tier { "skip" } else { "warn" });
        }
        if text {
            v["encoding"] = json!(i.encoding);
            v["lines"] = json!(i.lines);
        }
        if !i.target.is_empty() {
            v["target"] = json!(lossy(&i.target));
        }
        if let Some(u) = &i.usage {
            v["du"] = json!({"bytes": u.bytes, "apparent_bytes": u.apparent_bytes, "files": u.files, "dirs": u.dirs, "incomplete": u.incomplete});
        }
        if let Some(m) = &i.media {
            v["media"] = media_json(m, false);
        }
        println!("{v}");
        return Ok(ExitCode::SUCCESS);
    }
    println!("path       {}", lossy(&i.path));
    println!(
        "type       {}{}",
        type_name(i.r#type),
        if i.kind.is_empty() {
            String::new()
        } else {
            format!(" ({})", i.kind)
        }
    );
    if !i.target.is_empty() {
        println!("target     {}", lossy(&i.target));
    }
    println!(
        "size       {} ({} bytes), {} allocated",
        size(i.size),
        count(i.size),
        size(i.allocated)
    );
    if let Some(u) = &i.usage {
        println!(
            "contents   {} allocated, {} apparent, {} files, {} folders",
            size(u.bytes),
            size(u.apparent_bytes),
            count(u.files),
            count(u.dirs)
        );
    }
    println!("modified   {}", rfc3339(i.mtime_ns));
    println!("accessed   {}", rfc3339(i.atime_ns));
    println!("changed    {}", rfc3339(i.ctime_ns));
    println!(
        "mode       {:o}  uid {}  gid {}",
        i.mode & 0o7777,
        i.uid,
        i.gid
    );
    println!("links      {}  inode {}", i.nlink, i.inode);
    if !i.mime.is_empty() {
        println!("mime       {}", i.mime);
    }
    if text {
        println!("text       {}, {} lines", i.encoding, count(i.lines as u64));
    }
    if let Some(m) = &i.media {
        for (label, value) in media_lines(m) {
            println!("{label:<10} {value}");
        }
    }
    if i.skip_tier {
        println!(
            "sensitive  skip tier: not indexed, shown because asked for by exact path (live figures)"
        );
    } else if i.sensitive {
        println!("sensitive  warn tier: indexed, flagged");
    }
    Ok(ExitCode::SUCCESS)
}
