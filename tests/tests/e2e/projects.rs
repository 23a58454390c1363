//! `fsctl projects`: folders holding a project's markers, made by the real
//! tools (`git init`, `git checkout -b`, `git worktree add`, `cargo init`,
//! `npm init -y`), judged against git's own answers (`git rev-parse`), GNU
//! `du`, `find`, and the mtimes the test set with `touch -d`.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::mcp::Mcp;
use crate::security::{change, start_system, system_tree};
use crate::util::{self, Instance, Runner, json_lines, sh, text, write_file};

/// A git command that needs no user configuration.
const GIT: &str = "git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main";

fn projects(inst: &Instance, args: &[&str]) -> Vec<Value> {
    let mut a = vec!["projects", "--json"];
    a.extend_from_slice(args);
    let out = inst.fsctl(&a);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    json_lines(&out)
}

fn by_path(list: &[Value]) -> BTreeMap<String, Value> {
    list.iter()
        .map(|p| (p["path"].as_str().unwrap().to_owned(), p.clone()))
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

/// Files under `dir` named `*.EXT`, as `find` counts them outside `.git`
/// and `node_modules`.
fn find_count(dir: &Path, ext: &str) -> u64 {
    let out = sh(
        dir,
        &format!(
            "find . \\( -name .git -o -name node_modules \\) -prune -o -type f -name '*.{ext}' -print | wc -l"
        ),
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn git_out(dir: &Path, args: &str) -> String {
    let out = sh(dir, &format!("{GIT} {args}"));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn projects_made_by_git_cargo_and_npm_are_listed_with_their_kinds_branch_languages_and_du_size() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    let r = |p: &str| root.join(p);
    let s = |p: &str| r(p).to_str().unwrap().to_owned();
    std::fs::create_dir_all(r("app/web")).unwrap();
    std::fs::create_dir_all(r("solo")).unwrap();
    // A git and Cargo project on a branch of its own, with an npm project
    // and a handwritten Cargo crate nested in it.
    sh(
        &r("app"),
        &format!(
            "{GIT} init -q && {GIT} checkout -q -b feature/login && cargo init -q --vcs none --name app"
        ),
    );
    write_file(&r("app"), "src/util.rs", b"pub fn f() {}\n");
    write_file(&r("app"), "scripts/build.sh", b"#!/bin/sh\n");
    sh(&r("app/web"), "npm init -y >/dev/null");
    write_file(&r("app/web"), "index.js", b"console.log(1)\n");
    write_file(&r("app/web"), "lib/a.js", b"module.exports = 1\n");
    // Installed dependencies are nobody's project.
    write_file(
        &r("app/web"),
        "node_modules/left-pad/package.json",
        b"{\"name\":\"left-pad\"}\n",
    );
    write_file(&r("app/web"), "node_modules/left-pad/index.js", b"\n");
    write_file(
        &r("app"),
        "crates/core/Cargo.toml",
        b"[package]\nname = \"core\"\nversion = \"0.1.0\"\n",
    );
    write_file(&r("app"), "crates/core/src/lib.rs", b"//! core\n");
    // A repository with a commit, its HEAD detached, and a worktree of it
    // (whose `.git` is a file naming the real git folder).
    sh(
        &r("solo"),
        &format!(
            "{GIT} init -q && echo x > f.go && {GIT} add f.go && {GIT} commit -q -m one && {GIT} checkout -q --detach && {GIT} worktree add -q ../wt -b wt-branch"
        ),
    );
    write_file(&root, "solo/go.mod", b"module solo\n");
    // Other markers, and what is no project.
    write_file(&root, "py/pyproject.toml", b"[project]\nname = \"py\"\n");
    write_file(&root, "py/pkg/__init__.py", b"");
    write_file(
        &root,
        "paper/main.tex",
        b"% my paper\n\\documentclass[11pt]{article}\n\\begin{document}x\\end{document}\n",
    );
    write_file(&root, "paper/chapter.tex", b"\\section{One}\n");
    write_file(
        &root,
        "notes/draft.tex",
        b"% \\documentclass{article}\n\\section{x}\n",
    );
    write_file(&root, "plain/readme.txt", b"nothing here\n");
    write_file(&root, "cm/CMakeLists.txt", b"project(x)\n");
    write_file(&root, "cm/App.sln", b"\n");
    std::fs::create_dir_all(r("cm/App.xcodeproj")).unwrap();
    // Known newest changes: every file at one time, one file later; a
    // newer `.git` file does not count.
    sh(
        &root,
        "find . -exec touch -h -d '2024-01-02 03:04:05 UTC' {} +",
    );
    sh(&root, "touch -d '2025-02-03 04:05:06 UTC' app/src/util.rs");
    sh(&root, "touch -d '2026-01-01 00:00:00 UTC' app/.git/HEAD");

    let mut inst = Instance::new(t.path().join("home"), &[&root], Runner::current());
    inst.start();
    let list = projects(&inst, &[]);
    let got = by_path(&list);

    // Exactly these folders, parents before what is nested in them, each
    // with the kinds its markers say.
    let want: Vec<(&str, &[&str])> = vec![
        ("app", &["git", "cargo"]),
        ("app/crates/core", &["cargo"]),
        ("app/web", &["npm"]),
        ("cm", &["dotnet", "cmake", "xcode"]),
        ("paper", &["latex"]),
        ("py", &["python"]),
        ("solo", &["git", "go"]),
        ("wt", &["git"]),
    ];
    let order: Vec<String> = list
        .iter()
        .map(|p| p["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        order,
        want.iter().map(|(p, _)| s(p)).collect::<Vec<_>>(),
        "{list:#?}"
    );
    for (p, kinds) in &want {
        assert_eq!(strings(&got[&s(p)]["kinds"]), *kinds, "{p}");
    }

    // Nesting: under the nearest project above.
    assert_eq!(got[&s("app/web")]["parent"], s("app"));
    assert_eq!(got[&s("app/web")]["depth"], 1);
    assert_eq!(got[&s("app/crates/core")]["parent"], s("app"));
    assert_eq!(got[&s("app")]["parent"], Value::Null);
    assert_eq!(got[&s("app")]["depth"], 0);

    // Branches as git itself names them.
    let app = &got[&s("app")];
    assert_eq!(
        app["branch"],
        git_out(&r("app"), "symbolic-ref --short HEAD"),
        "{app}"
    );
    assert_eq!(app["branch"], "feature/login");
    assert_eq!(app["detached"], false);
    let solo = &got[&s("solo")];
    let commit = git_out(&r("solo"), "rev-parse HEAD");
    assert_eq!(solo["detached"], true, "{solo}");
    assert_eq!(solo["branch"].as_str().unwrap(), &commit[..12]);
    let wt = &got[&s("wt")];
    assert!(r("wt/.git").is_file(), "a worktree's .git is a file");
    assert_eq!(wt["branch"], git_out(&r("wt"), "symbolic-ref --short HEAD"));
    assert_eq!(wt["branch"], "wt-branch");
    assert_eq!(got[&s("py")]["branch"], Value::Null);

    // Languages: counts as `find` gives them, most files first.
    let langs = |p: &str| -> Vec<(String, u64)> {
        got[&s(p)]["languages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["language"].as_str().unwrap().to_owned(),
                    l["files"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let rust = find_count(&r("app"), "rs");
    let js = find_count(&r("app"), "js");
    assert_eq!(rust, 3, "main.rs, util.rs and core's lib.rs");
    assert_eq!(
        langs("app"),
        vec![
            ("Rust".to_owned(), rust),
            ("JavaScript".to_owned(), js),
            ("Shell".to_owned(), find_count(&r("app"), "sh")),
        ]
    );
    assert_eq!(
        langs("app/web"),
        vec![("JavaScript".to_owned(), find_count(&r("app/web"), "js"))]
    );
    assert_eq!(langs("paper"), vec![("TeX".to_owned(), 2)]);

    // Sizes as GNU du counts them.
    for (p, _) in &want {
        let (bytes, apparent) = util::gnu_du(&Runner::current(), &r(p));
        assert_eq!(got[&s(p)]["bytes"], bytes, "{p}: du -s -B1");
        assert_eq!(got[&s(p)]["apparent_bytes"], apparent, "{p}: du -s -b");
    }

    // The newest change: the file the test touched last, not `.git`'s.
    assert_eq!(app["mtime"], "2025-02-03T04:05:06Z", "{app}");
    assert_eq!(got[&s("app/web")]["mtime"], "2024-01-02T03:04:05Z");

    // MCP list_projects: the same projects, paged by its cursor.
    let mcp = Mcp::start(&inst, t.path(), &[]);
    let mut seen = Vec::new();
    let mut args = json!({"limit": 3});
    loop {
        let page = mcp.ok("list_projects", args.clone());
        assert_eq!(page["total"], want.len(), "{page}");
        for p in page["projects"].as_array().unwrap() {
            let path = p["path"].as_str().unwrap().to_owned();
            let cli = &got[&path];
            assert_eq!(p["kinds"], cli["kinds"], "{path}");
            assert_eq!(p["bytes"], cli["bytes"], "{path}");
            assert_eq!(p.get("parent"), cli.get("parent").filter(|v| !v.is_null()));
            seen.push(path);
        }
        match page.get("nextCursor") {
            Some(c) => args = json!({"limit": 3, "cursor": c}),
            None => break,
        }
    }
    assert_eq!(seen, order, "every project once, in order");
    let solo_mcp = mcp.ok("list_projects", json!({"path": s("solo")}));
    assert_eq!(
        solo_mcp["projects"][0]["branch"],
        format!("detached at {}", &commit[..12])
    );
    assert_eq!(
        mcp.ok("list_projects", json!({"path": s("app/web")}))["projects"][0]["branch"],
        Value::Null
    );
    drop(mcp);

    // One folder: only what is at or below it.
    let under = projects(&inst, &[&s("app")]);
    let paths: Vec<&str> = under.iter().map(|p| p["path"].as_str().unwrap()).collect();
    assert_eq!(paths, vec![s("app"), s("app/crates/core"), s("app/web")]);

    // The human table: the tree indented, branches named.
    let out = inst.fsctl(&["projects", root.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(shown.contains("(feature/login)"), "{shown}");
    assert!(
        shown.contains(&format!("(detached at {})", &commit[..12])),
        "{shown}"
    );
    assert!(shown.contains("\n  web  [npm]"), "{shown}");

    // Kept current by the watcher: a new project shows once indexed.
    std::fs::create_dir_all(r("later")).unwrap();
    sh(&r("later"), &format!("{GIT} init -q"));
    util::sync(&inst);
    let again = by_path(&projects(&inst, &[]));
    assert_eq!(strings(&again[&s("later")]["kinds"]), vec!["git"]);
    assert_eq!(again[&s("later")]["branch"], "main");

    // Nothing found: exit 1; a path outside every root: a clear error.
    let none = inst.fsctl(&["projects", &s("plain")]);
    assert_eq!(none.status.code(), Some(1), "{}", text(&none));
    assert!(text(&none).contains("no projects found"), "{}", text(&none));
    let outside = inst.fsctl(&["projects", t.path().to_str().unwrap()]);
    assert_eq!(outside.status.code(), Some(2), "{}", text(&outside));
    assert!(
        text(&outside).contains("not under any root"),
        "{}",
        text(&outside)
    );
}

#[test]
fn machine_wide_projects_are_only_those_in_folders_the_caller_can_open() {
    let Some((t, root)) = system_tree() else {
        return;
    };
    write_file(&root, "pub/app/Cargo.toml", b"[package]\nname = \"app\"\n");
    write_file(&root, "pub/app/src/main.rs", b"fn main() {}\n");
    write_file(
        &root,
        "priv/zqsecret/Cargo.toml",
        b"[package]\nname = \"s\"\n",
    );
    std::fs::create_dir_all(root.join("pub/repo")).unwrap();
    sh(&root.join("pub/repo"), &format!("{GIT} init -q -b trunk"));
    change("chmod", &["-R", "a+rX"], &root);
    // Someone else's folder, closed to others.
    let private = root.join("priv");
    change("chown", &["-R", "12345:12345"], &private);
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    // A repository whose git folder is someone else's and closed.
    let git = root.join("pub/repo/.git");
    change("chown", &["-R", "12345:12345"], &git);
    std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o700)).unwrap();

    let (inst, visitor) = start_system(t.path(), &root);
    let s = |p: &str| root.join(p).to_str().unwrap().to_owned();
    // The daemon's owner sees every project and every branch.
    let all = by_path(&projects(&inst, &[]));
    assert!(all.contains_key(&s("priv/zqsecret")), "{all:#?}");
    assert_eq!(all[&s("pub/repo")]["branch"], "trunk");
    // The visitor: not the closed folder's project, not the closed
    // repository's branch (it is still a project: its `.git` is in sight).
    let o = visitor.run(&["projects", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let seen = by_path(&json_lines(&o));
    assert_eq!(
        seen.keys().cloned().collect::<Vec<_>>(),
        vec![s("pub/app"), s("pub/repo")],
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("zqsecret"));
    assert_eq!(seen[&s("pub/repo")]["branch"], Value::Null);
    let (bytes, _) = util::gnu_du(&visitor.runner, &root.join("pub/app"));
    assert_eq!(seen[&s("pub/app")]["bytes"], bytes);
    // Asked by the closed folder's path: as if it did not exist.
    let o = visitor.run(&["projects", &s("priv/zqsecret")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}
