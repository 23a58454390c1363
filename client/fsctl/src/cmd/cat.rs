//! `fsctl cat PATH`: the text of any file under a root, documents included
//! (PDF, Office, OpenDocument, RTF, mail), as content search reads it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::{absolute, lossy, path_bytes, stdout_failed};

/// Text asked for per request when paging through a whole text.
const PAGE: u64 = 1 << 20;

#[derive(Debug, clap::Args)]
pub struct Args {
    path: PathBuf,
    /// Start this many bytes into the text (UTF-8; moved back to a character's start).
    #[arg(long, default_value_t = 0, value_name = "N")]
    offset: u64,
    /// At most this many bytes of text (default: all of it).
    #[arg(long, value_name = "N")]
    length: Option<u64>,
    /// Read a file flagged sensitive (config.toml [sensitive] warn, e.g. `*password*`).
    #[arg(long)]
    sensitive: bool,
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    if a.length == Some(0) {
        anyhow::bail!("--length 0 asks for nothing; give at least 1");
    }
    let path = path_bytes(&absolute(&a.path)?);
    let mut client = g.client().await?;
    let mut stdout = std::io::stdout().lock();
    let mut text = String::new();
    // The first answer (its offset, format, encoding, ...), then where the
    // next page starts and how much text was read.
    let mut head: Option<pb::ReadTextResponse> = None;
    let (mut next, mut read) = (a.offset, 0u64);
    let mut ends_line = true;
    loop {
        let want = a.length.map_or(PAGE, |l| l.saturating_sub(read).min(PAGE));
        let mut page = client
            .read_text(pb::ReadTextRequest {
                path: path.clone(),
                offset: next,
                length: want,
                allow_sensitive: a.sensitive,
            })
            .await?
            .into_inner();
        let got = page.text.len() as u64;
        next = page.offset + got;
        read += got;
        let done = got == 0 || next >= page.total_bytes || a.length.is_some_and(|l| read >= l);
        let chunk = std::mem::take(&mut page.text);
        if g.json {
            text.push_str(&chunk);
        } else if !chunk.is_empty() {
            ends_line = chunk.ends_with('\n');
            if let Err(e) = stdout.write_all(chunk.as_bytes()) {
                stdout_failed(e);
            }
        }
        head.get_or_insert(page);
        if done {
            break;
        }
    }
    let Some(head) = head else {
        return Ok(ExitCode::SUCCESS);
    };
    let more = next < head.total_bytes;
    if g.json {
        let v = json!({
            "path": lossy(&head.path),
            "text": text,
            "offset": head.offset,
            "length": read,
            "total_bytes": head.total_bytes,
            "more": more,
            "truncated": head.truncated,
            "format": head.format,
            "encoding": head.encoding,
            "source": head.source,
            "sensitive": head.sensitive,
        });
        if let Err(e) = writeln!(stdout, "{v}") {
            stdout_failed(e);
        }
        return Ok(ExitCode::SUCCESS);
    }
    // The extracted text has no final newline: end the line for the shell.
    if !ends_line && let Err(e) = stdout.write_all(b"\n") {
        stdout_failed(e);
    }
    if let Err(e) = stdout.flush() {
        stdout_failed(e);
    }
    drop(stdout);
    if head.sensitive {
        eprintln!(
            "fsctl: {}: a sensitive file (config.toml [sensitive] warn), read because of --sensitive",
            lossy(&head.path)
        );
    }
    if head.truncated && !more {
        eprintln!(
            "fsctl: {}: the file holds more text than the index keeps (content_max_text_bytes); the rest is not shown",
            lossy(&head.path)
        );
    }
    Ok(ExitCode::SUCCESS)
}
