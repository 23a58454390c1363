//! A user's watch in machine-wide mode is that user's view: a client that
//! replays the user's `fsctl watch` stream over the user's own search
//! before ends at what that user's own `find` lists after (and at the
//! user's search), with nothing more fetched,
//! whatever moves, `chmod`s and `chown`s happen across the line of what
//! the user may see, and no name from the hidden side is streamed.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::security::{Visitor, change, start_system, system_tree};
use crate::util::{self, Watch, json_lines, write_file};

/// What the visitor's own search shows under `top`.
fn visible(visitor: &Visitor, top: &str) -> BTreeSet<String> {
    let o = visitor.run(&["search", &format!("in:{top}"), "--limit", "0", "--json"]);
    assert!(o.status.success(), "{}", util::text(&o));
    json_lines(&o)
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_owned())
        .filter(|p| p != top)
        .collect()
}

/// `before` with the stream's events applied, as a client that keeps a
/// mirror of what it may see does: a deletion takes the entry's subtree, a
/// rename moves it, and a `reread` is answered by searching that folder
/// again (the one thing the client fetches, and only when told to).
fn replay(
    before: &BTreeSet<String>,
    events: &[Value],
    reread: &dyn Fn(&str) -> BTreeSet<String>,
) -> BTreeSet<String> {
    let mut set = before.clone();
    let under = |set: &BTreeSet<String>, p: &str| -> Vec<String> {
        set.iter()
            .filter(|x| *x == p || x.starts_with(&format!("{p}/")))
            .cloned()
            .collect()
    };
    for ev in events {
        let path = ev["path"].as_str().unwrap_or_default().to_owned();
        match ev["kind"].as_str().unwrap() {
            "created" => {
                set.insert(path);
            }
            "deleted" => {
                for p in under(&set, &path) {
                    set.remove(&p);
                }
            }
            "renamed" => {
                let from = ev["from"].as_str().unwrap();
                for p in under(&set, from) {
                    set.remove(&p);
                    set.insert(format!("{path}{}", &p[from.len()..]));
                }
            }
            "reread" => {
                for p in under(&set, &path) {
                    if p != path {
                        set.remove(&p);
                    }
                }
                set.extend(reread(&path));
            }
            "subscribed" | "modified" => {}
            other => panic!("unexpected event {other}: {ev}"),
        }
    }
    set
}

/// What the visitor's own `find` lists under `top` (run as the visitor:
/// the kernel decides what it may open), the daemon's `--sync` cookies
/// left out.
fn walked(visitor: &Visitor, top: &str) -> BTreeSet<String> {
    util::find_oracle(&visitor.runner, Path::new(top))
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .filter(|p| !p.contains(".fsindex-cookie"))
        .collect()
}

/// Reads the stream until its replay equals what the visitor's own `find`
/// lists, and the visitor's search does too (or `limit` passes, which fails
/// with all three).
fn converge(
    visitor: &Visitor,
    top: &str,
    before: &BTreeSet<String>,
    watch: &mut Watch,
    limit: Duration,
) {
    let deadline = Instant::now() + limit;
    let reread = |p: &str| visible(visitor, p);
    loop {
        // Whatever has arrived, then a look.
        while watch.next_within(Duration::from_millis(300)).is_some() {}
        let replayed = replay(before, &watch.seen, &reread);
        let now = walked(visitor, top);
        let searched = visible(visitor, top);
        if replayed == now && searched == now {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the replayed stream differs from the visitor's find;\nreplayed only: {:#?}\nfind only: {:#?}\nsearch, when it differs: {:?}\nstreamed: {:#?}",
            replayed.difference(&now).collect::<Vec<_>>(),
            now.difference(&replayed).collect::<Vec<_>>(),
            (searched != now).then_some(&searched),
            watch.seen
        );
    }
}

fn assert_not_streamed(watch: &Watch, names: &[&str]) {
    let streamed: String = watch.seen.iter().map(|e| format!("{e}\n")).collect();
    for name in names {
        assert!(
            !streamed.contains(name),
            "the visitor was shown {name}:\n{streamed}"
        );
    }
}

/// A move out of a folder the user cannot open is a creation of the entry
/// and of everything in it, a move into one a deletion, and a move within
/// either side is streamed as a rename or not at all.
#[test]
fn a_user_watch_turns_moves_across_what_they_see_into_creations_and_deletions() {
    let Some((t, root)) = system_tree() else {
        return;
    };
    let w = |p: &str, data: &[u8]| write_file(&root, p, data);
    w("pub/seen-b.txt", b"b");
    w("pub/seen-dir/inner.txt", b"i");
    w("priv/zqsecret-a.txt", b"a");
    w("priv/zqsecret-dir/zqsecret-inner.txt", b"s");
    w("priv/zqsecret-dir/sub/deep.txt", b"d");
    change("chmod", &["-R", "a+rX"], &root);
    let private = root.join("priv");
    change("chown", &["-R", "12345:12345"], &private);
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let (inst, visitor) = start_system(t.path(), &root);
    let r = |p: &str| root.join(p).to_string_lossy().into_owned();
    let top = r("");
    let top = top.trim_end_matches('/');

    let before = visible(&visitor, top);
    assert!(before.contains(&r("pub/seen-b.txt")), "{before:?}");

    let mut watch = Watch::subscribe(visitor.cmd(&["watch", top, "--json"]));
    // Hidden to visible, a file and a folder with its content.
    std::fs::rename(private.join("zqsecret-a.txt"), root.join("pub/now-a.txt")).unwrap();
    std::fs::rename(private.join("zqsecret-dir"), root.join("pub/now-dir")).unwrap();
    // Visible to hidden.
    std::fs::rename(root.join("pub/seen-b.txt"), private.join("zqgone-b.txt")).unwrap();
    std::fs::rename(root.join("pub/seen-dir"), private.join("zqgone-dir")).unwrap();
    // Hidden to hidden, and visible to visible.
    std::fs::write(private.join("zqsecret-c.txt"), b"c").unwrap();
    std::fs::rename(
        private.join("zqsecret-c.txt"),
        private.join("zqsecret-d.txt"),
    )
    .unwrap();
    std::fs::write(root.join("pub/plain.txt"), b"p").unwrap();
    std::fs::rename(root.join("pub/plain.txt"), root.join("pub/plain-moved.txt")).unwrap();
    util::sync(&inst);

    converge(&visitor, top, &before, &mut watch, Duration::from_secs(20));
    let after = visible(&visitor, top);
    assert!(
        after.contains(&r("pub/now-a.txt")) && after.contains(&r("pub/now-dir/sub/deep.txt")),
        "{after:?}"
    );
    assert!(!after.contains(&r("pub/seen-b.txt")));
    assert_not_streamed(&watch, &["zqgone", "zqsecret-c", "zqsecret-d", "/priv/"]);
}

/// `chmod` and `chown` that close a folder the user could open take its
/// contents out of the user's stream (the folder itself stays, empty), and
/// ones that open a folder stream everything the user may now see in it.
/// Nothing inside a folder while it is closed is ever streamed by name.
#[test]
fn a_user_watch_follows_permission_changes_that_hide_or_reveal_folders() {
    let Some((t, root)) = system_tree() else {
        return;
    };
    let w = |p: &str, data: &[u8]| write_file(&root, p, data);
    w("shared/report.txt", b"r");
    w("shared/sub/notes.txt", b"n");
    w("shared/sub/deeper/plan.txt", b"p");
    w("locked/zqlocked-a.txt", b"a");
    w("locked/inner/zqlocked-b.txt", b"b");
    w("locked/inner/shut/zqlocked-never.txt", b"x");
    w("owned/zqowned-a.txt", b"o");
    w("owned/in/zqowned-b.txt", b"o");
    change("chmod", &["-R", "a+rX"], &root);
    let (shared, locked, owned) = (root.join("shared"), root.join("locked"), root.join("owned"));
    change("chown", &["-R", "12345:12345"], &locked);
    change("chown", &["-R", "12345:12345"], &owned);
    let set =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    set(&locked, 0o700);
    // Stays shut after `locked` opens: what is in it is never streamed.
    set(&locked.join("inner/shut"), 0o700);
    // Open to its owner only: the visitor gets in when made the owner.
    set(&owned, 0o700);
    let (inst, visitor) = start_system(t.path(), &root);
    let top = root.to_string_lossy().into_owned();
    let before = visible(&visitor, &top);
    assert!(
        before.contains(
            &shared
                .join("sub/deeper/plan.txt")
                .to_string_lossy()
                .into_owned()
        )
    );
    assert!(!before.iter().any(|p| p.contains("zqlocked")), "{before:?}");

    let mut watch = Watch::subscribe(visitor.cmd(&["watch", &top, "--json"]));
    // Closed to the visitor: what it held leaves the view.
    set(&shared.join("sub"), 0o700);
    // Opened: what it holds arrives, except the folder still shut.
    set(&locked, 0o755);
    util::sync(&inst);
    converge(&visitor, &top, &before, &mut watch, Duration::from_secs(20));
    let now = visible(&visitor, &top);
    assert!(
        now.contains(
            &locked
                .join("inner/zqlocked-b.txt")
                .to_string_lossy()
                .into_owned()
        ),
        "{now:?}"
    );
    assert!(
        now.contains(&shared.join("sub").to_string_lossy().into_owned()),
        "{now:?}"
    );
    assert!(!now.iter().any(|p| p.contains("notes.txt")), "{now:?}");

    // A file written into the closed folder is not streamed; opening it
    // again brings it with the rest.
    std::fs::write(shared.join("sub/zqwhile-closed.txt"), b"w").unwrap();
    util::sync(&inst);
    while watch.next_within(Duration::from_millis(500)).is_some() {}
    assert_not_streamed(&watch, &["zqwhile-closed"]);
    // An owner change alone, which changes nothing the index keeps: the
    // visitor made the owner of a folder open to its owner only.
    change("chown", &[&util::NOBODY.to_string()], &owned);
    converge(&visitor, &top, &before, &mut watch, Duration::from_secs(20));
    set(&shared.join("sub"), 0o755);
    util::sync(&inst);
    converge(&visitor, &top, &before, &mut watch, Duration::from_secs(20));
    let now = visible(&visitor, &top);
    for p in [
        "shared/sub/zqwhile-closed.txt",
        "shared/sub/deeper/plan.txt",
        "owned/in/zqowned-b.txt",
    ] {
        assert!(
            now.contains(&root.join(p).to_string_lossy().into_owned()),
            "{p}: {now:?}"
        );
    }
    assert_not_streamed(&watch, &["zqlocked-never"]);
}

/// Opening a folder that holds more than the stream lists at once (10,000
/// entries) streams one `reread` for it: the client searches it again.
#[test]
fn opening_a_large_folder_asks_the_user_to_read_it_again() {
    let Some((t, root)) = system_tree() else {
        return;
    };
    let big = root.join("big");
    std::fs::create_dir_all(big.join("sub")).unwrap();
    for i in 0..10_050 {
        std::fs::write(big.join(format!("sub/f{i:05}.txt")), b"").unwrap();
    }
    std::fs::write(root.join("small.txt"), b"s").unwrap();
    change("chmod", &["-R", "a+rX"], &root);
    change("chown", &["-R", "12345:12345"], &big);
    std::fs::set_permissions(&big, std::fs::Permissions::from_mode(0o700)).unwrap();
    let (inst, visitor) = start_system(t.path(), &root);
    let top = root.to_string_lossy().into_owned();
    let before = visible(&visitor, &top);
    assert_eq!(before.len(), 2, "{before:?}");

    let mut watch = Watch::subscribe(visitor.cmd(&["watch", &top, "--json"]));
    std::fs::set_permissions(&big, std::fs::Permissions::from_mode(0o755)).unwrap();
    util::sync(&inst);
    let big_path = big.to_string_lossy().into_owned();
    watch.until(Duration::from_secs(20), "a reread of the folder", |ev| {
        ev["kind"] == "reread" && ev["path"] == big_path.as_str()
    });
    converge(&visitor, &top, &before, &mut watch, Duration::from_secs(20));
    assert!(
        watch.seen.len() < 100,
        "{} events instead of one reread",
        watch.seen.len()
    );
    assert_eq!(visible(&visitor, &top).len(), 10_053);
}
