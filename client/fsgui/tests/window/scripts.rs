//! Names in any script: rows and the query box draw CJK, Arabic, Hebrew,
//! Devanagari, Thai and joined emoji with the system's fonts (the ones
//! tests/setup.sh installs), and a CJK name is really on screen in the
//! real window under Xvfb.

use std::process::Command;

use egui::{Color32, FontId, MissingGlyphPolicy};
use egui_kittest::kittest::Queryable;
use fsgui::View;

use super::util::{Instance, settle, write};
use super::xvfb::wanted;

/// One name per script the issue names, as the tree holds them.
const NAMES: &[&str] = &[
    "京都の写真.txt",
    "서울.txt",
    "القاهرة.txt",
    "ירושלים.txt",
    "दिल्ली.txt",
    "กรุงเทพ.txt",
    "family 👨‍👩‍👧.txt",
];

const NO_FONT: &str = "a glyph is missing: the system fonts tests/setup.sh installs (fonts-wqy-microhei, fonts-dejavu-core, fonts-lohit-deva, fonts-tlwg-loma-otf, fonts-noto-color-emoji) are needed";

#[test]
fn names_in_every_script_are_drawn_in_rows_and_the_query_box() {
    let inst = Instance::start(|root| {
        for n in NAMES {
            write(root, &format!("cities/{n}"), b"x");
        }
    });
    let mut h = inst.window(View::Search);
    // A glyph no font has would be drawn as a box; here it fails the test.
    h.ctx.set_missing_glyph_policy(MissingGlyphPolicy::Panic);
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        h.step();
        h.get_by_label("Search").type_text("cities");
        settle(&mut h, "every name listed", |a| {
            a.search.results.total == NAMES.len() as u64 + 1 && a.settled()
        });
        for n in NAMES {
            assert!(h.query_by_label(n).is_some(), "no row labelled {n}");
        }
        // Each name typed into the box finds its file.
        for n in NAMES {
            let stem = n.trim_end_matches(".txt");
            h.state_mut().type_query("");
            h.get_by_label("Search").type_text(stem);
            settle(&mut h, stem, |a| a.search.query == stem && a.settled());
            assert_eq!(h.state().search.results.total, 1, "{stem}");
            assert_eq!(h.get_by_label("Search").value().as_deref(), Some(stem));
        }
    }));
    if let Err(e) = ran {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        panic!("{msg}\n({NO_FONT})");
    }
    // A joined emoji is one picture, not a man, a woman and a girl.
    let galley = h.ctx.fonts_mut(|f| {
        f.layout_no_wrap("👨‍👩‍👧".to_owned(), FontId::proportional(14.0), Color32::WHITE)
    });
    let advancing = galley.rows[0]
        .glyphs
        .iter()
        .filter(|g| g.advance_width > 0.0)
        .count();
    // One glyph that advances (egui keeps the others, zero-wide, for the
    // text cursor).
    assert_eq!(advancing, 1, "the family emoji is one glyph");
}

/// The real window under Xvfb draws `京都` where egui lays it out: inside
/// each character's box (the label's rectangle, read from the same window
/// in the harness, one em per character) there are pixels of ink, where a
/// missing glyph's box would be hollow.
#[test]
fn a_cjk_name_is_on_screen_under_xvfb() {
    if !wanted(&["xvfb-run", "Xvfb", "xauth"]) {
        return;
    }
    let name = "京都.txt";
    let inst = Instance::start(|root| write(root, name, b"x"));
    let (w, hgt) = (1000.0, 650.0);
    let mut out = tempfile::tempdir().unwrap();
    // Kept when the test fails, for a look.
    out.disable_cleanup(true);
    let png = out.path().join("cjk.png");
    let run = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1280x800x24"])
        .arg(super::util::bin_dir().join("fsgui"))
        .args([
            "--size",
            &format!("{w}x{hgt}"),
            "--query",
            "京都",
            "--screenshot",
        ])
        .arg(&png)
        .env("FSINDEX_HOME", &inst.home)
        .env("FSINDEX_NO_SPAWN", "1")
        .env("LIBGL_ALWAYS_SOFTWARE", "1")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("FSINDEX_SOCKET")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "fsgui --screenshot under xvfb-run failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let img = image::open(&png).unwrap().to_rgba8();
    let scale = img.width() as f32 / w;

    // Where the label is: the same window, same size, same fonts (kittest
    // draws it inside an 8-point margin).
    let margin = 8.0;
    let mut h = inst.window_at(
        View::Search,
        Some("京都"),
        egui::vec2(w + 2.0 * margin, hgt + 2.0 * margin),
    );
    settle(&mut h, "the row", |a| {
        a.search.results.total == 1 && a.settled()
    });
    let rect = h
        .get_by_label(name)
        .rect()
        .translate(egui::vec2(-margin, -margin));
    let em = h.ctx.global_style().text_styles[&egui::TextStyle::Body].size;
    let lum = |x: u32, y: u32| {
        let p = img.get_pixel(x, y).0;
        (u32::from(p[0]) * 3 + u32::from(p[1]) * 6 + u32::from(p[2])) / 10
    };
    // The background: the commonest shade inside the label.
    let px = |v: f32| (v * scale).round() as u32;
    let mut shades = std::collections::HashMap::<u32, u32>::new();
    for y in px(rect.min.y)..px(rect.max.y) {
        for x in px(rect.min.x)..px(rect.max.x) {
            *shades.entry(lum(x, y)).or_default() += 1;
        }
    }
    let background = shades.into_iter().max_by_key(|(_, n)| *n).unwrap().0;
    for (i, ch) in ["京", "都"].iter().enumerate() {
        // The middle 60% of the character's em box.
        let x0 = rect.min.x + em * (i as f32 + 0.2);
        let cy = rect.center().y;
        let (y0, y1) = (cy - em * 0.3, cy + em * 0.3);
        let ink = (px(y0)..px(y1))
            .flat_map(|y| (px(x0)..px(x0 + em * 0.6)).map(move |x| (x, y)))
            .filter(|&(x, y)| lum(x, y).abs_diff(background) > 60)
            .count();
        assert!(
            ink >= 6,
            "{ch} at {rect:?} (em {em}) has {ink} pixels of ink in {}: drawn as an empty box? ({NO_FONT})",
            png.display()
        );
    }
    out.disable_cleanup(false);
}
