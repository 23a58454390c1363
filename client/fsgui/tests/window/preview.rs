//! The preview pane: the selected text file's passage around the query's
//! first match equals what the test wrote, and an image's thumbnail has
//! its pixels.

use egui_kittest::kittest::Queryable;
use fsgui::View;
use fsgui::preview::{LINES_BEFORE, LINES_SHOWN, Preview};

use super::util::{Instance, settle, write};

#[test]
fn the_selected_rows_passage_and_thumbnail_are_shown() {
    let lines: Vec<String> = (1..=100)
        .map(|i| {
            if i == 41 {
                "the needle is on this line".to_owned()
            } else {
                format!("line {i} of the haystack")
            }
        })
        .collect();
    let text = lines.join("\n");
    let inst = Instance::start(|root| {
        write(root, "docs/needle-notes.txt", text.as_bytes());
        let img = image::RgbaImage::from_pixel(640, 480, image::Rgba([200, 30, 40, 255]));
        let p = root.join("pics/dot.png");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        img.save(&p).unwrap();
    });
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("needle");
    settle(&mut h, "the row", |a| {
        a.search.results.total == 1 && a.settled()
    });
    h.get_by_label("needle-notes.txt").click();
    settle(&mut h, "the passage", |a| a.preview.is_some());
    let Some((
        _,
        Preview::Text {
            first,
            lines: shown,
            hit,
            more,
        },
    )) = h.state().preview.clone()
    else {
        panic!("no text preview: {:?}", h.state().preview)
    };
    assert_eq!(hit, Some(40));
    assert_eq!(first, 40 - LINES_BEFORE);
    assert_eq!(shown, lines[first..first + LINES_SHOWN]);
    assert!(more);
    assert!(h.query_by_label("the needle is on this line").is_some());

    h.state_mut().type_query("dot.png");
    settle(&mut h, "the picture's row", |a| {
        a.search.results.total == 1 && a.settled()
    });
    h.get_by_label("dot.png").click();
    settle(&mut h, "the thumbnail", |a| {
        a.preview
            .as_ref()
            .is_some_and(|(p, _)| p.ends_with(b"dot.png"))
    });
    let Some((
        _,
        Preview::Image {
            width,
            height,
            rgba,
            original,
        },
    )) = h.state().preview.clone()
    else {
        panic!("no thumbnail: {:?}", h.state().preview)
    };
    assert_eq!((width, height, original), (320, 240, (640, 480)));
    assert!(rgba.chunks(4).all(|p| p == [200, 30, 40, 255]));
    assert!(h.query_by_label("640 × 480 pixels").is_some());
}
