//! The capped buffer every extractor writes into.
//!
//! Keeping the cap in one place means no extractor can return more than
//! [`crate::Limits::max_text_bytes`], each can stop early once it is full
//! (a 40 MiB spreadsheet stops being read after 2 MiB of text), and the cut
//! always falls on a char boundary. It also owns whitespace between pieces of
//! text, so extractors say "a word boundary here" without doubling spaces.

use crate::{Extracted, Kind};

#[derive(Debug)]
pub struct TextSink {
    text: String,
    cap: usize,
    truncated: bool,
    /// The encoding an extractor decoded from, when it found one.
    encoding: Option<&'static str>,
}

impl TextSink {
    pub fn new(cap: usize) -> Self {
        TextSink {
            text: String::new(),
            cap,
            truncated: false,
            encoding: None,
        }
    }

    /// Records the encoding the source was decoded from.
    pub fn set_encoding(&mut self, name: &'static str) {
        self.encoding = Some(name);
    }

    /// True once the cap was reached: extractors stop reading then.
    pub fn is_full(&self) -> bool {
        self.truncated
    }

    /// Appends `s`, cut at the cap on a char boundary.
    pub fn push_str(&mut self, s: &str) {
        if self.truncated {
            return;
        }
        let room = self.cap - self.text.len();
        if s.len() <= room {
            self.text.push_str(s);
        } else {
            self.text.push_str(&s[..s.floor_char_boundary(room)]);
            self.truncated = true;
        }
    }

    pub fn push(&mut self, c: char) {
        let mut b = [0; 4];
        self.push_str(c.encode_utf8(&mut b));
    }

    /// Ends the current word: a space, unless the text is empty or already
    /// ends in whitespace.
    pub fn space(&mut self) {
        if self
            .text
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_whitespace())
        {
            self.push(' ');
        }
    }

    /// Ends the current line or paragraph: a newline, unless the text is
    /// empty or already ends in one (trailing spaces and tabs are replaced).
    pub fn newline(&mut self) {
        if !self.truncated {
            self.text
                .truncate(self.text.trim_end_matches([' ', '\t']).len());
        }
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.push('\n');
        }
    }

    /// Ends a table cell: a tab, unless the line is empty or already ends
    /// in a separator (a trailing space is replaced).
    pub fn cell(&mut self) {
        if self.text.ends_with(' ') && !self.truncated {
            self.text.pop();
        }
        if !self.text.is_empty() && !self.text.ends_with(['\t', '\n']) {
            self.push('\t');
        }
    }

    /// Appends text whose runs of whitespace mean one space (HTML, XML).
    pub fn push_collapsed(&mut self, s: &str) {
        for (i, word) in s.split(char::is_whitespace).enumerate() {
            if i > 0 {
                self.space();
            }
            if !word.is_empty() {
                self.push_str(word);
            }
            if self.truncated {
                return;
            }
        }
    }

    /// Records that the source had more text than was kept.
    pub fn mark_truncated(&mut self) {
        self.truncated = true;
    }

    /// Bytes left before the cap.
    pub fn room(&self) -> usize {
        if self.truncated {
            0
        } else {
            self.cap - self.text.len()
        }
    }

    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub fn finish(self, kind: Kind) -> Extracted {
        let mut text = self.text;
        text.truncate(text.trim_end().len());
        Extracted {
            text,
            truncated: self.truncated,
            kind,
            extractor: kind.extractor(),
            version: kind.version(),
            encoding: self.encoding.unwrap_or(kind.decoding()).to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_a_char_boundary() {
        let mut s = TextSink::new(5);
        s.push_str("ab");
        s.push_str("écu"); // é is 2 bytes: "abéc" is 5 bytes
        assert!(s.is_full());
        let e = s.finish(Kind::Text);
        assert_eq!(e.text, "abéc");
        assert!(e.truncated);
        let mut s = TextSink::new(3);
        s.push_str("aé€");
        assert_eq!(s.finish(Kind::Text).text, "aé");
    }

    #[test]
    fn collapses_whitespace() {
        let mut s = TextSink::new(100);
        s.push_collapsed("  one \n\t two ");
        s.newline();
        s.push_collapsed("three");
        assert_eq!(s.finish(Kind::Html).text, "one two\nthree");
    }
}
