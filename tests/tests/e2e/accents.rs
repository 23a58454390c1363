//! `accents:ignore` (issue 35): `fsctl search --ignore-accents cafe` finds
//! `café` however it is spelled. The oracle is Python's `unicodedata`:
//! NFD, the combining diacritical marks dropped, a few letters spelled out
//! (æ ae, œ oe, ø o, ł l, đ ð d, þ th, ħ h, ŧ t, ı i, ŀ l), NFC, full case
//! folding, applied to the relative paths of a tree the test wrote (NFC and
//! NFD spellings, capitals, other scripts, names that are not UTF-8) and
//! compared with `fsctl search --json`. Without the switch, search stays
//! exact about accents.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};

use crate::util::{Instance, Runner, diff, json_lines, lossy};

/// Names the test writes (as bytes: some are not UTF-8).
fn names() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = [
        "café.txt",
        "cafe\u{301} noir.txt",
        "CAFÉ/menu.pdf",
        "Cafe/plain.txt",
        "cafeteria.md",
        "Crème Brûlée.jpg",
        "creme brulee.jpg",
        "Ærøskøbing/map.png",
        "Łódź/Żółć.txt",
        "Straße.txt",
        "Œuvre/ÉTÉ.doc",
        "naïve résumé.odt",
        "Ångström.csv",
        "İstanbul.txt",
        "Þórshöfn.txt",
        "Đà Nẵng/phở.txt",
        "Ελληνικά/άλφα.txt",
        "Москва/ёлка.txt",
        "京都/が.txt",
        "plain/ascii.txt",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    // Latin-1 bytes, as an old archive leaves them: not UTF-8.
    v.push(b"caf\xe9 latin1.txt".to_vec());
    v.push(b"bad\xff\xfe/r\xe9sum\xe9".to_vec());
    v
}

/// Terms typed, each searched alone with and without the switch.
const TERMS: &[&str] = &[
    "cafe",
    "café",
    "CAFE\u{301}",
    "creme brulee",
    "crème",
    "aeroskobing",
    "lodz",
    "zolc",
    "strasse",
    "oeuvre",
    "ete",
    "naive",
    "resume",
    "angstrom",
    "istanbul",
    "thorshofn",
    "da nang",
    "pho",
    "αλφα",
    "елка",
    "か",
    "が",
    "caf",
    "e",
    "cafe/",
    "/menu",
    "caf\u{fffd}",
];

/// The oracle: which relative paths (display form) hold every bare term.
const ORACLE: &str = r#"
import json, sys, unicodedata
SPELLED = {"æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d",
           "þ": "th", "ħ": "h", "ŧ": "t", "ı": "i", "ŀ": "l"}
ACCENT_BLOCKS = [(0x0300, 0x036F), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF),
                 (0x20D0, 0x20FF), (0xFE20, 0xFE2F)]
def accent(c):
    return any(a <= ord(c) <= b for a, b in ACCENT_BLOCKS)
def fold(s):
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", s).casefold())
def bare(s):
    d = unicodedata.normalize("NFD", fold(s))
    return unicodedata.normalize("NFC", "".join(SPELLED.get(c, c) for c in d if not accent(c)))
req = json.load(sys.stdin)
out = {}
for term in req["terms"]:
    for ignore in (False, True):
        f = bare if ignore else fold
        t = f(term)
        out[("true" if ignore else "false") + ":" + term] = [p for p in req["paths"] if t in f(p)]
json.dump(out, sys.stdout)
"#;

#[test]
fn ignoring_accents_matches_pythons_unicodedata_folding() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    for n in names() {
        let path = tree.join(std::ffi::OsStr::from_bytes(&n));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"x").unwrap();
    }
    // Every relative path under the tree, in its display form (invalid
    // bytes as U+FFFD), from the test's own walk.
    let mut rel = BTreeSet::new();
    let mut stack = vec![tree.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            rel.insert(lossy(
                &p.as_os_str().as_bytes()[tree.as_os_str().len() + 1..],
            ));
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    let request = serde_json::json!({ "terms": TERMS, "paths": rel });
    let mut py = Command::new("python3")
        .args(["-c", ORACLE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    py.stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    let out = py.wait_with_output().unwrap();
    assert!(out.status.success(), "the oracle failed");
    let want: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    let root = format!("{}/", tree.display());
    let mut widened = 0;
    for term in TERMS {
        for ignore in [false, true] {
            let mut args = vec!["search", "--json"];
            if ignore {
                args.push("--ignore-accents");
            }
            args.push(term);
            let o = inst.fsctl(&args);
            assert!(
                o.status.code() == Some(0) || o.status.code() == Some(1),
                "fsctl {args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let got: BTreeSet<Vec<u8>> = json_lines(&o)
                .iter()
                .map(|v| {
                    let p = v["path"].as_str().unwrap();
                    p.strip_prefix(&root).unwrap_or(p).as_bytes().to_vec()
                })
                .collect();
            let expected: BTreeSet<Vec<u8>> = want[format!("{ignore}:{term}")]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().as_bytes().to_vec())
                .collect();
            assert_eq!(
                got,
                expected,
                "{term:?} ignore_accents={ignore}:\n{}",
                diff(&expected, &got)
            );
            if ignore {
                let exact = want[format!("false:{term}")].as_array().unwrap().len();
                widened += usize::from(expected.len() > exact);
            }
        }
    }
    // The switch changed the answer for most terms (the test would pass
    // vacuously if the oracle and the daemon both ignored it).
    assert!(widened >= 15, "only {widened} terms widened");
    // The word, the same in the query itself (what MCP agents and fsgui
    // send), and a bad value refused with a pointer to the fix.
    let a = inst.search0(&["--ignore-accents", "cafe"]);
    let b = inst.search0(&["cafe accents:ignore"]);
    assert_eq!(a, b);
    assert!(a.len() >= 6, "{a:?}");
    let bad = inst.fsctl(&["search", "cafe", "accents:sometimes"]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("accents:sometimes") && err.contains("accents: takes `ignore`"),
        "{err}"
    );
    // MCP agents write it into find_files' query: the same answer.
    let mcp = super::mcp::Mcp::start(&inst, &tree, &[]);
    let found = mcp.ok(
        "find_files",
        serde_json::json!({"query": "cafe accents:ignore", "limit": 1000}),
    );
    let via_mcp: BTreeSet<Vec<u8>> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["path"].as_str().unwrap().as_bytes().to_vec())
        .collect();
    let via_cli: BTreeSet<Vec<u8>> = a.iter().map(|p| lossy(p).into_bytes()).collect();
    assert_eq!(via_mcp, via_cli, "find_files with accents:ignore");
    drop(mcp);
    // Byte-exact paths of names that are not UTF-8 come back whole.
    let latin1 = inst.search0(&["--ignore-accents", "sum"]);
    assert!(
        latin1
            .iter()
            .any(|p| p.ends_with(b"bad\xff\xfe/r\xe9sum\xe9")),
        "{latin1:?}"
    );
}
