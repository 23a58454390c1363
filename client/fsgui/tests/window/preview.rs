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

/// A one-page PDF whose page says `text` (Helvetica, one line), made by
/// hand: the oracle is the sentence written into it.
fn pdf(text: &str) -> Vec<u8> {
    let content = format!("BT /F1 24 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
         /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_owned(),
        format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{o}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    let mut tail = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for off in offsets {
        tail.push_str(&format!("{off:010} 00000 n \n"));
    }
    tail.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    out.extend_from_slice(tail.as_bytes());
    out
}

/// A document's passage comes from the daemon's ReadText: the PDF's
/// sentence, as the test wrote it, with the matching line found.
#[test]
fn a_documents_passage_comes_from_the_daemon() {
    let sentence = "the quarterly heron report is due";
    let inst = Instance::start(|root| {
        write(root, "docs/heron-report.pdf", &pdf(sentence));
    });
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("heron-report");
    settle(&mut h, "the row", |a| {
        a.search.results.total == 1 && a.settled()
    });
    h.get_by_label("heron-report.pdf").click();
    settle(&mut h, "the passage", |a| a.preview.is_some());
    let Some((_, Preview::Text { lines, .. })) = h.state().preview.clone() else {
        panic!("no text preview: {:?}", h.state().preview)
    };
    let said: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(said, [sentence], "{lines:?}");
}
