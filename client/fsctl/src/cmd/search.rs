//! `fsctl search QUERY...`; `@NAME` in the query runs a saved search
//! (`fsctl saved`), and a search typed at a terminal goes into the history
//! (`fsctl history`).

use std::io::Write;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::{lossy, rfc3339, text, type_name};

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum SortBy {
    Relevance,
    Name,
    Path,
    Size,
    Mtime,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Terms, all of which must match; "quoted phrases" keep spaces.
    #[arg(required = true, value_name = "QUERY")]
    query: Vec<String>,
    /// At most N results; 0 means all.
    #[arg(long, short = 'n', default_value_t = 0, value_name = "N")]
    limit: u64,
    /// Order of the results (size and mtime: largest/newest first).
    #[arg(long, value_enum, default_value = "relevance")]
    sort: SortBy,
    /// Separate paths with NUL bytes and print them byte-exact (for xargs -0).
    #[arg(short = '0', long = "print0", conflicts_with = "json")]
    print0: bool,
    /// Include every change made before this command (waits for the
    /// watcher to catch up, like Watchman's cookies).
    #[arg(long)]
    sync: bool,
    /// Reverse the order.
    #[arg(long, short = 'r')]
    reverse: bool,
    /// Print only the number of matches.
    #[arg(long, short = 'c', conflicts_with = "print0")]
    count: bool,
    /// With `content:` words: how many of the first results carry the matching passage
    /// ("snippet" in --json, a line under the path on a terminal); 0 for none.
    #[arg(long, default_value_t = 10, value_name = "N")]
    snippets: u32,
    /// Compare names without their accents: cafe finds café and Cafe (adds
    /// `accents:ignore` to the query).
    #[arg(long)]
    ignore_accents: bool,
}

/// After a sensitive (WARN-tier) result on a terminal.
const SENSITIVE_MARK: &str = "  [sensitive]";

/// `in:~/x` and `in:relative` become absolute: the daemon does not know the
/// caller's home or working directory.
fn expand_in(term: &str) -> String {
    let (neg, rest) = match term.strip_prefix('!') {
        Some(r) => ("!", r),
        None => ("", term),
    };
    let Some(value) = rest.strip_prefix("in:") else {
        return term.to_owned();
    };
    let path = if value == "~" || value.starts_with("~/") {
        match std::env::var_os("HOME") {
            Some(home) => std::path::Path::new(&home)
                .join(value.trim_start_matches('~').trim_start_matches('/')),
            None => return term.to_owned(),
        }
    } else {
        std::path::PathBuf::from(value)
    };
    let abs = crate::output::absolute(&path).unwrap_or(path);
    format!("{neg}in:{}", abs.display())
}

/// The query the words on the command line make (`fsctl search` and
/// `fsctl saved add`): each argument passed through as typed (the daemon
/// splits terms), `in:` paths made absolute.
pub fn query_of(words: &[String], ignore_accents: bool) -> String {
    let query = words
        .iter()
        .map(|q| {
            if q.contains(char::is_whitespace) && !q.contains('"') {
                format!("\"{q}\"")
            } else {
                q.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let query = if words.len() == 1 {
        words[0].clone()
    } else {
        query
    };
    let mut query = query
        .split(' ')
        .map(expand_in)
        .collect::<Vec<_>>()
        .join(" ");
    if ignore_accents {
        query.push_str(" accents:ignore");
    }
    query
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let query = query_of(&a.query, a.ignore_accents);
    let sort = match a.sort {
        SortBy::Relevance => pb::SortOrder::Relevance,
        SortBy::Name => pb::SortOrder::Name,
        SortBy::Path => pb::SortOrder::Path,
        SortBy::Size => pb::SortOrder::Size,
        SortBy::Mtime => pb::SortOrder::Mtime,
    };
    let stdout = std::io::stdout();
    // A person at a terminal sees sensitive entries marked; a pipe gets
    // bare paths, one per line, for scripts.
    let tty = std::io::IsTerminal::is_terminal(&stdout);
    let request = pb::SearchRequest {
        query: query.clone(),
        limit: if a.count { 1 } else { a.limit },
        sort: sort as i32,
        sync: a.sync,
        reverse: a.reverse,
        offset: 0,
        // Snippets only where they are shown: in JSON and at a terminal. A
        // pipe gets bare paths, so the daemon is not asked to cut passages
        // nobody reads (10 of them were a third of a common word's answer).
        snippets: Some(if a.count || a.print0 || !(g.json || tty) {
            0
        } else {
            a.snippets
        }),
    };
    let (mut stream, client) = g
        .call(|mut c| {
            let request = request.clone();
            async move {
                let again = c.clone();
                Ok((c.search(request).await?.into_inner(), again))
            }
        })
        .await?;
    let mut out = std::io::BufWriter::with_capacity(64 << 10, stdout.lock());
    let mut total = 0u64;
    let mut shown = 0u64;
    while let Some(chunk) = stream.message().await? {
        total = chunk.total;
        if a.count {
            continue;
        }
        for e in chunk.entries {
            shown += 1;
            if a.print0 {
                out.write_all(&e.path)?;
                out.write_all(b"\0")?;
            } else if g.json {
                let mut v = json!({
                    "path": lossy(&e.path),
                    "name": lossy(&e.name),
                    "type": type_name(e.r#type),
                    "size": e.size,
                    "mtime": rfc3339(e.mtime_ns),
                    "sensitive": e.sensitive,
                });
                // A `content:` query's results carry the passage that matched.
                if !e.snippet.is_empty() {
                    v["snippet"] = e.snippet.clone().into();
                }
                // A message inside a mailbox: where, and which.
                if let Some(i) = &e.inside {
                    v["container"] = lossy(&i.container).into();
                    v["inside"] = i.name.clone().into();
                    if i.index > 0 {
                        v["message"] = i.index.into();
                    }
                    if let Some(f) = &i.file {
                        v["file"] = lossy(f).into();
                    }
                }
                let mut line = serde_json::to_vec(&v)?;
                line.push(b'\n');
                out.write_all(&line)?;
            } else {
                out.write_all(text(&e.path).as_bytes())?;
                if tty && e.sensitive {
                    out.write_all(SENSITIVE_MARK.as_bytes())?;
                }
                out.write_all(b"\n")?;
                // What the file says, under its path, for a person only: a
                // pipe still gets one path per line.
                if tty && !e.snippet.is_empty() {
                    writeln!(out, "    {}", e.snippet)?;
                }
            }
        }
    }
    if a.count {
        if g.json {
            writeln!(out, "{}", json!({ "total": total }))?;
        } else {
            writeln!(out, "{total}")?;
        }
    }
    out.flush()?;
    drop(out);
    if shown < total && !g.json && !a.print0 && !a.count {
        eprintln!("({shown} of {total} matches shown; --limit 0 shows all)");
    }
    if crate::cmd::history::recording(tty) {
        crate::cmd::history::record(client, &query, total).await;
    }
    Ok(if total > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
