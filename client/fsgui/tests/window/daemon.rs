//! The window and its daemon: a daemon stopped with the window connected
//! exits promptly; the window marks its rows as out of date, calls again,
//! and re-runs its query on the next daemon.

use std::time::Duration;

use egui_kittest::kittest::Queryable;
use fsgui::View;

use super::util::{Instance, sample_tree, settle, shown_paths, write};

fn json_paths(inst: &Instance, args: &[&str]) -> Vec<String> {
    inst.json_lines(args)
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .collect()
}

/// The window with `report` typed in and its Subscribe stream proven
/// open (a file created in the tree reaches the rows).
fn connected_window(inst: &Instance) -> egui_kittest::Harness<'static, fsgui::App> {
    let mut h = inst.window(View::Search);
    h.step();
    h.get_by_label("Search").type_text("report");
    settle(&mut h, "rows for report", |a| {
        a.search.results.params.query == "report" && a.settled()
    });
    let before = h.state().search.results.total;
    write(&inst.tree, "Reports/report-live.txt", b"live");
    settle(&mut h, "the change streamed in", |a| {
        a.search.results.total == before + 1 && a.settled()
    });
    h
}

fn wait_marked_out_of_date(h: &mut egui_kittest::Harness<'static, fsgui::App>) {
    settle(h, "the rows marked out of date", |a| {
        matches!(a.connection, Some(Err(_))) && a.search.outdated.is_some()
    });
    assert!(
        h.query_by_label_contains("may be out of date").is_some(),
        "no out-of-date line over the rows"
    );
    assert!(
        h.query_by_label_contains("not connected").is_some(),
        "the status bar says nothing"
    );
}

#[test]
fn sigterm_ends_the_daemon_within_2s_with_the_window_connected() {
    let mut inst = Instance::start(sample_tree);
    let mut h = connected_window(&inst);
    let rows = shown_paths(h.state());
    let took = inst.terminate(Duration::from_secs(2));
    eprintln!("fsindexd exited {took:?} after SIGTERM");
    // The window saw it go: the rows stay, marked.
    wait_marked_out_of_date(&mut h);
    assert_eq!(shown_paths(h.state()), rows);
}

#[test]
fn a_new_daemon_gets_the_query_run_again() {
    let mut inst = Instance::start(sample_tree);
    let mut h = connected_window(&inst);
    inst.terminate(Duration::from_secs(2));
    wait_marked_out_of_date(&mut h);
    // Changed while no daemon watched: the next one's scan finds it.
    write(&inst.tree, "Reports/2025/report-q3.pdf", b"q3");
    inst.restart();
    settle(&mut h, "the query run again", |a| {
        matches!(a.connection, Some(Ok(())))
            && a.status.as_ref().is_some_and(|s| s.state == "ready")
            && a.search.outdated.is_none()
            && a.settled()
            && shown_paths(a).iter().any(|p| p.ends_with("report-q3.pdf"))
    });
    let want = json_paths(&inst, &["search", "report"]);
    assert!(
        want.iter().any(|p| p.ends_with("report-q3.pdf")),
        "{want:?}"
    );
    assert_eq!(shown_paths(h.state()), want);
    assert!(h.query_by_label("report-q3.pdf").is_some());
    assert!(
        h.query_by_label_contains("reconnected to fsindexd; the search was run again")
            .is_some(),
        "the window says what happened"
    );
    assert!(h.query_by_label_contains("may be out of date").is_none());
}
