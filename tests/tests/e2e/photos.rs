//! "3,120 photos 2015-2024" in `fsctl du` and `fsctl map` (issue 32): a
//! folder's photos with a date taken, anywhere beneath it, and the span of
//! years taken. The photos are written by ImageMagick and dated by
//! `exiftool` with dates the test chose; the oracle is that choice, summed
//! per folder by the test itself. An edit of a date with exiftool shows in
//! `taken:` and in du within the usual latency.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::media::{found, settled};
use crate::util::{Instance, Runner, poll_until};

/// How long an edit may take to show (see media.rs's LATENCY).
const LATENCY: Duration = Duration::from_secs(60);

/// The photos and their dates taken (`None`: a JPEG without one).
const PHOTOS: &[(&str, Option<&str>)] = &[
    (
        "Pictures/2015/trip/IMG_0001.jpg",
        Some("2015:07:01 09:00:00"),
    ),
    (
        "Pictures/2015/trip/IMG_0002.jpg",
        Some("2015:07:02 10:00:00"),
    ),
    (
        "Pictures/2015/trip/IMG_0003.jpg",
        Some("2016:01:01 00:30:00"),
    ),
    ("Pictures/2019/IMG_0100.jpg", Some("2019:06:14 10:30:00")),
    ("Pictures/2019/IMG_0101.jpg", Some("2021:03:03 12:00:00")),
    ("Pictures/2024/DSC_0001.jpg", Some("2024:12:31 23:59:59")),
    ("Pictures/2024/DSC_0002.jpg", Some("2024:01:01 00:00:00")),
    ("Pictures/scans/page.jpg", None),
    ("Docs/diagram.jpg", None),
];

fn make(tree: &Path) {
    std::fs::create_dir_all(tree).unwrap();
    let base = tree.parent().unwrap().join("base.jpg");
    let ok = Command::new("convert")
        .args(["-size", "64x48", "xc:#336699"])
        .arg(&base)
        .status()
        .expect("ImageMagick (tests/setup.sh installs it)");
    assert!(ok.success());
    for (rel, date) in PHOTOS {
        let p = tree.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::copy(&base, &p).unwrap();
        if let Some(d) = date {
            date_it(&p, d);
        }
    }
    std::fs::remove_file(&base).unwrap();
    std::fs::write(tree.join("Docs/notes.txt"), "no photos here\n").unwrap();
}

fn date_it(p: &Path, date: &str) {
    let ok = Command::new("exiftool")
        .args(["-q", "-overwrite_original"])
        .arg(format!("-DateTimeOriginal={date}"))
        .arg(p)
        .status()
        .expect("exiftool (tests/setup.sh installs it)");
    assert!(ok.success());
}

/// The oracle: (photos, first year, last year) beneath each folder, from
/// the dates the test chose.
fn expected(photos: &[(String, Option<String>)]) -> BTreeMap<String, (u64, i32, i32)> {
    let mut out: BTreeMap<String, (u64, i32, i32)> = BTreeMap::new();
    for (rel, date) in photos {
        let Some(d) = date else { continue };
        let year: i32 = d[..4].parse().unwrap();
        let mut folder = Path::new(rel).parent();
        while let Some(f) = folder {
            let e = out
                .entry(f.display().to_string())
                .or_insert((0, year, year));
            e.0 += 1;
            e.1 = e.1.min(year);
            e.2 = e.2.max(year);
            folder = f.parent();
        }
    }
    out
}

fn photos_of(v: &Value) -> Option<(u64, i32, i32)> {
    let p = v.get("photos")?;
    Some((
        p["count"].as_u64().unwrap(),
        p["first_year"].as_i64().unwrap() as i32,
        p["last_year"].as_i64().unwrap() as i32,
    ))
}

fn text_of(p: (u64, i32, i32)) -> String {
    let years = if p.1 == p.2 {
        p.1.to_string()
    } else {
        format!("{}-{}", p.1, p.2)
    };
    format!(
        "{} {} {years}",
        p.0,
        if p.0 == 1 { "photo" } else { "photos" }
    )
}

/// Every folder in a map's JSON, by path relative to the root node.
fn map_folders(node: &Value, at: &str, out: &mut BTreeMap<String, Value>) {
    for c in node["children"].as_array().into_iter().flatten() {
        // A group of alike folders: its members are its parent's children.
        if c["type"] == "dir_group" {
            map_folders(c, at, out);
        }
        if c["type"] == "dir" {
            let name = c["name"].as_str().unwrap().trim_end_matches('/');
            let rel = if at.is_empty() {
                name.to_owned()
            } else {
                format!("{at}/{name}")
            };
            out.insert(rel.clone(), c.clone());
            map_folders(c, &rel, out);
        }
    }
}

#[test]
fn du_and_map_say_how_many_photos_a_folder_holds_and_the_years_taken() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    make(&tree);
    let mut photos: Vec<(String, Option<String>)> = PHOTOS
        .iter()
        .map(|(r, d)| (r.to_string(), d.map(str::to_owned)))
        .collect();
    let want = expected(&photos);
    let mut inst = Instance::new(t.path().join("home"), &[&tree], Runner::current());
    inst.start();
    settled(&inst, PHOTOS.len() as u64);
    let p = |rel: &str| tree.join(rel).display().to_string();

    // Asked for only: a plain du does not pay for the pass.
    let du = inst.json(&["du", &p("Pictures")]);
    assert!(du.get("photos").is_none(), "{du}");
    // du --photos --json: the path's photos, and each child folder's (its
    // subtree).
    let du = inst.json(&["du", "--photos", &p("Pictures")]);
    assert_eq!(photos_of(&du), want.get("Pictures").copied(), "{du}");
    let kids = du["children"].as_array().unwrap();
    assert_eq!(kids.len(), 4, "{du}");
    for c in kids {
        let rel = Path::new(c["path"].as_str().unwrap())
            .strip_prefix(&tree)
            .unwrap()
            .display()
            .to_string();
        assert_eq!(photos_of(c), want.get(&rel).copied(), "{rel}: {c}");
    }
    // The whole tree, and a deep listing down to the trip folder.
    let du = inst.json(&[
        "du",
        "--photos",
        "--depth",
        "3",
        &tree.display().to_string(),
    ]);
    assert_eq!(photos_of(&du), want.get("").copied(), "{du}");
    let rows = du["children"].as_array().unwrap();
    for rel in ["Pictures", "Pictures/2015", "Pictures/2015/trip", "Docs"] {
        let row = rows
            .iter()
            .find(|r| r["path"] == p(rel))
            .unwrap_or_else(|| panic!("{rel} not listed: {du}"));
        assert_eq!(photos_of(row), want.get(rel).copied(), "{rel}: {row}");
    }
    // The text: the total's line and each child's.
    let out = inst.fsctl(&["du", "--photos", &p("Pictures")]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap();
    assert!(
        first.ends_with(&format!(", {}", text_of(want["Pictures"]))),
        "{text}"
    );
    let trip = text.lines().find(|l| l.contains(" 2015/")).unwrap();
    assert!(
        trip.ends_with(&format!("2015/  ({})", text_of(want["Pictures/2015"]))),
        "{text}"
    );
    let scans = text.lines().find(|l| l.contains(" scans/")).unwrap();
    assert!(!scans.contains("photo"), "{text}");

    // map --json and text: every folder shown says its photos.
    let map = inst.json(&["map", "--budget", "2000", &tree.display().to_string()]);
    assert_eq!(photos_of(&map["root"]), want.get("").copied(), "{map}");
    let mut folders = BTreeMap::new();
    map_folders(&map["root"], "", &mut folders);
    for rel in ["Pictures", "Pictures/2015/trip", "Pictures/2019", "Docs"] {
        let node = folders
            .iter()
            .find(|(k, _)| k.as_str() == rel || k.ends_with(&format!("/{rel}")))
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("{rel} not in the map: {map}"));
        assert_eq!(photos_of(node), want.get(rel).copied(), "{rel}: {node}");
    }
    // The year folders, shown as one group of alike folders: their sum.
    let kids = |n: &Value| n["children"].as_array().unwrap().clone();
    let pictures = kids(&map["root"])
        .into_iter()
        .find(|c| c["name"] == "Pictures")
        .unwrap();
    let group = kids(&pictures)
        .into_iter()
        .find(|c| c["type"] == "dir_group")
        .unwrap_or_else(|| panic!("no group of year folders: {map}"));
    let years = ["Pictures/2015", "Pictures/2019", "Pictures/2024"];
    let sum = years.iter().fold((0, i32::MAX, i32::MIN), |a, y| {
        let w = want[*y];
        (a.0 + w.0, a.1.min(w.1), a.2.max(w.2))
    });
    assert_eq!(photos_of(&group), Some(sum), "{group}");
    let text = map["text"].as_str().unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("Pictures/"))
        .unwrap();
    assert!(
        line.contains(&format!("; {}", text_of(want["Pictures"]))),
        "{text}"
    );

    // MCP disk_usage carries it; fs_map passes the daemon's text through.
    let mcp = crate::mcp::Mcp::start(&inst, &tree, &[]);
    let du = mcp.ok("disk_usage", json!({"path": p("Pictures")}));
    assert_eq!(du["photos"], text_of(want["Pictures"]), "{du}");
    let map = mcp.ok("fs_map", json!({"path": tree.display().to_string()}));
    assert!(
        map["text"]
            .as_str()
            .unwrap()
            .contains(&text_of(want["Pictures"])),
        "{map}"
    );
    drop(mcp);

    // An edit to a date taken shows in taken: and in du within the usual
    // latency.
    let img = "Pictures/2015/trip/IMG_0002.jpg";
    date_it(&tree.join(img), "2012:05:05 08:00:00");
    photos[1].1 = Some("2012:05:05 08:00:00".into());
    let want = expected(&photos);
    let mut got = Default::default();
    assert!(
        poll_until(LATENCY, || {
            got = found(&inst, "taken:2012");
            got == std::collections::BTreeSet::from([p(img)])
        }),
        "the new date did not show in taken: {got:?}"
    );
    let du = inst.json(&["du", "--photos", &p("Pictures")]);
    assert_eq!(photos_of(&du), want.get("Pictures").copied(), "{du}");
    assert_eq!(want["Pictures"], (7, 2012, 2024));
    assert!(found(&inst, "taken:2015-07-02").is_empty());
}
