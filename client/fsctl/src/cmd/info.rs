//! `fsctl info PATH`: one entry in detail, its tags included (yours and
//! the file's own, apart).

use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::cmd::tag::{from_file, source_name};
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
        // Yours (`user`) and the file's own (`xattr`), apart by source.
        if !i.tags.is_empty() {
            v["tags"] = i
                .tags
                .iter()
                .map(|t| json!({"name": t.name, "source": source_name(t.source)}))
                .collect();
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
    let (files, yours): (Vec<&pb::Tag>, Vec<&pb::Tag>) =
        i.tags.iter().partition(|t| from_file(t.source).is_some());
    let names = |tags: &[&pb::Tag]| -> String {
        tags.iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !yours.is_empty() {
        println!("tags       {}", names(&yours));
    }
    if let Some(first) = files.first() {
        let from = from_file(first.source).unwrap_or_default();
        println!("file tags  {} ({from})", names(&files));
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
