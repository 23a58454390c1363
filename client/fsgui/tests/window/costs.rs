//! What the window costs when nothing happens: no frame is asked for while
//! the daemon scans or hashes (nothing animates); the disk-usage view keeps
//! its bars and its treemap apart at the smallest window; the light/dark
//! choice is kept.

use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use fsgui::View;
use fsgui::backend::{DupProgress, DupesEvent, Reply, StatusInfo};

use super::util::{Instance, sample_tree, settle};

#[test]
fn a_scan_or_a_duplicate_search_asks_for_no_frames() {
    let inst = Instance::start(sample_tree);
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("report");
    settle(&mut h, "rows", |a| a.settled() && a.status.is_some());
    // The status bar as while scanning (the reducer the status poll feeds).
    h.state_mut().apply(Reply::Status(StatusInfo {
        state: "scanning".into(),
        ..StatusInfo::default()
    }));
    h.step();
    assert!(h.query_by_label_contains("scanning").is_some());
    // egui asks for no further frame: the window is still until the next
    // reply (kittest's `run` fails if repaints go on).
    h.try_run()
        .expect("the window keeps repainting while scanning");
    // The same while duplicates are hashed.
    h.get_by_label("🗐 Duplicates").click();
    h.step();
    let generation = 1;
    h.state_mut().dupes.running = true;
    h.state_mut().apply(Reply::Dupes {
        generation,
        event: DupesEvent::Progress(DupProgress {
            stage: "full".into(),
            files_done: 1,
            files_total: 4,
            bytes_done: 10,
            bytes_total: 40,
        }),
    });
    h.step();
    h.try_run()
        .expect("the window keeps repainting while hashing");
}

#[test]
fn the_smallest_window_keeps_the_bars_and_the_treemap_apart() {
    let inst = Instance::start(sample_tree);
    // 480x320 is the window's minimum (kittest adds an 8-point margin).
    let mut h = inst.window_at(View::DiskUsage, None, egui::vec2(496.0, 336.0));
    settle(&mut h, "du", |a| a.settled());
    let map = h.state().du_map_rect.expect("a treemap");
    assert!(
        map.width() > 100.0 && map.height() > 40.0,
        "the treemap is too small to read: {map:?}"
    );
    let kids = h.state().du.answer.clone().unwrap().children;
    let mut seen = 0;
    for c in &kids {
        if let Some(n) = h.query_by_label(&c.name) {
            seen += 1;
            let r = n.rect();
            // Sharing an edge is not overlapping.
            assert!(
                !r.intersect(map).is_positive(),
                "the bar of {} at {r:?} overlaps the treemap at {map:?}",
                c.name
            );
            assert!(r.max.x <= 496.0, "{} is cut off: {r:?}", c.name);
        }
    }
    assert!(seen >= 2, "bars are shown");
}

#[test]
fn the_light_or_dark_choice_is_kept() {
    let inst = Instance::start(sample_tree);
    let mut h = inst.window(View::Search);
    h.step();
    let dark = h.ctx.global_style().visuals.dark_mode;
    let (sign, want) = if dark {
        ("☀", "light")
    } else {
        ("🌙", "dark")
    };
    h.get_by_role_and_label(Role::Button, sign).click();
    h.step();
    h.step();
    assert_eq!(h.ctx.global_style().visuals.dark_mode, !dark);
    let saved = std::fs::read_to_string(inst.home.join("fsgui.toml")).unwrap();
    assert!(saved.contains(&format!("theme = \"{want}\"")), "{saved}");
    // The next window starts in it.
    drop(h);
    let mut h = inst.window(View::Search);
    h.step();
    h.step();
    assert_eq!(h.ctx.global_style().visuals.dark_mode, !dark);
}
