//! Saved searches and history are the daemon's (issue 34), shared with
//! fsctl: a history and saved searches an older fsgui kept in fsgui.toml
//! are imported once; a search saved with fsctl is in the window's menu and
//! `@NAME` runs it, listing what `fsctl search @NAME` lists; ☆ saves the
//! query where `fsctl saved list` sees it.

use egui_kittest::kittest::Queryable;
use fsgui::View;

use super::util::{Instance, sample_tree, settle, shown_paths};

fn field(rows: &[serde_json::Value], key: &str) -> Vec<String> {
    rows.iter()
        .map(|v| v[key].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn saved_searches_and_history_are_the_daemons_and_an_old_local_one_is_imported_once() {
    let inst = Instance::start(sample_tree);
    // What an older fsgui wrote: history newest first, saved in order.
    std::fs::write(
        inst.home.join("fsgui.toml"),
        "history = [\"w2\", \"report\"]\nsaved = [\"ext:pdf\", \"ext:jpg\"]\ntheme = \"dark\"\n",
    )
    .unwrap();
    let out = inst.fsctl(&["saved", "add", "pics", "ext:jpg"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut h = inst.window(View::Search);
    settle(&mut h, "the shared lists, after the import", |a| {
        a.shared.loaded && a.settings.history.is_empty() && a.settings.saved.is_empty()
    });
    // Imported: the history keeps its order, with today's counts; the
    // saved query is named after its words, and one saved already with
    // fsctl (`ext:jpg` as @pics) is not saved twice.
    let history = inst.json_lines(&["history"]);
    assert_eq!(field(&history, "query"), ["w2", "report"]);
    assert_eq!(field(&history, "client"), ["fsgui", "fsgui"]);
    let count = |q: &str| inst.json_lines(&["search", q]).len() as u64;
    assert_eq!(history[0]["results"], count("w2"));
    assert_eq!(history[1]["results"], count("report"));
    let saved = inst.json_lines(&["saved", "list"]);
    assert_eq!(field(&saved, "name"), ["ext-pdf", "pics"]);
    assert_eq!(field(&saved, "query"), ["ext:pdf", "ext:jpg"]);
    // Taken out of the file, the rest of it kept.
    let file = std::fs::read_to_string(inst.home.join("fsgui.toml")).unwrap();
    assert!(!file.contains("w2") && !file.contains("ext:pdf"), "{file}");
    assert!(file.contains("theme = \"dark\""), "{file}");
    assert_eq!(
        h.state().shared.saved,
        [
            ("ext-pdf".to_owned(), "ext:pdf".to_owned()),
            ("pics".to_owned(), "ext:jpg".to_owned())
        ]
    );
    assert_eq!(h.state().shared.history, ["w2", "report"]);

    // `@pics`, saved with fsctl, runs in the window as in fsctl.
    h.get_by_label("Search").type_text("@pics");
    settle(&mut h, "rows for @pics", |a| {
        a.search.results.params.query == "@pics" && a.settled()
    });
    let want = field(&inst.json_lines(&["search", "@pics"]), "path");
    assert_eq!(want.len(), 3, "{want:?}");
    assert_eq!(shown_paths(h.state()), want);

    // ☆ saves the query typed, under a name made of its words.
    h.state_mut().type_query("report ext:odt");
    settle(&mut h, "rows for the new query", |a| a.settled());
    h.get_by_label("☆").click();
    settle(&mut h, "the query saved", |a| {
        a.shared.saved_as("report ext:odt").is_some()
    });
    let saved = inst.json_lines(&["saved", "list"]);
    assert!(
        saved
            .iter()
            .any(|v| v["name"] == "report-ext-odt" && v["query"] == "report ext:odt"),
        "{saved:?}"
    );

    // Imported once: a new window finds nothing left to import.
    drop(h);
    let mut h = inst.window(View::Search);
    settle(&mut h, "the lists", |a| a.shared.loaded);
    assert_eq!(
        field(&inst.json_lines(&["history"]), "query"),
        ["w2", "report"]
    );
}

#[test]
fn the_sidebar_searches_in_a_bookmark_and_filters_by_a_tag_as_fsctl_does() {
    let inst = Instance::start(sample_tree);
    let reports = inst.tree.join("Reports");
    let q1 = reports.join("2025/report-q1.pdf");
    let w2 = inst.tree.join("Taxes/2025/w2.pdf");
    for args in [
        vec!["bookmark", "add", reports.to_str().unwrap()],
        vec!["tag", "add", q1.to_str().unwrap(), "receipts"],
        vec!["tag", "add", w2.to_str().unwrap(), "receipts"],
    ] {
        let out = inst.fsctl(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut h = inst.window(View::Search);
    settle(&mut h, "the bookmarks and tags", |a| {
        a.shared.bookmarks.len() == 1 && a.shared.tags.len() == 1
    });

    // A bookmark: the rows under its folder, as `fsctl search in:` lists them.
    h.get_by_label("📁 Reports").click();
    settle(&mut h, "rows under Reports", |a| {
        a.search.results.params.query.starts_with("in:") && a.settled()
    });
    let inside = format!("in:{}", reports.display());
    let want = field(&inst.json_lines(&["search", &inside]), "path");
    assert!(want.len() >= 5, "{want:?}");
    assert_eq!(shown_paths(h.state()), want);

    // A tag: only what carries it, there; the test tagged one file there.
    h.get_by_label("receipts (2)").click();
    settle(&mut h, "rows tagged receipts", |a| {
        a.search.results.params.query.contains("tag:receipts") && a.settled()
    });
    assert_eq!(shown_paths(h.state()), [q1.to_str().unwrap().to_owned()]);
    assert_eq!(
        field(
            &inst.json_lines(&["search", &inside, "tag:receipts"]),
            "path"
        ),
        [q1.to_str().unwrap().to_owned()]
    );
    // Clicked again, the filter goes.
    h.get_by_label("receipts (2)").click();
    settle(&mut h, "the filter taken out", |a| {
        !a.search.results.params.query.contains("tag:") && a.settled()
    });
    assert_eq!(shown_paths(h.state()), want);
}
