//! `fsctl du [PATH]`

use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::{Value, json};

use crate::global::Global;
use crate::output::{count, lossy, path_bytes, path_or_cwd, rfc3339, size, type_name};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder to measure (default: the current directory).
    path: Option<PathBuf>,
    /// How many of the largest entries to show (0: all).
    #[arg(long, default_value_t = 20, value_name = "N")]
    top: u32,
    /// Rank and show by apparent size (st_size, as du -b) instead of allocated bytes.
    #[arg(long)]
    apparent: bool,
    /// Rank entries at any depth beneath PATH, not only its children (like
    /// `du -a | sort -rn | head`): the N largest folders or files anywhere.
    #[arg(long, conflicts_with = "depth")]
    all: bool,
    /// Rank entries down to N levels beneath PATH (like `du -d N`, sorted).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    depth: Option<u32>,
    /// List files only.
    #[arg(long, conflicts_with = "dirs")]
    files: bool,
    /// List folders only.
    #[arg(long)]
    dirs: bool,
    /// Include every change made before this command.
    #[arg(long)]
    sync: bool,
    /// Also say how many photos with a date taken each folder holds (its
    /// whole subtree) and the years taken: "3,120 photos 2015-2024".
    #[arg(long)]
    photos: bool,
}

fn usage_json(u: &pb::Usage) -> Value {
    let mut v = json!({
        "path": lossy(&u.path),
        "type": type_name(u.r#type),
        "bytes": u.bytes,
        "apparent_bytes": u.apparent_bytes,
        "files": u.files,
        "dirs": u.dirs,
        "incomplete": u.incomplete,
        "depth": u.depth,
        "excluded": u.excluded,
    });
    if u.excluded {
        // Not live: figures from a sizes-only walk at this time.
        v["measured_at"] = json!(rfc3339(u.measured_at.saturating_mul(1_000_000_000)));
    }
    if u.photos > 0 {
        v["photos"] = json!({
            "count": u.photos,
            "first_year": u.photos_first_year,
            "last_year": u.photos_last_year,
        });
    }
    v
}

/// "3,120 photos 2015-2024" (issue 32); empty without photos.
pub fn photos_text(n: u64, first: i32, last: i32) -> String {
    if n == 0 {
        return String::new();
    }
    let years = if first == last {
        first.to_string()
    } else {
        format!("{first}-{last}")
    };
    format!(
        "{} {} {years}",
        count(n),
        if n == 1 { "photo" } else { "photos" }
    )
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let path = path_or_cwd(a.path.as_deref())?;
    let mut client = g.client().await?;
    let r = client
        .disk_usage(pb::DiskUsageRequest {
            path: path_bytes(&path),
            top: a.top,
            apparent: a.apparent,
            sync: a.sync,
            depth: a.depth.unwrap_or(1),
            all: a.all,
            files_only: a.files,
            dirs_only: a.dirs,
            photos: a.photos,
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
    let photos = photos_text(
        total.photos,
        total.photos_first_year,
        total.photos_last_year,
    );
    println!(
        "{}  {} allocated, {} apparent, {} files, {} folders{}{}",
        lossy(&total.path),
        size(total.bytes),
        size(total.apparent_bytes),
        count(total.files),
        count(total.dirs),
        if photos.is_empty() {
            String::new()
        } else {
            format!(", {photos}")
        },
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
        "{:>11}  {:>11}  {:>6}  {:<20}  {:>9}  {:>7}  NAME",
        "SIZE", "APPARENT", "SHARE", "", "FILES", "DIRS"
    );
    let parent = main(&total).max(1) as f64;
    let base = lossy(&total.path);
    for c in &r.children {
        let full = lossy(&c.path);
        // Children by name; deeper entries by their path below PATH.
        let name = full
            .strip_prefix(base.as_str())
            .map(|rest| rest.trim_start_matches(std::path::MAIN_SEPARATOR))
            .filter(|rest| !rest.is_empty())
            .unwrap_or_else(|| {
                full.rsplit(std::path::MAIN_SEPARATOR)
                    .next()
                    .unwrap_or(&full)
            })
            .to_owned();
        let dir = c.r#type == pb::EntryType::Dir as i32;
        let share = main(c) as f64 / parent;
        println!(
            "{:>11}  {:>11}  {:>5.1}%  {:<20}  {:>9}  {:>7}  {}{}{}",
            size(c.bytes),
            size(c.apparent_bytes),
            share * 100.0,
            bar(share, 20),
            count(c.files),
            count(c.dirs),
            name,
            if dir { "/" } else { "" },
            note(c)
        );
    }
    if (r.children.len() as u64) < r.children_total {
        println!(
            "({} more; --top 0 shows them all)",
            r.children_total - r.children.len() as u64
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// What a row says when its figures are not live.
fn note(u: &pb::Usage) -> String {
    let mut s = String::new();
    if u.photos > 0 {
        s += &format!(
            "  ({})",
            photos_text(u.photos, u.photos_first_year, u.photos_last_year)
        );
    }
    if u.excluded {
        let when = jiff::Timestamp::from_second(u.measured_at)
            .map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string())
            .unwrap_or_default();
        s += &format!("  (excluded: not indexed, size measured {when})");
    }
    if u.incomplete {
        s += "  (incomplete: some folders could not be read)";
    }
    s
}

/// A bar of `width` cells filled in eighths: the share of the parent.
fn bar(share: f64, width: usize) -> String {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (share.clamp(0.0, 1.0) * (width * 8) as f64).round() as usize;
    let mut s = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        s.push(PARTS[eighths % 8]);
    }
    let cells = s.chars().count();
    s.extend(std::iter::repeat_n(' ', width.saturating_sub(cells)));
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn bars() {
        assert_eq!(super::bar(0.0, 4), "    ");
        assert_eq!(super::bar(1.0, 4), "████");
        assert_eq!(super::bar(0.5, 4), "██  ");
        assert_eq!(super::bar(0.0625, 4), "▎   ");
    }
}
