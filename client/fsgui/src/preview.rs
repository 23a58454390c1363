//! The preview of the selected row, away from egui: the passage of a
//! text file where the query's words first occur (read here, the first
//! 256 KiB), of a document's text (PDF, Office, OpenDocument, e-books:
//! the daemon's ReadText extracts it, or answers from its content index),
//! or a thumbnail of an image. Loaded on a thread of its own: a large file
//! never stalls a frame.

use std::io::Read;
use std::path::Path;

/// Bytes of a file read for its text preview.
pub const TEXT_READ: u64 = 256 * 1024;
/// Lines shown: a few before the first match, the rest after.
pub const LINES_BEFORE: usize = 3;
pub const LINES_SHOWN: usize = 24;
/// The longest side of a thumbnail, in pixels.
pub const THUMB: u32 = 320;

/// What the preview pane shows for one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Preview {
    /// Lines of a text file, from `first` (0-based line number), with the
    /// line where a query word occurs first, if any.
    Text {
        first: usize,
        lines: Vec<String>,
        hit: Option<usize>,
        /// The file goes on past what was read.
        more: bool,
    },
    /// An image, scaled to fit [`THUMB`]: RGBA pixels, and the
    /// original's size.
    Image {
        width: u32,
        height: u32,
        rgba: Vec<u8>,
        original: (u32, u32),
    },
    /// Why there is nothing to show.
    Nothing(String),
}

/// Loads the preview of `path`; `words` are the query's, lowercased; a
/// document's text comes from the daemon at `target`.
pub fn load(
    path: &Path,
    words: &[String],
    folder: bool,
    target: &fsindex_client::Target,
) -> Preview {
    if folder {
        return Preview::Nothing("a folder".into());
    }
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if matches!(ext.as_str(), "png" | "jpg" | "jpeg") {
        return image(path);
    }
    if matches!(
        ext.as_str(),
        "pdf" | "doc" | "docx" | "odt" | "xls" | "xlsx" | "ods" | "ppt" | "pptx" | "odp" | "epub"
    ) {
        return document(path, words, target);
    }
    text(path, words)
}

/// A document's text, the first [`TEXT_READ`] bytes of it, through the
/// daemon's ReadText (a sensitive file is not read: the pane says why).
fn document(path: &Path, words: &[String], target: &fsindex_client::Target) -> Preview {
    let asked = async {
        let mut client = fsindex_client::connect(target).await?;
        let page = client
            .read_text(fsindex_proto::v1::ReadTextRequest {
                path: path.as_os_str().as_encoded_bytes().to_vec(),
                offset: 0,
                length: TEXT_READ,
                allow_sensitive: false,
            })
            .await?
            .into_inner();
        anyhow::Ok(page)
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return Preview::Nothing(format!("cannot ask the daemon: {e}")),
    };
    match rt.block_on(asked) {
        Ok(page) => {
            let more = page.truncated || page.offset + (page.text.len() as u64) < page.total_bytes;
            passage(&page.text, words, more)
        }
        Err(e) => Preview::Nothing(match e.downcast_ref::<tonic::Status>() {
            Some(s) => s.message().to_owned(),
            None => format!("cannot ask the daemon: {e}"),
        }),
    }
}

fn text(path: &Path, words: &[String]) -> Preview {
    let mut bytes = Vec::new();
    let read =
        std::fs::File::open(path).and_then(|f| f.take(TEXT_READ + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        return Preview::Nothing(format!("cannot read it: {e}"));
    }
    let more = bytes.len() as u64 > TEXT_READ;
    bytes.truncate(TEXT_READ as usize);
    if bytes.contains(&0) {
        return Preview::Nothing("not text".into());
    }
    passage(&String::from_utf8_lossy(&bytes), words, more)
}

/// The lines of `text` around the first line holding a query word.
fn passage(text: &str, words: &[String], more: bool) -> Preview {
    let all: Vec<&str> = text.lines().collect();
    let hit = (!words.is_empty())
        .then(|| {
            all.iter().position(|l| {
                let l = l.to_lowercase();
                words.iter().any(|w| l.contains(w.as_str()))
            })
        })
        .flatten();
    let first = hit.map_or(0, |h| h.saturating_sub(LINES_BEFORE));
    let lines: Vec<String> = all
        .iter()
        .skip(first)
        .take(LINES_SHOWN)
        .map(|l| (*l).to_owned())
        .collect();
    let more = more || first + lines.len() < all.len();
    Preview::Text {
        first,
        lines,
        hit,
        more,
    }
}

fn image(path: &Path) -> Preview {
    let img = match image::ImageReader::open(path)
        .and_then(|r| r.with_guessed_format())
        .map_err(|e| e.to_string())
        .and_then(|r| r.decode().map_err(|e| e.to_string()))
    {
        Ok(i) => i,
        Err(e) => return Preview::Nothing(format!("cannot read the image: {e}")),
    };
    let original = (img.width(), img.height());
    let thumb = img.thumbnail(THUMB, THUMB).to_rgba8();
    Preview::Image {
        width: thumb.width(),
        height: thumb.height(),
        rgba: thumb.into_raw(),
        original,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No daemon: text files and images are read without one.
    fn nowhere() -> fsindex_client::Target {
        fsindex_client::Target::Socket("/nonexistent".into())
    }

    #[test]
    fn the_passage_starts_a_few_lines_before_the_first_match() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("notes.txt");
        let text: Vec<String> = (0..100).map(|i| format!("line {i}")).collect();
        let mut text = text.join("\n");
        text = text.replace("line 40", "the Needle is here");
        std::fs::write(&p, &text).unwrap();
        let Preview::Text {
            first,
            lines,
            hit,
            more,
        } = load(&p, &["needle".into()], false, &nowhere())
        else {
            panic!()
        };
        assert_eq!((first, hit, more), (37, Some(40), true));
        assert_eq!(lines[3], "the Needle is here");
        assert_eq!(lines.len(), LINES_SHOWN);
        std::fs::write(&p, b"\x00\x01binary").unwrap();
        assert_eq!(
            load(&p, &[], false, &nowhere()),
            Preview::Nothing("not text".into())
        );
    }
}
