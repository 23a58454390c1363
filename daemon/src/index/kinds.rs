//! Kinds by name (`kind:image`, `kind:code`, ...): worked out from a name's
//! extension (or, for a few, its whole name), for the query language and
//! for the snapshot's per-entry class codes.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::index::ext::{MAX_KEYED_EXT, MulHasher, ext_key};

/// What an entry is, for `kind:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindClass {
    Document,
    Image,
    Audio,
    Video,
    Archive,
    Code,
    Text,
    Folder,
}

/// The names whose kind is not their extension's (see [`kind_of`]).
pub const KIND_BY_WHOLE_NAME: &[&str] = &["makefile", "dockerfile", "cmakelists.txt", "justfile"];

/// Extensions per kind; anything else falls back on its MIME type. Only
/// the names in [`KIND_BY_WHOLE_NAME`] are judged by more than their
/// extension (the text after the last `.`, lowercased).
pub fn kind_of(name: &str, is_dir: bool) -> Option<KindClass> {
    if is_dir {
        return Some(KindClass::Folder);
    }
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    const ARCHIVE: &[&str] = &[
        "zip", "tar", "gz", "tgz", "bz2", "tbz2", "xz", "txz", "zst", "7z", "rar", "lz", "lzma",
        "cab", "iso", "deb", "rpm", "jar", "dmg", "apk",
    ];
    const DOCUMENT: &[&str] = &[
        "pdf", "doc", "docx", "odt", "rtf", "xls", "xlsx", "ods", "ppt", "pptx", "odp", "epub",
        "pages", "numbers", "key", "tex",
    ];
    const CODE: &[&str] = &[
        "rs", "py", "c", "h", "cc", "cpp", "hpp", "cxx", "js", "mjs", "cjs", "ts", "tsx", "jsx",
        "go", "java", "kt", "swift", "rb", "php", "cs", "scala", "sh", "bash", "zsh", "fish", "pl",
        "pm", "lua", "r", "sql", "html", "htm", "css", "scss", "vue", "svelte", "toml", "yaml",
        "yml", "json", "xml", "proto", "cmake", "mk", "gradle", "dart", "zig", "hs", "ml", "ex",
        "exs", "erl", "clj", "s", "asm", "m", "mm",
    ];
    const TEXT: &[&str] = &[
        "txt", "md", "rst", "log", "csv", "tsv", "ini", "cfg", "conf", "text", "org", "adoc", "srt",
    ];
    if ARCHIVE.contains(&ext) {
        return Some(KindClass::Archive);
    }
    if DOCUMENT.contains(&ext) {
        return Some(KindClass::Document);
    }
    if CODE.contains(&ext) || KIND_BY_WHOLE_NAME.contains(&lower.as_str()) {
        return Some(KindClass::Code);
    }
    if TEXT.contains(&ext) {
        return Some(KindClass::Text);
    }
    if ext.is_empty() {
        return None;
    }
    let mime = mime_guess::from_ext(ext).first()?;
    match mime.type_().as_str() {
        "image" => Some(KindClass::Image),
        "audio" => Some(KindClass::Audio),
        "video" => Some(KindClass::Video),
        "text" => Some(KindClass::Text),
        _ => None,
    }
}

/// [`kind_of`] a file of folded name `name`, as a class code (see
/// [`Snapshot::classes`]). A kind follows from the extension (but for a few
/// whole names), so each extension is worked out once per thread (the
/// memo is dropped past 4,096 of them).
pub(crate) fn name_class(name: &[u8]) -> u8 {
    type Memo = HashMap<(u64, u32), u8, BuildHasherDefault<MulHasher>>;
    thread_local! {
        static MEMO: std::cell::RefCell<Memo> = std::cell::RefCell::new(Memo::default());
    }
    let class = || kind_of(&String::from_utf8_lossy(name), false).map_or(0, |c| c as u8 + 1);
    let ext = memchr::memrchr(b'.', name).map_or(&[][..], |p| &name[p + 1..]);
    if ext.len() > MAX_KEYED_EXT || KIND_BY_WHOLE_NAME.iter().any(|w| w.as_bytes() == name) {
        return class();
    }
    MEMO.with_borrow_mut(|memo| {
        if memo.len() > 4096 {
            memo.clear();
        }
        *memo.entry(ext_key(ext)).or_insert_with(class)
    })
}
