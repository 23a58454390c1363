//! Which extractor a file name calls for, decided by extension alone.
//!
//! The daemon asks this for every file of a content-enabled root before it
//! queues anything, so it must be cheap and must not touch the disk. Three
//! answers: a known kind; `None` for what is never read (images, media,
//! archives, executables, databases, fonts); and [`Kind::MaybeText`] for
//! everything else, including names without an extension (`README`,
//! `Makefile`), which is read as text only if its first 8 KiB hold no NUL
//! byte (the rule of git and grep; UTF-16 without a BOM is therefore taken for
//! binary, with a BOM it is text).

/// What a file is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// Plain text or source code, any encoding.
    Text,
    /// An unknown extension: text if it does not look binary.
    MaybeText,
    /// Markdown, kept as written (its markup is mostly punctuation).
    Markdown,
    /// HTML: text only, no tags, no script or style, entities decoded.
    Html,
    /// XML (and SVG): character data only.
    Xml,
    Pdf,
    Docx,
    Pptx,
    Xlsx,
    Odt,
    Ods,
    Odp,
    /// Rich Text Format: text with control words dropped.
    Rtf,
    /// A mail message: headers Subject, From, To, Cc, Date, then text parts.
    Eml,
    /// An EPUB e-book: its chapters' text in reading order.
    Epub,
    /// An mbox mailbox: each message as an `Eml`, separated by a form feed
    /// line ([`crate::formats::mbox::SEPARATOR`]).
    Mbox,
    /// An archive (zip, tar, tar.gz/tgz, tar.zst, 7z): each member's path, and
    /// the text of its text members (see [`crate::formats::archive`]).
    Archive,
    /// An Outlook message (`.msg`, an OLE compound file): read as an `Eml`
    /// is (see [`crate::formats::msg`]).
    Msg,
    /// A photo, song or video's metadata (never chosen by
    /// [`kind_for_name`]: the daemon asks for it by
    /// [`crate::media::media_kind_for_name`]); the text is
    /// [`crate::media::Media::encode`]'s lines.
    Media,
}

const ALL: [Kind; 19] = [
    Kind::Text,
    Kind::MaybeText,
    Kind::Markdown,
    Kind::Html,
    Kind::Xml,
    Kind::Pdf,
    Kind::Docx,
    Kind::Pptx,
    Kind::Xlsx,
    Kind::Odt,
    Kind::Ods,
    Kind::Odp,
    Kind::Rtf,
    Kind::Eml,
    Kind::Epub,
    Kind::Mbox,
    Kind::Archive,
    Kind::Msg,
    Kind::Media,
];

impl Kind {
    /// A stable name (`text`, `pdf`, `docx`, ...), used in the sandbox protocol.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::MaybeText => "maybe_text",
            Kind::Markdown => "markdown",
            Kind::Html => "html",
            Kind::Xml => "xml",
            Kind::Pdf => "pdf",
            Kind::Docx => "docx",
            Kind::Pptx => "pptx",
            Kind::Xlsx => "xlsx",
            Kind::Odt => "odt",
            Kind::Ods => "ods",
            Kind::Odp => "odp",
            Kind::Rtf => "rtf",
            Kind::Eml => "eml",
            Kind::Epub => "epub",
            Kind::Mbox => "mbox",
            Kind::Archive => "archive",
            Kind::Msg => "msg",
            Kind::Media => "media",
        }
    }

    /// The inverse of [`Kind::name`].
    pub fn from_name(name: &str) -> Option<Kind> {
        ALL.into_iter().find(|k| k.name() == name)
    }

    /// The extractor that reads this kind, as stored with the text.
    pub fn extractor(self) -> &'static str {
        match self {
            Kind::Text | Kind::MaybeText | Kind::Markdown => "text",
            Kind::Html | Kind::Xml => "markup",
            Kind::Pdf => "pdf",
            Kind::Docx | Kind::Pptx | Kind::Xlsx => "ooxml",
            Kind::Odt | Kind::Ods | Kind::Odp => "odf",
            Kind::Rtf => "rtf",
            Kind::Eml => "eml",
            Kind::Epub => "epub",
            Kind::Mbox => "mbox",
            Kind::Archive => "archive",
            Kind::Msg => "msg",
            Kind::Media => "media",
        }
    }

    /// The extractor's version. Bump the number of an extractor whenever its
    /// output for the same file changes, so the daemon re-extracts rows
    /// stored with an older number.
    pub fn version(self) -> u32 {
        use crate::formats;
        match self {
            Kind::Text | Kind::MaybeText | Kind::Markdown => formats::text::VERSION,
            Kind::Html | Kind::Xml => formats::markup::VERSION,
            Kind::Pdf => formats::pdf::VERSION,
            Kind::Docx | Kind::Pptx | Kind::Xlsx | Kind::Odt | Kind::Ods | Kind::Odp => {
                formats::office::VERSION
            }
            Kind::Rtf => formats::rtf::VERSION,
            Kind::Eml => formats::mail::VERSION,
            Kind::Epub => formats::epub::VERSION,
            Kind::Mbox => formats::mbox::VERSION,
            Kind::Archive => formats::archive::VERSION,
            Kind::Msg => formats::msg::VERSION,
            Kind::Media => crate::media::VERSION,
        }
    }

    /// How a document's bytes become text, for kinds whose format fixes it
    /// (text, HTML and XML name the encoding they were decoded from
    /// instead: see [`crate::Extracted::encoding`]).
    pub fn decoding(self) -> &'static str {
        match self {
            Kind::Pdf => "PDF text (font encodings)",
            Kind::Docx | Kind::Pptx | Kind::Xlsx => "UTF-8 (Office Open XML)",
            Kind::Odt | Kind::Ods | Kind::Odp => "UTF-8 (OpenDocument XML)",
            Kind::Rtf => "RTF (code page and \\u escapes)",
            Kind::Eml => "MIME (each part's charset)",
            Kind::Epub => "EPUB (XHTML chapters)",
            Kind::Mbox => "MIME (each message's charsets)",
            Kind::Archive => "archive members (each text member decoded as a file)",
            Kind::Msg => "Outlook message properties (UTF-16 or the message's code page)",
            Kind::Media => "media metadata (EXIF, tags, headers)",
            Kind::Text | Kind::MaybeText | Kind::Markdown | Kind::Html | Kind::Xml => "UTF-8",
        }
    }

    /// Documents may be up to [`crate::Limits::max_document_file`] bytes;
    /// the others are text, capped at [`crate::Limits::max_text_file`].
    pub fn is_document(self) -> bool {
        matches!(
            self,
            Kind::Pdf
                | Kind::Docx
                | Kind::Pptx
                | Kind::Xlsx
                | Kind::Odt
                | Kind::Ods
                | Kind::Odp
                | Kind::Rtf
                | Kind::Eml
                | Kind::Epub
                | Kind::Mbox
                | Kind::Archive
                | Kind::Msg
        )
    }

    /// True when this crate's own linear-time code reads the kind, so the
    /// daemon may run it in-process; false for third-party parsers of hostile
    /// formats (PDF, zip, mail), which run in the sandboxed child.
    pub fn in_process(self) -> bool {
        matches!(
            self,
            Kind::Text | Kind::MaybeText | Kind::Markdown | Kind::Html | Kind::Xml | Kind::Rtf
        )
    }
}

/// The kind a file of this name would be extracted as (extension compared
/// case-insensitively), or `None` for files that are never read. A
/// Maildir message's file (`1700000000.M1P2.host:2,S`: see
/// [`is_maildir_message`]) is a mail message.
pub fn kind_for_name(name: &[u8]) -> Option<Kind> {
    if is_maildir_message(name) {
        return Some(Kind::Eml);
    }
    kind_by_extension(name)
}

/// The kind the file at `path` is read as, `by_name` being its name's
/// ([`kind_for_name`]): that kind, except a file of no known extension
/// whose head is an mbox mailbox's ([`crate::formats::mbox::looks_like_mbox`]),
/// read as one. Only such a file is opened here (its first 1 KiB).
pub fn kind_for_file(path: &std::path::Path, by_name: Kind) -> Kind {
    if by_name != Kind::MaybeText {
        return by_name;
    }
    let Ok((file, _)) = crate::open::open_regular(path, u64::MAX) else {
        return by_name;
    };
    let mut head = Vec::with_capacity(1024);
    if std::io::Read::read_to_end(&mut std::io::Read::take(file, 1024), &mut head).is_err() {
        return by_name;
    }
    if crate::formats::mbox::looks_like_mbox(&head) {
        Kind::Mbox
    } else {
        by_name
    }
}

/// True for the name of a message in a Maildir folder's `cur/` or `new/`:
/// `time.unique.host`, the time in seconds (at least nine digits), and
/// either the `:2,flags` suffix of `cur/` (`!2,` where `:` is not allowed)
/// or a delivery id as mail programs write it (`M20P4242`, `P4242Q1`, or
/// digits), so that `1700000000.report.txt` stays a text file.
pub fn is_maildir_message(name: &[u8]) -> bool {
    let base = name.rsplit(|&b| b == b'/').next().unwrap_or(name);
    let (unique, flagged) = match base.iter().position(|&b| b == b':' || b == b'!') {
        Some(i) => (&base[..i], base[i + 1..].starts_with(b"2,")),
        None => (base, false),
    };
    let mut parts = unique.splitn(3, |&b| b == b'.');
    let (Some(time), Some(id), Some(host)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let id_like = match id {
        [first, second, ..] => {
            first.is_ascii_digit() || (b"MPQRVIX#".contains(first) && second.is_ascii_digit())
        }
        [only] => only.is_ascii_digit(),
        [] => false,
    };
    time.len() >= 9
        && time.iter().all(u8::is_ascii_digit)
        && !host.is_empty()
        && id
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"_=-#".contains(b))
        && (flagged || id_like)
}

fn kind_by_extension(name: &[u8]) -> Option<Kind> {
    let base = name.rsplit(|&b| b == b'/').next().unwrap_or(name);
    let ext = match base.iter().rposition(|&b| b == b'.') {
        // ".bashrc": a dotfile's name is not an extension.
        Some(0) | None => return Some(Kind::MaybeText),
        Some(dot) => &base[dot + 1..],
    };
    if ext.is_empty() || ext.len() > 16 {
        return Some(Kind::MaybeText);
    }
    let ext = ext.to_ascii_lowercase();
    let Ok(ext) = std::str::from_utf8(&ext) else {
        return Some(Kind::MaybeText);
    };
    Some(match ext {
        "pdf" => Kind::Pdf,
        "docx" | "docm" | "dotx" => Kind::Docx,
        "pptx" | "pptm" | "potx" => Kind::Pptx,
        "xlsx" | "xlsm" | "xltx" => Kind::Xlsx,
        "odt" | "ott" => Kind::Odt,
        "ods" | "ots" => Kind::Ods,
        "odp" | "otp" => Kind::Odp,
        "rtf" => Kind::Rtf,
        "eml" => Kind::Eml,
        "msg" => Kind::Msg,
        "epub" => Kind::Epub,
        "mbox" | "mbx" => Kind::Mbox,
        "zip" | "tar" | "tgz" | "tzst" | "7z" => Kind::Archive,
        "gz" | "zst" if is_tar(base) => Kind::Archive,
        "md" | "markdown" | "mdown" | "mkd" => Kind::Markdown,
        "html" | "htm" | "xhtml" | "shtml" => Kind::Html,
        "xml" | "svg" | "xsl" | "xslt" | "xsd" | "rss" | "atom" | "plist" | "opf" | "ncx"
        | "kml" | "gpx" | "xul" => Kind::Xml,
        e if TEXT.contains(&e) => Kind::Text,
        e if NEVER.contains(&e) => return None,
        _ => Kind::MaybeText,
    })
}

/// True for `x.tar.gz`, `x.tar.zst` (any case): a compressed tar.
fn is_tar(base: &[u8]) -> bool {
    let stem = &base[..base.iter().rposition(|&b| b == b'.').unwrap_or(0)];
    stem.len() > 4 && stem[stem.len() - 4..].eq_ignore_ascii_case(b".tar")
}

/// Extensions that are text by convention: prose, data, configuration, source.
const TEXT: &[&str] = &[
    "txt",
    "text",
    "log",
    "csv",
    "tsv",
    "json",
    "jsonl",
    "ndjson",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "config",
    "properties",
    "env",
    "rst",
    "adoc",
    "asciidoc",
    "org",
    "tex",
    "bib",
    "sty",
    "cls",
    "srt",
    "vtt",
    "sub",
    "rs",
    "c",
    "h",
    "cc",
    "cpp",
    "cxx",
    "hpp",
    "hh",
    "hxx",
    "m",
    "mm",
    "go",
    "py",
    "pyi",
    "rb",
    "pl",
    "pm",
    "php",
    "java",
    "kt",
    "kts",
    "scala",
    "groovy",
    "gradle",
    "swift",
    "cs",
    "fs",
    "fsx",
    "vb",
    "js",
    "mjs",
    "cjs",
    "jsx",
    "ts",
    "tsx",
    "vue",
    "svelte",
    "css",
    "scss",
    "sass",
    "less",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "psm1",
    "bat",
    "cmd",
    "lua",
    "r",
    "jl",
    "dart",
    "ex",
    "exs",
    "erl",
    "hrl",
    "hs",
    "lhs",
    "ml",
    "mli",
    "clj",
    "cljs",
    "edn",
    "lisp",
    "el",
    "scm",
    "rkt",
    "nim",
    "zig",
    "v",
    "sv",
    "vhd",
    "vhdl",
    "sql",
    "proto",
    "graphql",
    "gql",
    "cmake",
    "mk",
    "make",
    "dockerfile",
    "tf",
    "hcl",
    "nix",
    "diff",
    "patch",
    "po",
    "pot",
    "ics",
    "vcf",
    "vcard",
    "nfo",
    "diz",
    "asm",
    "s",
    "f",
    "f90",
    "for",
    "pas",
    "d",
    "cr",
    "elm",
    "purs",
    "sml",
    "tcl",
    "awk",
    "sed",
    "vim",
    "lock",
    "gitignore",
    "editorconfig",
    "desktop",
    "service",
    "list",
    "man",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
];

/// Extensions that are never text: images, audio, video, archives and
/// compressed files, executables and libraries, fonts, databases, disk images,
/// and binary office formats this crate does not parse.
const NEVER: &[&str] = &[
    "png",
    "jpg",
    "jpeg",
    "gif",
    "bmp",
    "tif",
    "tiff",
    "webp",
    "heic",
    "heif",
    "avif",
    "ico",
    "icns",
    "psd",
    "xcf",
    "raw",
    "cr2",
    "nef",
    "arw",
    "dng",
    "mp3",
    "flac",
    "ogg",
    "oga",
    "opus",
    "wav",
    "aac",
    "m4a",
    "wma",
    "aiff",
    "mid",
    "midi",
    "mp4",
    "m4v",
    "mkv",
    "webm",
    "avi",
    "mov",
    "wmv",
    "flv",
    "mpg",
    "mpeg",
    "3gp",
    "gz",
    "bz2",
    "tbz2",
    "xz",
    "txz",
    "zst",
    "lz",
    "lz4",
    "lzma",
    "rar",
    "cab",
    "arj",
    "cpio",
    "deb",
    "rpm",
    "apk",
    "jar",
    "war",
    "ear",
    "whl",
    "egg",
    "gem",
    "crate",
    "nupkg",
    "exe",
    "dll",
    "so",
    "dylib",
    "a",
    "o",
    "obj",
    "lib",
    "ko",
    "elf",
    "bin",
    "class",
    "pyc",
    "pyo",
    "wasm",
    "rlib",
    "rmeta",
    "ttf",
    "otf",
    "woff",
    "woff2",
    "eot",
    "pfb",
    "db",
    "sqlite",
    "sqlite3",
    "mdb",
    "accdb",
    "dbf",
    "iso",
    "img",
    "dmg",
    "vmdk",
    "qcow2",
    "vdi",
    "vhdx",
    "doc",
    "xls",
    "ppt",
    "pst",
    "mobi",
    "azw3",
    "djvu",
    "xps",
    "odg",
    "odf",
    "sxw",
    "pages",
    "key",
    "numbers",
    "swf",
    "blend",
    "fbx",
    "stl",
    "glb",
    "npy",
    "npz",
    "pkl",
    "pickle",
    "parquet",
    "arrow",
    "feather",
    "h5",
    "hdf5",
    "mat",
    "pt",
    "onnx",
    "safetensors",
    "gguf",
    "idx",
    "pack",
    "dat",
    "swp",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_are_case_insensitive() {
        assert_eq!(kind_for_name(b"Report.PDF"), Some(Kind::Pdf));
        assert_eq!(kind_for_name(b"a/b/notes.Txt"), Some(Kind::Text));
        assert_eq!(kind_for_name(b"deck.PPTX"), Some(Kind::Pptx));
        assert_eq!(kind_for_name(b"photo.JPG"), None);
        assert_eq!(kind_for_name(b"backup.TAR.GZ"), Some(Kind::Archive));
        assert_eq!(kind_for_name(b"photos.7Z"), Some(Kind::Archive));
        // A compressed file that is not a tar is never read.
        assert_eq!(kind_for_name(b"backup.gz"), None);
    }

    #[test]
    fn unknown_and_missing_extensions_are_sniffed() {
        assert_eq!(kind_for_name(b"Makefile"), Some(Kind::MaybeText));
        assert_eq!(kind_for_name(b".bashrc"), Some(Kind::MaybeText));
        assert_eq!(kind_for_name(b"data.weird"), Some(Kind::MaybeText));
        // A name that is not UTF-8 still has an extension to go by.
        assert_eq!(kind_for_name(b"caf\xe9.md"), Some(Kind::Markdown));
        assert_eq!(kind_for_name(b"odd.\xff"), Some(Kind::MaybeText));
    }

    #[test]
    fn maildir_messages_are_mail() {
        for name in [
            &b"1700000000.M20P4242.mailhost:2,S"[..],
            b"1700000000.M20P4242.mail.example.org",
            b"1700000000.M123P456.host,S=1234,W=1256:2,RS",
            b"1700000000.12345_1.host!2,",
        ] {
            assert_eq!(kind_for_name(name), Some(Kind::Eml), "{name:?}");
        }
        assert_eq!(kind_for_name(b"1700000000.report.txt"), Some(Kind::Text));
        assert_eq!(kind_for_name(b"170000.a.b"), Some(Kind::MaybeText));
        assert_eq!(kind_for_name(b"1700000000.weird"), Some(Kind::MaybeText));
        // A Maildir-like name ending in an archive's extension is the archive.
        assert_eq!(
            kind_for_name(b"1700000000.backup.tar.gz"),
            Some(Kind::Archive)
        );
        assert_eq!(kind_for_name(b"1700000000.backup.gz"), None);
    }

    #[test]
    fn names_round_trip() {
        for k in ALL {
            assert_eq!(Kind::from_name(k.name()), Some(k));
        }
    }
}
