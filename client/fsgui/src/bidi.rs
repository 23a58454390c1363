//! Right-to-left text (Arabic, Hebrew, …) in display order.
//!
//! egui lays out a string's characters left to right in the order they are
//! stored, so a Hebrew name such as `שלום.txt` came out with its letters
//! backwards. Here a name (or the query) is reordered for display with the
//! Unicode Bidirectional Algorithm (`unicode-bidi`, UAX #9: levels from the
//! text's own first strong character, runs in visual order, the characters
//! of a right-to-left run reversed, brackets there mirrored), and the
//! highlighted byte ranges follow their characters. The stored text is
//! untouched: only what is drawn changes. Arabic letters take the forms egui
//! has for them (egui does not join letters); their order is right.

use std::ops::Range;

use unicode_bidi::ParagraphBidiInfo;

/// True when `text` holds a character of a right-to-left script (the cheap
/// test before the algorithm runs: most names have none).
pub fn has_rtl(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(c as u32,
            0x0590..=0x08FF // Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic
            | 0xFB1D..=0xFDFF // Hebrew and Arabic presentation forms
            | 0xFE70..=0xFEFF
            | 0x10800..=0x10FFF // historic right-to-left scripts
            | 0x1E800..=0x1EFFF)
    })
}

/// `text` in display order, and `marks` (ascending byte ranges of `text` on
/// character boundaries) as the ranges of the same characters there,
/// ascending and merged; `None` when the text holds nothing right-to-left
/// (draw it as it is).
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
    for run in runs {
        let start = out.len();
        let rtl = levels[run.start].is_rtl();
        if rtl {
            out.extend(text[run.clone()].chars().rev().map(mirrored));
        } else {
            out.push_str(&text[run.clone()]);
        }
        for m in marks {
            let (a, b) = (m.start.max(run.start), m.end.min(run.end));
            if a >= b {
                continue;
            }
            // A reversed run puts the character at `p` (of `len` bytes) at
            // `run.end - p - len` from its start: the range flips.
            moved.push(if rtl {
                start + (run.end - b)..start + (run.end - a)
            } else {
                start + (a - run.start)..start + (b - run.start)
            });
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
mod tests {
    use super::*;

    #[test]
    fn left_to_right_text_is_left_alone() {
        assert_eq!(visual("report 2025.pdf", &[0..6]), None);
        assert_eq!(visual("Café 京都", &[]), None);
    }

    #[test]
    fn a_hebrew_name_is_drawn_right_to_left_and_its_marks_follow() {
        // Logical: shin lamed vav final-mem, then ".txt". The paragraph is
        // right-to-left (its first strong letter is Hebrew): ".txt" is drawn
        // to the left of the word, the word's letters reversed.
        let name = "שלום.txt";
        let shin = 0..2; // the first letter, marked
        let (drawn, marks) = visual(name, &[shin]).unwrap();
        assert_eq!(drawn, "txt.םולש");
        assert_eq!(&drawn[marks[0].clone()], "ש");
        // In a left-to-right name the Hebrew word alone turns round.
        let (drawn, marks) = visual("notes שלום.txt", &[6..10]).unwrap();
        assert_eq!(drawn, "notes םולש.txt");
        assert_eq!(&drawn[marks[0].clone()], "לש");
    }

    #[test]
    fn arabic_digits_keep_their_order_inside_right_to_left_text() {
        let (drawn, _) = visual("تقرير 2025", &[]).unwrap();
        assert_eq!(drawn, "2025 ريرقت");
    }
}
