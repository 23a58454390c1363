//! A table that follows the user: the keyboard stays in the query box,
//! Ctrl+L and Esc lose no keys, an order lasts for its query and goes back
//! to relevance, column widths stay, Shift+click, Home/End, right-click.

use egui::accesskit::Role;
use egui::{Event, Key, Modifiers, PointerButton, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsgui::{App, View};

use super::util::{Instance, sample_tree, settle, shown_paths, write};

fn json_paths(inst: &Instance, args: &[&str]) -> Vec<String> {
    inst.json_lines(args)
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .collect()
}

fn tree(root: &std::path::Path) {
    sample_tree(root);
    write(root, "notes/alpha.txt", b"a");
    write(root, "notes/alpha-big.bin", &[0u8; 20_000]);
    write(root, "alpha/readme", b"");
}

fn typed(h: &mut Harness<'static, App>, what: &str, query: &str) {
    settle(h, what, |a| a.search.query == query && a.settled());
}

/// A key and the text typed after it in one frame, as a fast typist's
/// arrive (kittest's own queue runs a frame per event).
fn in_one_frame(h: &mut Harness<'static, App>, modifiers: Modifiers, key: Key, text: &str) {
    let input = h.input_mut();
    input.events.push(Event::ModifiersChanged(modifiers));
    input.events.push(Event::Key {
        key,
        physical_key: None,
        pressed: true,
        repeat: false,
        modifiers,
    });
    input.events.push(Event::ModifiersChanged(Modifiers::NONE));
    input.events.push(Event::Text(text.to_owned()));
    h.step();
}

#[test]
fn ctrl_l_and_esc_lose_no_keys_and_a_new_query_is_in_relevance_order() {
    let inst = Instance::start(tree);
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("report");
    typed(&mut h, "report", "report");
    // The matched part of each name is marked (highlighted).
    let r = &h.state().search.results;
    for i in 0..r.total {
        let row = r.row(i).unwrap();
        let at = row.name.to_lowercase().find("report");
        match at {
            Some(at) => assert_eq!(row.marks, vec![(at..at + 6)], "{}", row.name),
            None => assert!(row.marks.is_empty(), "{}", row.name),
        }
    }
    // A header click sorts and leaves the keyboard in the box.
    h.get_by_role_and_label(Role::Button, "Size").click();
    settle(&mut h, "sorted by size", |a| {
        a.settled() && a.search.results.params.sort == fsgui::backend::SortKey::Size
    });
    assert!(h.get_by_label("Search").is_focused(), "focus left the box");
    assert!(h.query_by_label("Back to relevance").is_some());
    // A word added: the same query, the same order.
    h.event(Event::Text(" 2025".into()));
    typed(&mut h, "report 2025", "report 2025");
    assert_eq!(
        shown_paths(h.state()),
        json_paths(&inst, &["search", "report", "2025", "--sort", "size"])
    );

    // Ctrl+L, then typing at once: every letter lands, and the new query
    // is in relevance order.
    in_one_frame(&mut h, Modifiers::COMMAND, Key::L, "alpha");
    typed(&mut h, "alpha after Ctrl+L", "alpha");
    assert_eq!(
        shown_paths(h.state()),
        json_paths(&inst, &["search", "alpha"]),
        "relevance order"
    );
    // From another view too.
    h.get_by_label("🖴 Disk usage").click();
    h.step();
    in_one_frame(&mut h, Modifiers::COMMAND, Key::L, "wages");
    assert_eq!(h.state().view, View::Search);
    typed(&mut h, "wages after Ctrl+L from du", "wages");
    // Esc clears; what follows it in the same frame is the new query.
    in_one_frame(&mut h, Modifiers::NONE, Key::Escape, "notes");
    typed(&mut h, "notes after Esc", "notes");
    assert!(h.get_by_label("Search").is_focused());

    // The third click on a header, or the button, is relevance again.
    h.get_by_role_and_label(Role::Button, "Name").click();
    settle(&mut h, "by name", |a| a.settled());
    h.get_by_role_and_label(Role::Button, "Back to relevance")
        .click();
    settle(&mut h, "relevance", |a| {
        a.settled() && a.search.results.params.sort == fsgui::backend::SortKey::Relevance
    });
    assert_eq!(
        shown_paths(h.state()),
        json_paths(&inst, &["search", "notes"])
    );
}

#[test]
fn widths_stay_and_rows_select_by_shift_click_home_end_and_right_click() {
    let inst = Instance::start(tree);
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("file-0");
    settle(&mut h, "rows", |a| {
        a.search.results.total == 40 && a.settled()
    });
    let want = json_paths(&inst, &["search", "file-0"]);

    // Drag the Name column's edge 100 points to the right.
    let folder_x = h
        .get_by_role_and_label(Role::Button, "Folder")
        .rect()
        .left();
    let y = h
        .get_by_role_and_label(Role::Button, "Folder")
        .rect()
        .center()
        .y;
    let from = Pos2::new(folder_x - 4.0, y);
    h.event(Event::PointerMoved(from));
    h.step();
    for (pos, pressed) in [(from, Some(true)), (from + egui::vec2(50.0, 0.0), None)] {
        h.event(Event::PointerMoved(pos));
        if let Some(pressed) = pressed {
            h.event(Event::PointerButton {
                pos,
                button: PointerButton::Primary,
                pressed,
                modifiers: Modifiers::NONE,
            });
        }
        h.step();
    }
    let to = from + egui::vec2(100.0, 0.0);
    h.event(Event::PointerMoved(to));
    h.step();
    h.event(Event::PointerButton {
        pos: to,
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.step();
    let dragged = h
        .get_by_role_and_label(Role::Button, "Folder")
        .rect()
        .left();
    assert!(
        dragged > folder_x + 50.0,
        "the column did not widen: {folder_x} -> {dragged}"
    );
    // Another query: the width stays.
    h.state_mut().type_query("file-01");
    settle(&mut h, "rows", |a| a.settled());
    h.state_mut().type_query("file-0");
    settle(&mut h, "rows", |a| {
        a.search.results.total == 40 && a.settled()
    });
    let after = h
        .get_by_role_and_label(Role::Button, "Folder")
        .rect()
        .left();
    assert_eq!(after, dragged, "the width was reset");

    // Click row 2, Shift+click row 5: rows 2..=5 are selected.
    let name = |i: usize| want[i].rsplit('/').next().unwrap().to_owned();
    h.get_by_label(&name(2)).click();
    h.step();
    h.get_by_label(&name(5)).click_modifiers(Modifiers::SHIFT);
    h.step();
    let mut sel: Vec<String> = h
        .state()
        .search
        .selection
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    sel.sort();
    let mut range = want[2..=5].to_vec();
    range.sort();
    assert_eq!(sel, range);
    assert!(h.get_by_label("Search").is_focused(), "focus left the box");

    // End and Home, now that a row is selected.
    h.key_press(Key::End);
    h.step();
    assert_eq!(h.state().search.cursor, Some(39));
    h.key_press(Key::Home);
    h.step();
    assert_eq!(h.state().search.cursor, Some(0));
    // The table scrolls back to the top over a few frames.
    for _ in 0..10 {
        h.step();
    }

    // A right-clicked row is selected (highlighted) for its menu.
    h.get_by_label(&name(7)).click_secondary();
    h.step();
    h.step();
    assert_eq!(
        h.state().search.selected_paths(),
        [want[7].as_bytes().to_vec()]
    );
    assert!(h.query_by_label("Copy path").is_some(), "the menu is open");
}
