//! Acting on files from every view, against a real daemon and the real
//! trash: each destructive action asks first; what goes to the trash is
//! checked in the test's own freedesktop trash (`$XDG_DATA_HOME/Trash`:
//! gone from the tree, in `files/` with its `.trashinfo`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use egui::accesskit::Role;
use egui::{Event, Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fsgui::{App, View};

use super::util::{Instance, eventually, sample_tree, settle, shown_paths};

fn json_paths(inst: &Instance, args: &[&str]) -> Vec<String> {
    inst.json_lines(args)
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .collect()
}

/// The test's own trash: `$XDG_DATA_HOME` beside the tree (same file
/// system, so the trash crate uses this home trash, as for a file in the
/// user's home). nextest runs every test in a process of its own, so the
/// variable is this test's alone.
#[allow(unsafe_code)]
fn own_trash(inst: &Instance) -> PathBuf {
    let data = inst.tree.parent().unwrap().join("data");
    std::fs::create_dir_all(&data).unwrap();
    // SAFETY: set before the window (and any thread that reads it) starts.
    unsafe { std::env::set_var("XDG_DATA_HOME", &data) };
    data.join("Trash")
}

/// The original paths of what is in `trash`, by its `.trashinfo` files
/// (each also has its file in `files/` and a DeletionDate).
fn trashed(trash: &Path) -> Vec<String> {
    let Ok(infos) = std::fs::read_dir(trash.join("info")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for info in infos {
        let info = info.unwrap().path();
        let text = std::fs::read_to_string(&info).unwrap();
        assert!(text.starts_with("[Trash Info]\n"), "{text}");
        assert!(text.contains("\nDeletionDate=20"), "{text}");
        let stem = info.file_stem().unwrap();
        assert!(
            trash.join("files").join(stem).exists(),
            "{} has no file in Trash/files",
            info.display()
        );
        let path = text
            .lines()
            .find_map(|l| l.strip_prefix("Path="))
            .expect("a Path= line");
        out.push(percent_decode(path));
    }
    out.sort();
    out
}

/// The spec's Path= is a URL-escaped absolute path.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

fn steps(h: &mut Harness<'static, App>, n: usize) {
    for _ in 0..n {
        h.step();
    }
}

fn menu(h: &mut Harness<'static, App>, row: &str, item: &str) {
    h.get_by_label(row).click_secondary();
    steps(h, 3);
    h.get_by_role_and_label(Role::Button, item).click();
    steps(h, 3);
}

#[test]
fn trash_from_the_results_asks_then_uses_the_freedesktop_trash() {
    let inst = Instance::start(sample_tree);
    let trash = own_trash(&inst);
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("report-q");
    settle(&mut h, "two rows", |a| {
        a.search.results.total == 2 && a.settled()
    });
    let q1 = inst.tree.join("Reports/2025/report-q1.pdf");
    let q2 = inst.tree.join("Reports/2025/report-q2.pdf");

    // Delete on a selected row asks; Cancel leaves the file alone.
    h.key_press(Key::ArrowDown);
    steps(&mut h, 2);
    h.key_press(Key::Delete);
    steps(&mut h, 3);
    assert!(h.query_by_label("Move this to the trash?").is_some());
    h.get_by_role_and_label(Role::Button, "Cancel").click();
    steps(&mut h, 3);
    assert!(h.state().dialog.is_none());
    assert!(q1.exists() && q2.exists());
    assert!(trashed(&trash).is_empty());

    // The context menu, then yes.
    menu(&mut h, "report-q1.pdf", "Move to trash…");
    assert!(q1.exists(), "nothing goes before the answer");
    h.get_by_role_and_label(Role::Button, "Move to trash")
        .click();
    steps(&mut h, 3);
    eventually(Duration::from_secs(10), "report-q1.pdf gone", || {
        !q1.exists()
    });
    assert!(q2.exists());
    assert_eq!(trashed(&trash), [q1.to_string_lossy()]);
    assert_eq!(
        std::fs::read(trash.join("files/report-q1.pdf")).unwrap(),
        b"q1"
    );
    // The list follows (the daemon saw it go), and the window says so.
    settle(&mut h, "one row left", |a| {
        a.search.results.total == 1 && a.settled()
    });
    assert_eq!(shown_paths(h.state()), [q2.to_string_lossy()]);
    assert!(h.query_by_label_contains("to the trash").is_some());

    // Undo puts it back, from the trash.
    h.get_by_role_and_label(Role::Button, "Undo").click();
    steps(&mut h, 3);
    // Back whole: the restore runs on a thread of the window's, and the
    // file is there before its bytes are.
    eventually(Duration::from_secs(10), "report-q1.pdf back", || {
        std::fs::read(&q1).is_ok_and(|b| b == b"q1")
    });
    assert_eq!(std::fs::read(&q1).unwrap(), b"q1");
    assert!(trashed(&trash).is_empty(), "still in the trash");
    settle(&mut h, "both rows again", |a| {
        a.search.results.total == 2 && a.settled()
    });
    assert!(
        h.query_by_label_contains("put 1 back from the trash")
            .is_some()
    );
}

#[test]
fn duplicates_keep_the_chosen_copy_and_trash_the_rest() {
    let inst = Instance::start(sample_tree);
    let trash = own_trash(&inst);
    let mut h = inst.window(View::Duplicates);
    settle(&mut h, "duplicate groups", |a| a.settled());
    // Groups are headed by their file's name; the songs come first.
    let header = h.get_by_label_contains("song.mp3 · ");
    header.click();
    steps(&mut h, 3);
    let copies: Vec<String> = h.state().dupes.groups[0]
        .copies
        .iter()
        .map(|c| String::from_utf8_lossy(&c[0]).into_owned())
        .collect();
    assert_eq!(copies.len(), 3);
    h.get_all_by_label("Keep only this").next().unwrap().click();
    steps(&mut h, 2);
    // Two copies of 9,000 bytes go: 17.58 KiB.
    assert!(
        h.query_by_label_contains("Chosen to go: 2 copies · frees 17.58 KiB")
            .is_some()
    );
    // Keeping one of them again updates the total.
    h.get_all_by_label("keep").nth(1).unwrap().click();
    steps(&mut h, 2);
    assert!(
        h.query_by_label_contains("Chosen to go: 1 copies · frees 8.79 KiB")
            .is_some()
    );
    h.get_all_by_label("keep").nth(1).unwrap().click();
    steps(&mut h, 2);
    h.get_by_role_and_label(Role::Button, "Move them to the trash…")
        .click();
    steps(&mut h, 3);
    assert!(
        h.query_by_label("Move these 2 items to the trash?")
            .is_some()
    );
    assert!(h.query_by_label("This frees 17.58 KiB.").is_some());
    assert!(
        Path::new(&copies[1]).exists(),
        "nothing goes before the answer"
    );
    h.get_by_role_and_label(Role::Button, "Move to trash")
        .click();
    steps(&mut h, 3);
    eventually(Duration::from_secs(10), "two copies gone", || {
        !Path::new(&copies[1]).exists() && !Path::new(&copies[2]).exists()
    });
    assert!(Path::new(&copies[0]).exists(), "the kept copy stays");
    let mut want = copies[1..].to_vec();
    want.sort();
    assert_eq!(trashed(&trash), want);
    // The group is gone from the view: one copy left is no duplicate.
    settle(&mut h, "the songs' group gone", |a| {
        a.dupes.groups.iter().all(|g| g.size != 9000)
    });
    assert!(h.query_by_label_contains("song.mp3 · ").is_none());
}

#[test]
fn rename_in_place_search_in_a_folder_and_failures_shown() {
    let inst = Instance::start(sample_tree);
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("notes.md");
    settle(&mut h, "the row", |a| {
        a.search.results.total == 1 && a.settled()
    });
    menu(&mut h, "notes.md", "Rename…");
    assert!(matches!(
        h.state().dialog,
        Some(fsgui::Dialog::Rename { .. })
    ));
    // A name that is taken is refused, nothing replaced.
    let replace_all = |h: &mut Harness<'static, App>, text: &str| {
        let input = h.input_mut();
        input.events.push(Event::Key {
            key: Key::A,
            physical_key: None,
            pressed: true,
            repeat: false,
            modifiers: Modifiers::COMMAND,
        });
        input.events.push(Event::Text(text.to_owned()));
        h.step();
        h.step();
    };
    replace_all(&mut h, "src");
    h.get_by_role_and_label(Role::Button, "Rename").click();
    steps(&mut h, 2);
    assert!(
        h.query_by_label_contains("“src” is already there")
            .is_some()
    );
    assert!(inst.tree.join("notes.md").is_file());
    replace_all(&mut h, "journal.md");
    h.key_press(Key::Enter);
    steps(&mut h, 2);
    assert!(h.state().dialog.is_none());
    assert!(!inst.tree.join("notes.md").exists());
    assert_eq!(
        std::fs::read(inst.tree.join("journal.md")).unwrap(),
        b"plain"
    );

    // Open with a program that fails at once: said in the status bar.
    h.state_mut().type_query("w2.pdf");
    settle(&mut h, "w2", |a| a.search.results.total == 2 && a.settled());
    h.get_all_by_label("w2.pdf")
        .next()
        .unwrap()
        .click_secondary();
    steps(&mut h, 3);
    h.get_by_role_and_label(Role::Button, "Open with…").click();
    steps(&mut h, 3);
    h.event(Event::Text("false".into()));
    steps(&mut h, 2);
    h.key_press(Key::Enter);
    settle(&mut h, "the failure said", |a| {
        a.notice
            .as_ref()
            .is_some_and(|n| n.error && n.text.contains("false failed"))
    });
    assert!(h.query_by_label_contains("⚠ false failed").is_some());

    // Search in this folder, from a result: the query is the folder's.
    h.state_mut().type_query("main.rs");
    settle(&mut h, "main.rs", |a| {
        a.search.results.total == 1 && a.settled()
    });
    menu(&mut h, "main.rs", "Search in this folder");
    let src = inst.tree.join("src");
    let q = format!("in:{} ", src.display());
    settle(&mut h, "the folder's entries", |a| {
        a.search.query == q && a.settled()
    });
    assert!(h.get_by_label("Search").is_focused());
    assert_eq!(
        shown_paths(h.state()),
        json_paths(&inst, &["search", q.trim()])
    );

    // From a disk-usage bar.
    h.get_by_label("🖴 Disk usage").click();
    settle(&mut h, "du", |a| a.view == View::DiskUsage && a.settled());
    menu(&mut h, "Reports", "Search in this folder");
    let q = format!("in:{} ", inst.tree.join("Reports").display());
    settle(&mut h, "Reports' entries", |a| {
        a.view == View::Search && a.search.query == q && a.settled()
    });
    let want = json_paths(&inst, &["search", q.trim()]);
    assert!(want.len() >= 7, "{want:?}");
    assert_eq!(shown_paths(h.state()), want);
}

#[test]
fn the_disk_usage_view_takes_keys() {
    let inst = Instance::start(sample_tree);
    let mut h = inst.window(View::DiskUsage);
    settle(&mut h, "du", |a| a.settled());
    let tree = inst.tree.to_string_lossy().into_owned();
    let kids = h.state().du.answer.clone().unwrap().children;
    let at = kids.iter().position(|c| c.name == "Reports").unwrap();
    for _ in 0..=at {
        h.key_press(Key::ArrowDown);
        h.step();
    }
    assert_eq!(h.state().du.selected().unwrap().name, "Reports");
    h.key_press(Key::Enter);
    settle(&mut h, "du of Reports", |a| {
        a.settled() && a.du.path.as_deref() == Some(format!("{tree}/Reports").as_bytes())
    });
    h.key_press(Key::Backspace);
    settle(&mut h, "back up", |a| {
        a.settled() && a.du.path.as_deref() == Some(tree.as_bytes())
    });
    // Delete asks about the bar the keyboard is on.
    h.key_press(Key::ArrowDown);
    h.step();
    let first = h.state().du.selected().unwrap().path.clone();
    h.key_press(Key::Delete);
    steps(&mut h, 2);
    assert_eq!(
        h.state().dialog,
        Some(fsgui::Dialog::Trash {
            paths: vec![first],
            from_dupes: false
        })
    );
    h.get_by_role_and_label(Role::Button, "Cancel").click();
    steps(&mut h, 2);
    assert!(h.state().dialog.is_none());
}
