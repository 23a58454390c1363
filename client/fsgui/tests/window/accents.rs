//! The accents toggle (issue 35): on by default as in Everything, `cafe`
//! lists every spelling of `café` that `fsctl search --ignore-accents`
//! finds; off, exactly what plain `fsctl search` finds; the choice is kept
//! in fsgui.toml and the next window starts with it.

use egui_kittest::kittest::Queryable;
use fsgui::View;

use super::util::{Instance, settle, shown_paths, write};

fn tree(root: &std::path::Path) {
    for rel in [
        "Café/menu.txt",
        "cafe\u{301} noir.txt",
        "CAFE.md",
        "cafeteria/tray.txt",
        "Crème brûlée.jpg",
        "creme.txt",
    ] {
        write(root, rel, b"x");
    }
}

fn fsctl_paths(inst: &Instance, args: &[&str]) -> Vec<String> {
    inst.json_lines(args)
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_accents_toggle_widens_the_rows_as_fsctl_does_and_is_kept() {
    let inst = Instance::start(tree);
    let mut h = inst.window(View::Search);
    h.step();
    assert!(h.state().search.ignore_accents, "Everything's default");
    h.get_by_label("Search").type_text("cafe");
    settle(&mut h, "rows for cafe", |a| {
        a.search.results.params.query == "cafe" && a.settled()
    });
    let wide = fsctl_paths(&inst, &["search", "--ignore-accents", "cafe"]);
    assert_eq!(wide.len(), 6, "{wide:?}");
    assert_eq!(shown_paths(h.state()), wide);
    // The accented name is highlighted where it matched: `Café` whole.
    let r = &h.state().search.results;
    let cafe = (0..r.total)
        .filter_map(|i| r.row(i))
        .find(|row| row.name == "Café")
        .expect("Café listed");
    assert_eq!(cafe.marks, vec![(0..5)]);

    // Off: accents count, as plain fsctl search.
    h.get_by_label("ä=a").click();
    settle(&mut h, "rows with accents matched", |a| {
        !a.search.results.params.ignore_accents && a.settled()
    });
    let exact = fsctl_paths(&inst, &["search", "cafe"]);
    assert!(exact.len() < wide.len(), "{exact:?}");
    assert_eq!(shown_paths(h.state()), exact);
    assert!(
        h.get_by_label("Search").is_focused(),
        "focus stays in the box"
    );
    let saved = std::fs::read_to_string(inst.home.join("fsgui.toml")).unwrap();
    assert!(saved.contains("match_accents = true"), "{saved}");

    // The next window starts with accents matched, and the toggle turns
    // them off again.
    drop(h);
    let mut h = inst.window(View::Search);
    h.step();
    assert!(!h.state().search.ignore_accents);
    h.get_by_label("Search").type_text("creme");
    settle(&mut h, "rows for creme", |a| {
        a.search.results.params.query == "creme" && a.settled()
    });
    assert_eq!(
        shown_paths(h.state()),
        fsctl_paths(&inst, &["search", "creme"])
    );
    h.get_by_label("ä=a").click();
    settle(&mut h, "rows with accents ignored", |a| {
        a.search.results.params.ignore_accents && a.settled()
    });
    let wide = fsctl_paths(&inst, &["search", "--ignore-accents", "creme"]);
    assert_eq!(wide.len(), 2, "{wide:?}");
    assert_eq!(shown_paths(h.state()), wide);
}
