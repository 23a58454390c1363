//! One-line summaries of what a file says, without a language model, for a
//! folder's manifest (`fsctl manifest`, MCP `folder_manifest`): a
//! document's title, else its first heading, else its first sentence; for
//! source code, the module's doc comment.
//!
//! Pure functions over text the caller has read (the head of a file, or a
//! document's extracted text); nothing here opens a file. Every summary is
//! one line of at most [`MAX_CHARS`] characters.

/// The longest summary, in characters (longer ones are cut at a word and
/// end in `…`).
pub const MAX_CHARS: usize = 120;

/// Bytes of a text file's head that are enough for a summary.
pub const HEAD_BYTES: usize = 64 << 10;

/// Bumped whenever a summary of the same text would come out different,
/// so cached summaries are made again.
pub const VERSION: u32 = 1;

/// Where a summary came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The document's own title (its properties, HTML `<title>`, Markdown
    /// front matter `title:`).
    Title,
    /// Its first heading.
    Heading,
    /// The first sentence of its text.
    Sentence,
    /// A source file's module doc comment.
    DocComment,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Title => "title",
            Source::Heading => "heading",
            Source::Sentence => "sentence",
            Source::DocComment => "doc-comment",
        }
    }

    pub fn from_name(s: &str) -> Option<Source> {
        Some(match s {
            "title" => Source::Title,
            "heading" => Source::Heading,
            "sentence" => Source::Sentence,
            "doc-comment" => Source::DocComment,
            _ => return None,
        })
    }
}

/// How a file is read for its summary, by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Html,
    Rst,
    AsciiDoc,
    Rust,
    Python,
    /// JavaScript and TypeScript.
    Script,
    Go,
    /// Prose in plain text (`.txt`, a README without extension).
    Text,
    /// PDF, Office, OpenDocument, EPUB, RTF, mail: title from the properties,
    /// else the extracted text's first sentence.
    Document,
    /// Other source code and data (JSON, YAML, CSV, ...): no summary.
    None,
}

impl Format {
    /// Whether the summary needs the raw bytes of the file's head (markup,
    /// comments), as opposed to a document's extracted text.
    pub fn reads_head(self) -> bool {
        !matches!(self, Format::Document | Format::None)
    }
}

/// The format of a file named `name` (its last extension, lowercased).
pub fn format_for_name(name: &[u8]) -> Format {
    let base = name.rsplit(|&b| b == b'/').next().unwrap_or(name);
    let ext = match base.iter().rposition(|&b| b == b'.') {
        Some(0) => return Format::None,
        Some(dot) => base[dot + 1..].to_ascii_lowercase(),
        // README, LICENSE, NOTES: prose by convention.
        None => return Format::Text,
    };
    match ext.as_slice() {
        b"md" | b"markdown" | b"mdown" | b"mkd" => Format::Markdown,
        b"html" | b"htm" | b"xhtml" | b"shtml" => Format::Html,
        b"rst" => Format::Rst,
        b"adoc" | b"asciidoc" | b"asc" => Format::AsciiDoc,
        b"rs" => Format::Rust,
        b"py" | b"pyi" => Format::Python,
        b"js" | b"mjs" | b"cjs" | b"jsx" | b"ts" | b"tsx" | b"mts" | b"cts" => Format::Script,
        b"go" => Format::Go,
        b"txt" | b"text" => Format::Text,
        b"pdf" | b"docx" | b"docm" | b"dotx" | b"pptx" | b"pptm" | b"potx" | b"xlsx" | b"xlsm"
        | b"xltx" | b"odt" | b"ott" | b"ods" | b"ots" | b"odp" | b"otp" | b"rtf" | b"eml"
        | b"epub" => Format::Document,
        _ => Format::None,
    }
}

/// A title or heading as one line of at most [`MAX_CHARS`] characters;
/// `None` when nothing is left of it.
pub fn one_line(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len().min(MAX_CHARS * 4));
    for w in s.split(|c: char| c.is_whitespace() || c.is_control()) {
        if w.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
        if out.len() > MAX_CHARS * 4 {
            break;
        }
    }
    if out.is_empty() {
        return None;
    }
    if out.chars().count() <= MAX_CHARS {
        return Some(out);
    }
    // Cut at the last word that leaves room for the ellipsis.
    let cut: String = out.chars().take(MAX_CHARS - 1).collect();
    let at = match cut.rfind(' ') {
        Some(k) if k > MAX_CHARS / 2 => k,
        _ => cut.len(),
    };
    Some(format!("{}…", cut[..at].trim_end()))
}

/// The summary of a file in `format` whose text (the head of the file, or
/// a document's extracted text) is `text`. A document's title from its
/// properties is the caller's to try first.
pub fn summarise(format: Format, text: &str) -> Option<(Source, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match format {
        Format::Markdown => markdown(text),
        Format::Html => html(text),
        Format::Rst => rst(text),
        Format::AsciiDoc => asciidoc(text),
        Format::Rust => rust_doc(text),
        Format::Python => python_doc(text),
        Format::Script => jsdoc(text),
        Format::Go => go_doc(text),
        Format::Text | Format::Document => sentence(text),
        Format::None => None,
    }
}

fn tagged(source: Source, s: &str) -> Option<(Source, String)> {
    one_line(s).map(|l| (source, l))
}

/// The first sentence of `text`: its first paragraph up to a `.`, `!` or
/// `?` followed by a space (or the paragraph's end).
pub fn first_sentence(text: &str) -> Option<String> {
    let mut para = String::new();
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() {
            if para.is_empty() {
                continue;
            }
            break;
        }
        if !para.is_empty() {
            para.push(' ');
        }
        para.push_str(l);
        if para.len() > MAX_CHARS * 8 {
            break;
        }
    }
    let chars: Vec<(usize, char)> = para.char_indices().collect();
    let mut end = para.len();
    for (k, &(i, c)) in chars.iter().enumerate() {
        if matches!(c, '.' | '!' | '?' | '。' | '！' | '？')
            && chars.get(k + 1).is_none_or(|&(_, n)| n.is_whitespace())
        {
            end = i + c.len_utf8();
            break;
        }
    }
    one_line(&para[..end])
}

fn sentence(text: &str) -> Option<(Source, String)> {
    first_sentence(text).map(|s| (Source::Sentence, s))
}

/// Markdown: front matter's `title:`, else the first ATX (`# X`) or setext
/// heading, else the first sentence of the prose (markup taken out).
fn markdown(text: &str) -> Option<(Source, String)> {
    let mut body = text;
    if let Some(rest) = text.strip_prefix("---\n")
        && let Some(end) = rest.find("\n---")
    {
        let front = &rest[..end];
        for l in front.lines() {
            if let Some(t) = l.strip_prefix("title:") {
                let t = t.trim().trim_matches(|c| c == '"' || c == '\'');
                if let Some(r) = tagged(Source::Title, t) {
                    return Some(r);
                }
            }
        }
        body = rest[end + 4..].trim_start_matches(|c| c != '\n');
    }
    let lines: Vec<&str> = body.lines().collect();
    let mut fenced = false;
    for (k, line) in lines.iter().enumerate() {
        let l = line.trim_start();
        if l.starts_with("```") || l.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced || line.starts_with("    ") {
            continue;
        }
        let hashes = l.bytes().take_while(|&b| b == b'#').count();
        if (1..=6).contains(&hashes) && l[hashes..].starts_with([' ', '\t']) {
            let h = l[hashes..].trim().trim_end_matches('#').trim();
            if let Some(r) = tagged(Source::Heading, &inline_markdown(h)) {
                return Some(r);
            }
        }
        if !l.trim().is_empty()
            && let Some(next) = lines.get(k + 1)
        {
            let n = next.trim();
            if n.len() >= 2
                && (n.bytes().all(|b| b == b'=') || n.bytes().all(|b| b == b'-'))
                && let Some(r) = tagged(Source::Heading, &inline_markdown(l.trim()))
            {
                return Some(r);
            }
        }
    }
    // No heading: the prose's first sentence, without list or quote marks.
    let mut fenced = false;
    let prose: String = body
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            if t.starts_with("```") || t.starts_with("~~~") {
                fenced = !fenced;
                return false;
            }
            !fenced && !t.starts_with('<')
        })
        .map(|l| {
            let t = l.trim_start();
            let t = t.trim_start_matches(['>', '-', '*', '+', ' ']);
            inline_markdown(t)
        })
        .collect::<Vec<_>>()
        .join("\n");
    sentence(&prose)
}

/// Markdown's inline markup taken out: `[text](url)` as text, emphasis and
/// code marks dropped.
fn inline_markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](") {
            Some(close) if !after[..close].contains('[') => {
                out.push_str(&after[..close]);
                let tail = &after[close + 2..];
                rest = match tail.find(')') {
                    Some(e) => &tail[e + 1..],
                    None => "",
                };
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.replace(['*', '`'], "").replace("__", "")
}

/// HTML: `<title>`, else the first `<h1>` (`<h2>`...), else the first
/// sentence of the text without tags.
fn html(text: &str) -> Option<(Source, String)> {
    let lower = text.to_ascii_lowercase();
    if let Some(t) = element(text, &lower, "title")
        && let Some(r) = tagged(Source::Title, &t)
    {
        return Some(r);
    }
    for h in ["h1", "h2", "h3"] {
        if let Some(t) = element(text, &lower, h)
            && let Some(r) = tagged(Source::Heading, &t)
        {
            return Some(r);
        }
    }
    // The body's text: after <body> when there is one, tags and
    // script/style contents left out.
    let from = lower.find("<body").unwrap_or(0);
    sentence(&strip_tags(&text[from..], &lower[from..]))
}

/// The text inside the first `<name ...>...</name>` (tags inside removed,
/// entities decoded).
fn element(text: &str, lower: &str, name: &str) -> Option<String> {
    let open = format!("<{name}");
    let mut at = 0;
    while let Some(k) = lower[at..].find(&open) {
        let s = at + k;
        let after = s + open.len();
        // `<title>` or `<title attr>`, not `<titlebar>`.
        if lower[after..].starts_with(['>', ' ', '\t', '\n', '\r']) {
            let gt = after + lower[after..].find('>')?;
            let close = format!("</{name}");
            let end = gt + 1 + lower[gt + 1..].find(&close)?;
            return Some(strip_tags(&text[gt + 1..end], &lower[gt + 1..end]));
        }
        at = after;
    }
    None
}

/// Text without tags, comments, scripts and styles; entities decoded.
fn strip_tags(text: &str, lower: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &lower[i..];
        if rest.starts_with("<!--") {
            i += rest.find("-->").map_or(rest.len(), |e| e + 3);
        } else if rest.starts_with("<script") || rest.starts_with("<style") {
            let close = if rest.starts_with("<script") {
                "</script"
            } else {
                "</style"
            };
            i += rest.find(close).map_or(rest.len(), |e| e + close.len());
            i += lower[i..].find('>').map_or(lower.len() - i, |e| e + 1);
        } else if rest.starts_with('<') {
            // Block-level ends become line breaks, so paragraphs stay apart.
            let block = ["<p", "</p", "<br", "<div", "</div", "<li", "<h", "</h"]
                .iter()
                .any(|b| rest.starts_with(b));
            if block {
                out.push_str("\n\n");
            }
            i += rest.find('>').map_or(rest.len(), |e| e + 1);
        } else {
            let next = rest.find('<').unwrap_or(rest.len());
            out.push_str(&entities(&text[i..i + next]));
            i += next;
        }
    }
    out
}

fn entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    s.replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// reStructuredText: the first title (a line with an underline, and maybe
/// an overline, of one punctuation character at least as long), else the
/// first sentence.
fn rst(text: &str) -> Option<(Source, String)> {
    let adornment = |l: &str| {
        let l = l.trim_end();
        let mut b = l.bytes();
        match b.next() {
            Some(c) if c.is_ascii_punctuation() && l.len() >= 2 => l.bytes().all(|x| x == c),
            _ => false,
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    for (k, l) in lines.iter().enumerate() {
        // An overlined title: adornment, title, the same adornment.
        if adornment(l)
            && let (Some(t), Some(u)) = (lines.get(k + 1), lines.get(k + 2))
            && u.trim_end() == l.trim_end()
            && !t.trim().is_empty()
        {
            return tagged(Source::Heading, t.trim());
        }
        if l.trim().is_empty() || adornment(l) || l.starts_with(' ') || l.starts_with("..") {
            continue;
        }
        if let Some(u) = lines.get(k + 1)
            && adornment(u)
            && u.trim_end().chars().count() >= l.trim().chars().count()
        {
            return tagged(Source::Heading, l.trim());
        }
    }
    let prose: String = lines
        .iter()
        .filter(|l| !adornment(l) && !l.starts_with(".."))
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    sentence(&prose)
}

/// AsciiDoc: the document title (`= Title`) or the first section title
/// (`== Section`), else the first sentence.
fn asciidoc(text: &str) -> Option<(Source, String)> {
    for l in text.lines() {
        let eq = l.bytes().take_while(|&b| b == b'=').count();
        if (1..=6).contains(&eq) && l[eq..].starts_with(' ') {
            return tagged(Source::Heading, l[eq..].trim());
        }
    }
    let prose: String = text
        .lines()
        .filter(|l| !l.starts_with(':') && !l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    sentence(&prose)
}

/// Lines at the top of a file before its code: blank lines, a shebang and
/// these comment prefixes skipped by `skip`.
fn doc_from(lines: &str) -> Option<(Source, String)> {
    first_sentence(lines).map(|s| (Source::DocComment, s))
}

/// Rust: the leading `//!` lines (or a `/*! ... */` block).
fn rust_doc(text: &str) -> Option<(Source, String)> {
    let mut doc = String::new();
    let mut started = false;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let l = line.trim_start();
        if let Some(d) = l.strip_prefix("//!") {
            started = true;
            doc.push_str(d.strip_prefix(' ').unwrap_or(d));
            doc.push('\n');
        } else if let Some(d) = l.strip_prefix("/*!") {
            let mut block = d.to_owned();
            if !d.contains("*/") {
                for more in lines.by_ref() {
                    block.push('\n');
                    block.push_str(more);
                    if more.contains("*/") {
                        break;
                    }
                }
            }
            let block = block.split("*/").next().unwrap_or("");
            let cleaned: Vec<&str> = block
                .lines()
                .map(|x| x.trim_start().trim_start_matches('*').trim_start())
                .collect();
            return doc_from(&cleaned.join("\n"));
        } else if started {
            break;
        } else if l.is_empty() || l.starts_with("#!") || l.starts_with("//") {
            // A shebang, a licence header in `//` lines, blank lines.
            continue;
        } else {
            break;
        }
    }
    if started { doc_from(&doc) } else { None }
}

/// Python: the module docstring (after a shebang, encoding line and
/// comments).
fn python_doc(text: &str) -> Option<(Source, String)> {
    let mut rest = text;
    loop {
        let t = rest.trim_start();
        if t.starts_with('#') {
            rest = t.find('\n').map_or("", |e| &t[e + 1..]);
        } else {
            rest = t;
            break;
        }
    }
    let rest = rest.trim_start_matches(['r', 'R', 'u', 'U']);
    for q in ["\"\"\"", "'''", "\"", "'"] {
        if let Some(body) = rest.strip_prefix(q) {
            let end = body.find(q)?;
            return doc_from(&body[..end]);
        }
    }
    None
}

/// JavaScript and TypeScript: the first block comment at the top of the
/// file (`/** ... */`, its `@file` / `@fileoverview` text when it has one,
/// else its description before the tags).
fn jsdoc(text: &str) -> Option<(Source, String)> {
    let mut rest = text;
    loop {
        let t = rest.trim_start();
        if t.starts_with("#!") || t.starts_with("'use strict'") || t.starts_with("\"use strict\"") {
            rest = t.find('\n').map_or("", |e| &t[e + 1..]);
        } else {
            rest = t;
            break;
        }
    }
    let body = rest
        .strip_prefix("/**")
        .or_else(|| rest.strip_prefix("/*"))?;
    let body = &body[..body.find("*/")?];
    let lines: Vec<&str> = body
        .lines()
        .map(|l| l.trim().trim_start_matches('*').trim())
        .collect();
    for (k, l) in lines.iter().enumerate() {
        for tag in [
            "@fileoverview",
            "@file",
            "@overview",
            "@module",
            "@description",
        ] {
            if let Some(t) = l.strip_prefix(tag) {
                let mut s = t.trim().to_owned();
                for more in &lines[k + 1..] {
                    if more.is_empty() || more.starts_with('@') {
                        break;
                    }
                    s.push(' ');
                    s.push_str(more);
                }
                if let Some(r) = doc_from(&s)
                    && tag != "@module"
                {
                    return Some(r);
                }
            }
        }
    }
    let description: Vec<&str> = lines
        .iter()
        .take_while(|l| !l.starts_with('@'))
        .copied()
        .collect();
    doc_from(&description.join("\n"))
}

/// Go: the comment right before the `package` clause (`// Package x ...`
/// lines, or a `/* */` block).
fn go_doc(text: &str) -> Option<(Source, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let pkg = lines
        .iter()
        .position(|l| l.starts_with("package ") || l.trim() == "package")?;
    let mut doc: Vec<&str> = Vec::new();
    let mut k = pkg;
    while k > 0 {
        k -= 1;
        let l = lines[k].trim();
        if let Some(c) = l.strip_prefix("//") {
            if c.starts_with("go:") || c.starts_with(" +build") {
                break;
            }
            doc.push(c.strip_prefix(' ').unwrap_or(c));
        } else if l.ends_with("*/") {
            let mut block = vec![l.trim_end_matches("*/")];
            while k > 0 && !lines[k].contains("/*") {
                k -= 1;
                block.push(lines[k]);
            }
            block.reverse();
            let first = block[0];
            block[0] = first.split_once("/*").map_or(first, |(_, b)| b);
            doc = block.into_iter().rev().collect();
            break;
        } else {
            break;
        }
    }
    doc.reverse();
    doc_from(&doc.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(format: Format, text: &str) -> Option<(&'static str, String)> {
        summarise(format, text).map(|(src, t)| (src.name(), t))
    }

    fn is(src: &'static str, t: &str) -> Option<(&'static str, String)> {
        Some((src, t.to_owned()))
    }

    #[test]
    fn markdown_headings_front_matter_and_prose() {
        assert_eq!(
            s(Format::Markdown, "\n# Quarterly *report*  #\n\nBody."),
            is("heading", "Quarterly report")
        );
        assert_eq!(
            s(
                Format::Markdown,
                "---\ntitle: \"Trip notes\"\n---\n# Other\n"
            ),
            is("title", "Trip notes")
        );
        assert_eq!(
            s(Format::Markdown, "Setext title\n============\n\ntext"),
            is("heading", "Setext title")
        );
        assert_eq!(
            s(
                Format::Markdown,
                "```\n# not a heading\n```\nSee [the docs](http://x) now. More."
            ),
            is("sentence", "See the docs now.")
        );
        assert_eq!(
            s(Format::Markdown, "#hashtag only\n"),
            is("sentence", "#hashtag only")
        );
    }

    #[test]
    fn html_title_then_heading_then_text() {
        assert_eq!(
            s(
                Format::Html,
                "<html><head><TITLE>Tax &amp; Fees</TITLE></head><h1>x</h1>"
            ),
            is("title", "Tax & Fees")
        );
        assert_eq!(
            s(
                Format::Html,
                "<body><h1 class=a>Welcome <b>home</b></h1></body>"
            ),
            is("heading", "Welcome home")
        );
        assert_eq!(
            s(
                Format::Html,
                "<body><script>var a = 'x. y';</script><p>Hello there. Bye.</p>"
            ),
            is("sentence", "Hello there.")
        );
    }

    #[test]
    fn rst_and_asciidoc_titles() {
        assert_eq!(
            s(Format::Rst, "=======\n Guide\n=======\n\nIntro."),
            is("heading", "Guide")
        );
        assert_eq!(
            s(Format::Rst, ".. comment\n\nInstall\n-------\n"),
            is("heading", "Install")
        );
        assert_eq!(
            s(Format::AsciiDoc, ":toc:\n= The Manual\nAuthor\n"),
            is("heading", "The Manual")
        );
    }

    #[test]
    fn doc_comments() {
        assert_eq!(
            s(
                Format::Rust,
                "// licence\n\n//! Parses the thing.\n//! More.\nuse x;"
            ),
            is("doc-comment", "Parses the thing.")
        );
        assert_eq!(
            s(Format::Rust, "/*!\n * Block doc here.\n */\nfn x(){}"),
            is("doc-comment", "Block doc here.")
        );
        assert_eq!(s(Format::Rust, "use x;\n//! late"), None);
        assert_eq!(
            s(
                Format::Python,
                "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n\"\"\"Tools for taxes.\n\nLong.\"\"\"\n"
            ),
            is("doc-comment", "Tools for taxes.")
        );
        assert_eq!(s(Format::Python, "import os\n\"\"\"no\"\"\""), None);
        assert_eq!(
            s(
                Format::Script,
                "'use strict';\n/**\n * @file Renders the chart.\n * @author me\n */\n"
            ),
            is("doc-comment", "Renders the chart.")
        );
        assert_eq!(
            s(
                Format::Script,
                "/**\n * Helpers for dates. And more.\n * @module dates\n */"
            ),
            is("doc-comment", "Helpers for dates.")
        );
        assert_eq!(
            s(
                Format::Go,
                "// Copyright x\n\n// Package ledger keeps accounts.\n// It is small.\npackage ledger\n"
            ),
            is("doc-comment", "Package ledger keeps accounts.")
        );
        assert_eq!(
            s(Format::Go, "/*\nPackage foo does bar.\n*/\npackage foo"),
            is("doc-comment", "Package foo does bar.")
        );
        assert_eq!(s(Format::Go, "package nodoc\n"), None);
    }

    #[test]
    fn sentences_and_caps() {
        assert_eq!(
            s(Format::Text, "\n\n  The quick fox.  It ran.\n"),
            is("sentence", "The quick fox.")
        );
        assert_eq!(
            s(Format::Text, "Version 2.5 is out! Yes."),
            is("sentence", "Version 2.5 is out!")
        );
        let long = "word ".repeat(60);
        let (_, got) = summarise(Format::Text, &long).unwrap();
        assert!(got.chars().count() <= MAX_CHARS, "{got}");
        assert!(got.ends_with('…') && !got.contains("  "), "{got}");
        assert_eq!(one_line("a\tb\nc\u{7}d"), Some("a b c d".into()));
        assert_eq!(one_line(" \n "), None);
        assert_eq!(s(Format::None, "{\"a\": 1}"), None);
    }

    #[test]
    fn formats_by_name() {
        assert_eq!(format_for_name(b"README"), Format::Text);
        assert_eq!(format_for_name(b"notes.MD"), Format::Markdown);
        assert_eq!(format_for_name(b"a.tsx"), Format::Script);
        assert_eq!(format_for_name(b"r.pdf"), Format::Document);
        assert_eq!(format_for_name(b"book.epub"), Format::Document);
        assert_eq!(format_for_name(b"data.json"), Format::None);
        assert_eq!(format_for_name(b".bashrc"), Format::None);
    }
}
