//! `fsctl dupes [PATH] [--min-size SIZE] [--include-empty]`

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use pb::duplicates_response::Item;
use std::borrow::Cow;

use crate::global::Global;
use crate::output::{count, lossy, optional_path, size};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A folder under a root (default: every root whose hashing is not off).
    path: Option<PathBuf>,
    /// Leave out files smaller than this: bytes, or with b/k/kb/m/mb/g/gb
    /// (1024-based, like the query language's size:).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    min_size: Option<u64>,
    /// Also group empty files (left out by default: they are all equal).
    #[arg(long)]
    include_empty: bool,
}

/// "10", "4k", "1.5MB", "2 GiB" -> bytes (1024-based).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| {
        format!("`{s}` is not a size: give bytes, or a number with b, kb, mb or gb")
    })?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => {
            return Err(format!(
                "`{s}`: unknown size unit `{}`: use b, kb, mb, gb or tb",
                unit.trim()
            ));
        }
    };
    Ok((n * mult as f64).round() as u64)
}

/// One `--json` line.
#[derive(serde::Serialize)]
struct GroupJson<'a> {
    size: u64,
    hash: String,
    paths: Vec<&'a Cow<'a, str>>,
    copies: &'a [Vec<Cow<'a, str>>],
    reclaimable_bytes: u64,
    reclaimable_allocated_bytes: u64,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let path = optional_path(a.path.as_deref())?;
    let mut client = g.client().await?;
    let mut stream = client
        .duplicates(pb::DuplicatesRequest {
            path,
            min_size: a.min_size.unwrap_or(0),
            include_empty: a.include_empty,
        })
        .await?
        .into_inner();
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {elapsed} {msg} [{bar:30}] {pos}/{len} files",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b.enable_steady_tick(std::time::Duration::from_millis(120));
        b
    });
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut summary = None;
    let mut first = true;
    while let Some(m) = stream.message().await? {
        match m.item {
            Some(Item::Progress(p)) => {
                if let Some(b) = &bar {
                    b.set_message(match p.stage.as_str() {
                        "partial" => "hashing heads and tails".to_owned(),
                        "full" => format!(
                            "hashing contents, {} of {}",
                            size(p.bytes_done),
                            size(p.bytes_total)
                        ),
                        _ => "grouping by size".to_owned(),
                    });
                    b.set_length(p.files_total);
                    b.set_position(p.files_done);
                }
            }
            Some(Item::Group(grp)) => {
                if let Some(b) = bar.as_ref().filter(|b| !b.is_finished()) {
                    b.finish_and_clear();
                }
                if g.json {
                    // Borrowed strings: a group can hold many thousands of paths.
                    let copies: Vec<Vec<Cow<str>>> = grp
                        .copies
                        .iter()
                        .map(|c| c.paths.iter().map(|p| String::from_utf8_lossy(p)).collect())
                        .collect();
                    let line = GroupJson {
                        size: grp.size,
                        hash: hex(&grp.hash),
                        paths: copies.iter().flatten().collect(),
                        copies: &copies,
                        reclaimable_bytes: grp.reclaimable_bytes,
                        reclaimable_allocated_bytes: grp.reclaimable_allocated_bytes,
                    };
                    serde_json::to_writer(&mut out, &line)?;
                    out.write_all(b"\n")?;
                } else {
                    if !first {
                        writeln!(out)?;
                    }
                    writeln!(
                        out,
                        "{} × {} copies, {} reclaimable  blake3:{}",
                        size(grp.size),
                        grp.copies.len(),
                        size(grp.reclaimable_bytes),
                        &hex(&grp.hash)[..16]
                    )?;
                    for c in &grp.copies {
                        let mut paths = c.paths.iter().map(|p| lossy(p));
                        let main = paths.next().unwrap_or_default();
                        let links: Vec<String> = paths.collect();
                        if links.is_empty() {
                            writeln!(out, "    {main}")?;
                        } else {
                            writeln!(out, "    {main}  (hard links: {})", links.join(", "))?;
                        }
                    }
                }
                first = false;
            }
            Some(Item::Summary(s)) => summary = Some(s),
            None => {}
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    out.flush()?;
    let s = summary.ok_or_else(|| anyhow::anyhow!("the daemon ended the answer early"))?;
    let line = format!(
        "{} groups, {} reclaimable ({} allocated); {} same-size files, {} read ({}), {} hashes from the cache",
        count(s.groups),
        size(s.reclaimable_bytes),
        size(s.reclaimable_allocated_bytes),
        count(s.candidates),
        count(s.files_read),
        size(s.bytes_read),
        count(s.cache_hits)
    );
    if g.json {
        eprintln!("{line}");
    } else {
        if !first {
            println!();
        }
        println!("{line}");
    }
    if s.unreadable > 0 {
        let shown: Vec<String> = s.unreadable_paths.iter().map(|p| lossy(p)).collect();
        eprintln!(
            "fsctl: {} files could not be read and were left out: {}{}",
            count(s.unreadable),
            shown.join(", "),
            if s.unreadable as usize > shown.len() {
                ", ..."
            } else {
                ""
            }
        );
    }
    if s.changed > 0 {
        eprintln!(
            "fsctl: {} files changed since they were indexed and were left out; run dupes again",
            count(s.changed)
        );
    }
    for r in &s.skipped_roots {
        eprintln!("fsctl: {} was left out: its hashing is off", lossy(r));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("10"), Ok(10));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("1.5MB"), Ok(1_572_864));
        assert_eq!(parse_size("2 gb"), Ok(2 << 30));
        assert!(parse_size("abc").unwrap_err().contains("not a size"));
        assert!(
            parse_size("3 parsecs")
                .unwrap_err()
                .contains("unknown size unit")
        );
    }
}
