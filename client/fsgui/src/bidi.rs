//! Right-to-left text (Arabic, Hebrew, …) in display order.
//!
//! egui 0.37 shapes each run of one font with harfrust, which lays out a
//! run of Hebrew or Arabic letters right to left (joined, in Arabic), but
//! egui places its runs left to right in the order they are stored and
//! knows no paragraph direction: `שלום.txt` came out as the word then
//! `.txt`, where a reader of Hebrew expects `.txt` on its left. Here a name
//! (or the query) is put in display order with the Unicode Bidirectional
//! Algorithm (`unicode-bidi`, UAX #9: levels from the text's own first
//! strong character, runs in visual order) for egui to draw: inside a
//! right-to-left run, the pieces are put in reverse order, the letters of
//! a right-to-left script kept as stored (harfrust turns them round, and
//! joins them) and the rest (spaces, punctuation, brackets mirrored)
//! reversed character by character. A highlighted part of a word is a
//! piece of its own (egui shapes each differently formatted section
//! apart). The highlighted byte ranges follow their characters. The stored
//! text is untouched: only what is drawn changes.

use std::ops::Range;

use unicode_bidi::ParagraphBidiInfo;

/// Whether `c` belongs to a right-to-left script (the letters harfrust
/// lays out right to left).
fn is_rtl_char(c: char) -> bool {
    matches!(c as u32,
        0x0590..=0x08FF // Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic
        | 0xFB1D..=0xFDFF // Hebrew and Arabic presentation forms
        | 0xFE70..=0xFEFF
        | 0x10800..=0x10FFF // historic right-to-left scripts
        | 0x1E800..=0x1EFFF)
}

/// True when `text` holds a character of a right-to-left script (the cheap
/// test before the algorithm runs: most names have none).
pub fn has_rtl(text: &str) -> bool {
    text.chars().any(is_rtl_char)
}

/// `text` in the order egui is to be given it (see the module's doc), and
/// `marks` (ascending byte ranges of `text` on character boundaries) as
/// the ranges of the same characters there, ascending and merged; `None`
/// when the text holds nothing right-to-left (draw it as it is).
pub fn visual(text: &str, marks: &[Range<usize>]) -> Option<(String, Vec<Range<usize>>)> {
    if !has_rtl(text) {
        return None;
    }
    let info = ParagraphBidiInfo::new(text, None);
    if info.is_pure_ltr {
        return None;
    }
    let (levels, runs) = info.visual_runs(0..text.len());
    let mut out = String::with_capacity(text.len());
    let mut moved: Vec<Range<usize>> = Vec::new();
    // Where each piece of `text` went: (from, to start, reversed).
    let mut put = |out: &mut String, piece: Range<usize>, reversed: bool| {
        let start = out.len();
        if reversed {
            out.extend(text[piece.clone()].chars().rev().map(mirrored));
        } else {
            out.push_str(&text[piece.clone()]);
        }
        for m in marks {
            let (a, b) = (m.start.max(piece.start), m.end.min(piece.end));
            if a >= b {
                continue;
            }
            // A reversed piece puts the character at `p` (of `len` bytes)
            // at `piece.end - p - len` from its start: the range flips.
            moved.push(if reversed {
                start + (piece.end - b)..start + (piece.end - a)
            } else {
                start + (a - piece.start)..start + (b - piece.start)
            });
        }
    };
    for run in runs {
        if !levels[run.start].is_rtl() {
            put(&mut out, run, false);
            continue;
        }
        for piece in pieces(text, run, marks).into_iter().rev() {
            let letters = text[piece.clone()].chars().next().is_some_and(is_rtl_char);
            put(&mut out, piece, !letters);
        }
    }
    moved.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(moved.len());
    for r in moved {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    Some((out, merged))
}

/// A right-to-left run cut where right-to-left letters start or stop and
/// where a mark starts or ends, in stored order.
fn pieces(text: &str, run: Range<usize>, marks: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = run.start;
    let mut prev: Option<bool> = None;
    for (i, c) in text[run.clone()].char_indices() {
        let at = run.start + i;
        let letter = is_rtl_char(c);
        let mark_edge = marks.iter().any(|m| m.start == at || m.end == at);
        if at > start && (prev != Some(letter) || mark_edge) {
            out.push(start..at);
            start = at;
        }
        prev = Some(letter);
    }
    if start < run.end {
        out.push(start..run.end);
    }
    out
}

/// UAX #9's rule L4 for the brackets a name may hold: in a right-to-left
/// run they face the other way.
fn mirrored(c: char) -> char {
    match c {
        '(' => ')',
        ')' => '(',
        '[' => ']',
        ']' => '[',
        '{' => '}',
        '}' => '{',
        '<' => '>',
        '>' => '<',
        '«' => '»',
        '»' => '«',
        c => c,
    }
}

#[cfg(test)]
// One mark is a list of one range here, not a range meant as its items.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    #[test]
    fn left_to_right_text_is_left_alone() {
        assert_eq!(visual("report 2025.pdf", &[0..6]), None);
        assert_eq!(visual("Café 京都", &[]), None);
        // A Hebrew word in a left-to-right name: egui's shaping turns the
        // word round by itself; a marked part of it is a piece of its own,
        // on the right.
        assert_eq!(
            visual("notes שלום.txt", &[]),
            Some(("notes שלום.txt".to_owned(), vec![]))
        );
        let (drawn, marks) = visual("notes שלום.txt", &[6..10]).unwrap();
        assert_eq!(drawn, "notes וםשל.txt");
        assert_eq!(&drawn[marks[0].clone()], "של");
    }

    #[test]
    fn a_right_to_left_name_has_its_pieces_in_display_order_and_its_marks_follow() {
        // Logical: shin lamed vav final-mem, then ".txt". The paragraph is
        // right-to-left (its first strong letter is Hebrew): ".txt" goes to
        // the left of the word, whose letters stay as stored (harfrust
        // lays them out right to left).
        let name = "שלום.txt";
        let (drawn, marks) = visual(name, &[]).unwrap();
        assert_eq!(drawn, "txt.שלום");
        assert!(marks.is_empty());
        // The first letter marked: a piece of its own, on the right.
        let (drawn, marks) = visual(name, &[0..2]).unwrap();
        assert_eq!(drawn, "txt.לוםש");
        assert_eq!(&drawn[marks[0].clone()], "ש");
        // Two words: the second on the left; brackets mirrored.
        let (drawn, _) = visual("שלום עולם (2)", &[]).unwrap();
        assert_eq!(drawn, "(2) עולם שלום");
    }

    #[test]
    fn arabic_digits_keep_their_order_inside_right_to_left_text() {
        let (drawn, _) = visual("تقرير 2025", &[]).unwrap();
        assert_eq!(drawn, "2025 تقرير");
    }
}
