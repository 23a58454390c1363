//! The window against a real daemon: what it shows equals what `fsctl
//! --json` prints for the same question. Driven through the AccessKit tree
//! (labels, key presses, clicks), without a display or a GPU.

mod accents;
mod actions;
mod costs;
mod daemon;
mod media;
mod preview;
mod rtl;
mod saved;
mod scripts;
mod table;
mod util;
mod xvfb;

use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use fsgui::{Action, View};
use util::{Instance, sample_tree, settle, shown_paths, write};

fn json_paths(inst: &Instance, args: &[&str]) -> Vec<String> {
    inst.json_lines(args)
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .collect()
}

/// The frame that reads a typed key waits for the first page (up to
/// `same_frame`) and draws it: one frame after the key, the rows and the
/// count are those fsctl prints, with no second frame. Given a window long
/// enough for any machine here; the default is 25 ms.
#[test]
fn a_typed_key_and_its_rows_are_drawn_in_one_frame() {
    let inst = Instance::start(sample_tree);
    let mut h = inst.window(View::Search);
    settle(&mut h, "connected", |a| a.status.is_some());
    h.state_mut().same_frame = std::time::Duration::from_secs(20);
    let query = h.get_by_label("Search");
    query.focus();
    query.type_text("report");
    h.step();
    let want = json_paths(&inst, &["search", "report"]);
    assert!(want.len() >= 5, "{want:?}");
    assert_eq!(h.state().search.results.params.query, "report");
    assert_eq!(shown_paths(h.state()), want, "rows after one frame");
    assert_drawn(&h, &want, "in the key's frame");
}

/// Every row of `want` is in the table, by name, and the count line says
/// how many.
fn assert_drawn(h: &egui_kittest::Harness<'static, fsgui::App>, want: &[String], when: &str) {
    for path in want {
        let name = path.rsplit('/').next().unwrap();
        assert!(
            h.query_all_by_label(name).next().is_some(),
            "no row labelled {name:?} {when}"
        );
    }
    let count = format!("{} matches", want.len());
    assert!(
        h.query_by_label(&count).is_some(),
        "no {count:?} line {when}"
    );
}

#[test]
fn typed_query_shows_the_rows_fsctl_finds_in_each_order() {
    let inst = Instance::start(sample_tree);
    let mut h = inst.window(View::Search);
    h.step();
    let query = h.get_by_label("Search");
    query.focus();
    query.type_text("report");
    settle(&mut h, "rows for `report`", |a| {
        a.search.results.params.query == "report" && a.settled()
    });
    let want = json_paths(&inst, &["search", "report"]);
    assert!(want.len() >= 5, "{want:?}");
    assert_eq!(shown_paths(h.state()), want, "relevance order");
    assert_drawn(&h, &want, "once settled");

    // Column headers sort through the daemon; a second click reverses.
    for (header, sort) in [("Name", "name"), ("Folder", "path"), ("Size", "size")] {
        h.get_by_role_and_label(Role::Button, header).click();
        settle(&mut h, "sorted rows", |a| {
            a.settled() && a.search.results.params.sort == a.search.sort
        });
        assert_eq!(
            shown_paths(h.state()),
            json_paths(&inst, &["search", "report", "--sort", sort]),
            "sorted by {sort}"
        );
    }
    h.get_by_label_contains("Size ").click();
    settle(&mut h, "reversed rows", |a| {
        a.settled() && a.search.results.params.reverse
    });
    assert_eq!(
        shown_paths(h.state()),
        json_paths(&inst, &["search", "report", "--sort", "size", "--reverse"])
    );
}

#[test]
fn a_malformed_query_is_shown_inline_and_the_last_rows_stay() {
    let inst = Instance::start(sample_tree);
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("w2");
    settle(&mut h, "rows for w2", |a| {
        a.search.results.total == 2 && a.settled()
    });
    h.get_by_label("Search").type_text(" foo:bar");
    settle(&mut h, "the error", |a| a.search.error.is_some());
    let e = h.state().search.error.clone().unwrap();
    assert_eq!(&e.query[e.bad.clone().unwrap()], "foo:bar");
    assert!(h.query_by_label_contains("unknown filter").is_some());
    // The last good rows are still there.
    assert_eq!(h.state().search.results.total, 2);
    assert_eq!(h.query_all_by_label("w2.pdf").count(), 2);
    // Fixing the query clears the error.
    for _ in 0..8 {
        h.key_press(Key::Backspace);
    }
    settle(&mut h, "the error gone", |a| {
        a.search.error.is_none() && a.settled()
    });
    assert_eq!(h.state().search.query, "w2");
}

#[test]
fn a_file_created_in_the_tree_appears_in_the_list() {
    let inst = Instance::start(sample_tree);
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("fresh");
    settle(&mut h, "no rows", |a| {
        a.search.results.params.query == "fresh" && a.settled()
    });
    assert_eq!(h.state().search.results.total, 0);
    write(&inst.tree, "new/fresh/notes.txt", b"hello");
    // The folder and the file in it (the file matches through its folder).
    settle(&mut h, "the new entries listed", |a| {
        a.search.results.total == 2
    });
    let want = json_paths(&inst, &["search", "fresh"]);
    assert_eq!(shown_paths(h.state()), want);
    assert!(h.query_by_label("notes.txt").is_some());
    // Removed: gone from the list too.
    std::fs::remove_dir_all(inst.tree.join("new")).unwrap();
    settle(&mut h, "the file gone", |a| a.search.results.total == 0);
}

#[test]
fn pages_through_many_matches_equal_fsctl_and_only_those_in_view_are_held() {
    let inst = Instance::start(|root| {
        for i in 0..900 {
            write(root, &format!("bulk/d{}/item-{i:04}.dat", i % 7), b"x");
        }
    });
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("item");
    settle(&mut h, "first page", |a| {
        a.search.results.total == 900 && a.settled()
    });
    let want = json_paths(&inst, &["search", "item", "--sort", "relevance"]);
    assert_eq!(want.len(), 900);
    // Scroll to the middle, then the end: the rows drawn there are fsctl's.
    for y in [9_000.0, 17_900.0] {
        h.state_mut().search.scroll_offset = Some(y);
        h.step();
        settle(&mut h, "pages in view", |a| a.settled());
        let (first, last) = h.state().search.visible().unwrap();
        assert!(first > 0, "scrolled");
        for i in first..=last {
            let row = h
                .state()
                .search
                .results
                .row(i)
                .expect("a visible row is loaded");
            assert_eq!(
                String::from_utf8_lossy(&row.path),
                want[i as usize],
                "row {i}"
            );
        }
        let held = h.state().search.results.rows_held() as u64;
        assert!(held <= 4 * fsgui::search::PAGE, "held {held} rows");
    }
}

#[test]
fn the_keyboard_moves_the_selection_and_acts_on_it() {
    let inst = Instance::start(sample_tree);
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("file-0");
    settle(&mut h, "rows", |a| {
        a.search.results.total == 40 && a.settled()
    });
    let rows = json_paths(&inst, &["search", "file-0"]);
    // Ctrl+Home with no row selected goes to the first row (it went to the
    // last, and a held Page Down then had nowhere to go), Ctrl+End to the
    // last; a new query starts with none selected again.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Home);
    h.step();
    assert_eq!(h.state().search.cursor, Some(0));
    h.key_press(Key::PageDown);
    h.step();
    assert!(h.state().search.cursor > Some(5), "Page Down moved a page");
    h.key_press_modifiers(Modifiers::COMMAND, Key::End);
    h.step();
    assert_eq!(h.state().search.cursor, Some(39));
    h.get_by_label("Search").type_text("1");
    h.key_press(Key::Backspace);
    settle(&mut h, "rows", |a| {
        a.search.results.total == 40 && a.settled()
    });
    assert_eq!(h.state().search.cursor, None);
    h.key_press(Key::ArrowDown);
    h.key_press(Key::ArrowDown);
    h.step();
    assert_eq!(h.state().search.cursor, Some(1));
    assert_eq!(
        h.state().search.selected_paths(),
        [rows[1].as_bytes().to_vec()]
    );
    h.key_press(Key::PageDown);
    h.step();
    let after_page = h.state().search.cursor.unwrap();
    assert!(after_page > 5, "Page Down moved a page: {after_page}");
    h.key_press(Key::ArrowUp);
    h.step();
    assert_eq!(h.state().search.cursor, Some(after_page - 1));
    // The query box kept the focus all along.
    assert!(h.get_by_label("Search").is_focused());
    // Enter opens the selection (recorded: the test runs dry).
    h.key_press(Key::Enter);
    h.step();
    let (action, paths) = h.state().actions.last().cloned().unwrap();
    assert_eq!(action, Action::Open);
    assert_eq!(paths, [rows[after_page as usize - 1].as_bytes().to_vec()]);
    // Acting on a result put the query in the daemon's history, with its
    // count: `fsctl history` shows it.
    util::eventually(
        std::time::Duration::from_secs(10),
        "file-0 in fsctl history",
        || {
            inst.json_lines(&["history"]).first().is_some_and(|v| {
                v["query"] == "file-0" && v["client"] == "fsgui" && v["results"] == 40
            })
        },
    );
    // Esc clears the query; Ctrl+L comes back to the box.
    h.key_press(Key::Escape);
    h.step();
    assert_eq!(h.state().search.query, "");
    assert_eq!(h.state().search.results.total, 0);
    h.get_by_label("🖴 Disk usage").click();
    h.step();
    h.key_press_modifiers(Modifiers::COMMAND, Key::L);
    h.step();
    h.step();
    assert_eq!(h.state().view, View::Search);
    assert!(h.get_by_label("Search").is_focused());
}

#[test]
fn the_disk_usage_view_equals_fsctl_du_and_drills_down() {
    let inst = Instance::start(sample_tree);
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("🖴 Disk usage").click();
    settle(&mut h, "du of the root", |a| {
        a.settled() && a.view == View::DiskUsage
    });
    let tree = inst.tree.to_string_lossy().into_owned();
    let check = |h: &egui_kittest::Harness<'static, fsgui::App>, path: &str| {
        let want = &inst.json_lines(&["du", path, "--top", "0"])[0];
        let got = h.state().du.answer.clone().unwrap();
        assert_eq!(
            want["path"],
            String::from_utf8_lossy(&got.total.path).as_ref()
        );
        assert_eq!(want["bytes"], got.total.bytes);
        assert_eq!(want["apparent_bytes"], got.total.apparent_bytes);
        assert_eq!(want["files"], got.total.files);
        assert_eq!(want["dirs"], got.total.dirs);
        let kids = want["children"].as_array().unwrap();
        assert_eq!(kids.len(), got.children.len());
        for (w, g) in kids.iter().zip(&got.children) {
            assert_eq!(w["path"], String::from_utf8_lossy(&g.path).as_ref());
            assert_eq!(
                (&w["bytes"], &w["apparent_bytes"], &w["files"], &w["dirs"]),
                (
                    &g.bytes.into(),
                    &g.apparent_bytes.into(),
                    &g.files.into(),
                    &g.dirs.into()
                )
            );
            assert!(h.query_by_label(&g.name).is_some(), "no bar for {}", g.name);
        }
    };
    check(&h, &tree);
    // Click a folder's bar: its children; the breadcrumb leads back.
    h.get_by_label("Reports").click();
    settle(&mut h, "du of Reports", |a| {
        a.settled() && a.du.path.as_deref() == Some(format!("{tree}/Reports").as_bytes())
    });
    check(&h, &format!("{tree}/Reports"));
    h.get_by_label("2025").click();
    settle(&mut h, "du of Reports/2025", |a| {
        a.settled()
            && a.du
                .path
                .as_deref()
                .is_some_and(|p| p.ends_with(b"Reports/2025"))
    });
    check(&h, &format!("{tree}/Reports/2025"));
    h.get_by_role_and_label(Role::Link, &tree).click();
    settle(&mut h, "back at the root", |a| {
        a.settled() && a.du.path.as_deref() == Some(tree.as_bytes())
    });
    check(&h, &tree);
}

#[test]
fn the_duplicates_view_equals_fsctl_dupes() {
    let inst = Instance::start(sample_tree);
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("🗐 Duplicates").click();
    settle(&mut h, "duplicate groups", |a| {
        a.settled() && a.view == View::Duplicates
    });
    let want = inst.json_lines(&["dupes"]);
    let got = &h.state().dupes.groups;
    assert_eq!(want.len(), 2, "{want:?}");
    assert_eq!(got.len(), want.len());
    for (w, g) in want.iter().zip(got) {
        assert_eq!(w["size"], g.size);
        assert_eq!(w["hash"], g.hash.as_str());
        assert_eq!(w["reclaimable_bytes"], g.reclaimable_bytes);
        let paths: Vec<String> = g
            .copies
            .iter()
            .flatten()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        assert_eq!(w["paths"], serde_json::json!(paths));
    }
    // Largest reclaimable first: the three songs.
    let header = h.get_by_label_contains("× 3 copies");
    header.click();
    h.step();
    h.step();
    let first_copy = String::from_utf8_lossy(&got_first_path(&h)).into_owned();
    assert!(
        h.query_by_label(&first_copy).is_some(),
        "expanded copies listed"
    );
    h.get_all_by_label("Reveal").next().unwrap().click();
    h.step();
    let (action, paths) = h.state().actions.last().cloned().unwrap();
    assert_eq!(
        (action, paths),
        (Action::Reveal, vec![first_copy.into_bytes()])
    );
    assert!(h.query_by_label_contains("2 groups").is_some());
}

fn got_first_path(h: &egui_kittest::Harness<'static, fsgui::App>) -> Vec<u8> {
    h.state().dupes.groups[0].copies[0][0].clone()
}
