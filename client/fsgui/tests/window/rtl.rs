//! Right-to-left names (Hebrew, Arabic) are laid out in display order in
//! the rows and the query box: egui places glyphs left to right in the
//! order it is given them, so the layout egui makes of what fsgui hands it
//! is checked against the order the Unicode Bidirectional Algorithm gives
//! (written out by hand here: the first letter of a Hebrew word is its
//! rightmost). Against a real daemon, the rows are still found by their
//! names as stored.

use std::cell::RefCell;

use egui::Galley;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsgui::View;

use super::util::{Instance, settle, write};

const HEBREW: &str = "שלום.txt";
const ARABIC: &str = "تقرير 2025.txt";

/// Each glyph's character and left edge, as egui laid it out.
fn glyphs(galley: &Galley) -> Vec<(char, f32)> {
    galley.rows[0]
        .glyphs
        .iter()
        .map(|g| (g.chr, g.pos.x))
        .collect()
}

/// The left edge of the `nth` glyph of `c`.
fn x_of(glyphs: &[(char, f32)], c: char, nth: usize) -> f32 {
    glyphs
        .iter()
        .filter(|g| g.0 == c)
        .nth(nth)
        .unwrap_or_else(|| panic!("no glyph {c:?} in {glyphs:?}"))
        .1
}

/// How fsgui lays out `name` in a row (no marks, then `marks`) and as the
/// query, in a real egui frame.
fn layouts(name: &str, marks: &[std::ops::Range<usize>]) -> [Vec<(char, f32)>; 2] {
    let out = RefCell::new([Vec::new(), Vec::new()]);
    // Laid out once the system's fonts are there (egui's own have no
    // Hebrew or Arabic), as in the window.
    let fonts = std::cell::Cell::new(false);
    let mut h = Harness::new_ui(|ui| {
        if !fonts.get() {
            return;
        }
        let row = ui.fonts_mut(|f| f.layout_job(fsgui::ui::marked(ui, name, marks)));
        let query = fsgui::ui::query_layouter(ui, &name.to_owned(), f32::INFINITY);
        *out.borrow_mut() = [glyphs(&row), glyphs(&query)];
    });
    fsgui::fonts::install(&h.ctx)
        .expect("start the font thread")
        .join()
        .expect("the system's fonts");
    fonts.set(true);
    h.run();
    drop(h);
    out.into_inner()
}

#[test]
// One mark: a list of one range, not a range meant as its items.
#[allow(clippy::single_range_in_vec_init)]
fn a_hebrew_name_is_laid_out_right_to_left_in_rows_and_the_query_box() {
    // שלום.txt: the paragraph is right-to-left (its first strong letter is
    // Hebrew), so from left to right: "txt", ".", then ם ו ל ש.
    for (what, g) in ["row", "query"].iter().zip(layouts(HEBREW, &[0..2])) {
        let (shin, lamed, vav, mem) = (
            x_of(&g, 'ש', 0),
            x_of(&g, 'ל', 0),
            x_of(&g, 'ו', 0),
            x_of(&g, 'ם', 0),
        );
        assert!(
            mem < vav && vav < lamed && lamed < shin,
            "{what}: the Hebrew letters are not right to left: {g:?}"
        );
        assert!(
            x_of(&g, 'x', 0) < mem && x_of(&g, '.', 0) < mem,
            "{what}: .txt is not left of the word: {g:?}"
        );
    }
}

#[test]
fn an_arabic_name_is_laid_out_right_to_left_with_its_digits_left_to_right() {
    // تقرير 2025.txt: right-to-left; the number reads left to right.
    for (what, g) in ["row", "query"].iter().zip(layouts(ARABIC, &[])) {
        let (teh, qaf) = (x_of(&g, 'ت', 0), x_of(&g, 'ق', 0));
        assert!(
            qaf < teh,
            "{what}: the Arabic word is not right to left: {g:?}"
        );
        let two = x_of(&g, '2', 0);
        let five = x_of(&g, '5', 0);
        assert!(two < five, "{what}: 2025 is not left to right: {g:?}");
        assert!(
            two < qaf,
            "{what}: the number is not left of the word: {g:?}"
        );
    }
}

#[test]
fn right_to_left_rows_are_found_by_their_stored_names() {
    let inst = Instance::start(|root| {
        write(root, &format!("rtl/{HEBREW}"), b"x");
        write(root, &format!("rtl/{ARABIC}"), b"x");
        write(root, "rtl/plain.txt", b"x");
    });
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("txt");
    settle(&mut h, "three rows", |a| {
        a.search.results.total == 3 && a.settled()
    });
    for name in [HEBREW, ARABIC, "plain.txt"] {
        assert!(h.query_by_label(name).is_some(), "no row labelled {name}");
    }
}
