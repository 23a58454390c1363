//! Outlook `.msg` messages end to end (issue 32). The test writes each
//! message itself as [MS-OXMSG] lays it out (an OLE compound file, through
//! the `cfb` crate: property streams, the properties table, recipient
//! storages), with a subject, people, date and body it chose; Python's
//! `extract_msg` (PyPI) reads every file back first, so the files are
//! messages as another reader sees them. The oracle is the test's choice:
//! `content:` finds a message by each of its words, `fsctl cat` shows its
//! headers as an `.eml`'s are shown, and hostile files (not a compound
//! file, a compound file that holds no message, a cut message) are counted
//! as not read with a reason.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::media::found;

/// One message as the test writes it.
struct Msg {
    subject: &'static str,
    from: (&'static str, &'static str),
    to: (&'static str, &'static str),
    cc: (&'static str, &'static str),
    /// Unix seconds, sent.
    sent: u64,
    body: &'static str,
    /// 8-bit strings (`001E`, Windows-1252) instead of UTF-16 (`001F`).
    ansi: bool,
}

fn string_stream(
    cf: &mut cfb::CompoundFile<std::fs::File>,
    dir: &str,
    id: u16,
    s: &str,
    ansi: bool,
) {
    let (ty, bytes) = if ansi {
        let (b, _, bad) = encoding_rs::WINDOWS_1252.encode(s);
        assert!(!bad);
        ("001E", b.into_owned())
    } else {
        (
            "001F",
            s.encode_utf16().flat_map(u16::to_le_bytes).collect(),
        )
    };
    let mut w = cf
        .create_stream(format!("{dir}/__substg1.0_{id:04X}{ty}"))
        .unwrap();
    w.write_all(&bytes).unwrap();
}

/// A properties table: `header` bytes, then 16-byte records.
fn props(header: Vec<u8>, records: &[(u32, u64)]) -> Vec<u8> {
    let mut out = header;
    for &(tag, value) in records {
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&6u32.to_le_bytes()); // readable, writable
        out.extend_from_slice(&value.to_le_bytes());
    }
    out
}

fn write_msg(path: &Path, m: &Msg) {
    let mut cf = cfb::create(path).unwrap();
    let root = "";
    string_stream(&mut cf, root, 0x001A, "IPM.Note", m.ansi);
    string_stream(&mut cf, root, 0x0037, m.subject, m.ansi);
    string_stream(&mut cf, root, 0x0C1A, m.from.0, m.ansi);
    string_stream(&mut cf, root, 0x0C1F, m.from.1, m.ansi);
    string_stream(&mut cf, root, 0x5D01, m.from.1, m.ansi);
    string_stream(&mut cf, root, 0x0E04, m.to.0, m.ansi);
    string_stream(&mut cf, root, 0x0E03, m.cc.0, m.ansi);
    string_stream(&mut cf, root, 0x1000, m.body, m.ansi);
    // The message's table: 32-byte header (next recipient and attachment
    // ids, recipient and attachment counts), then PR_CLIENT_SUBMIT_TIME
    // and PR_MESSAGE_DELIVERY_TIME as FILETIMEs.
    let filetime = (m.sent + 11_644_473_600) * 10_000_000;
    let mut header = vec![0u8; 8];
    for n in [2u32, 0, 2, 0] {
        header.extend_from_slice(&n.to_le_bytes());
    }
    header.extend_from_slice(&[0u8; 8]);
    let table = props(header, &[(0x0039_0040, filetime), (0x0E06_0040, filetime)]);
    cf.create_stream("/__properties_version1.0")
        .unwrap()
        .write_all(&table)
        .unwrap();
    cf.create_storage("/__nameid_version1.0").unwrap();
    for s in ["00020102", "00030102", "00040102"] {
        cf.create_stream(format!("/__nameid_version1.0/__substg1.0_{s}"))
            .unwrap();
    }
    for (i, (who, kind)) in [(m.to, 1u64), (m.cc, 2)].into_iter().enumerate() {
        let dir = format!("/__recip_version1.0_#{i:08X}");
        cf.create_storage(&dir).unwrap();
        string_stream(&mut cf, &dir, 0x3001, who.0, m.ansi);
        string_stream(&mut cf, &dir, 0x3003, who.1, m.ansi);
        string_stream(&mut cf, &dir, 0x39FE, who.1, m.ansi);
        string_stream(&mut cf, &dir, 0x3002, "SMTP", m.ansi);
        let table = props(vec![0u8; 8], &[(0x0C15_0003, kind)]);
        cf.create_stream(format!("{dir}/__properties_version1.0"))
            .unwrap()
            .write_all(&table)
            .unwrap();
    }
    cf.flush().unwrap();
}

/// What `extract_msg` reads of each file: subject, sender, to, cc, date
/// (ISO, UTC) and body.
const READ_BACK: &str = r#"
import json, sys, datetime, extract_msg
out = {}
for p in sys.argv[1:]:
    m = extract_msg.openMsg(p)
    d = m.date
    out[p] = dict(subject=m.subject, sender=m.sender, to=m.to, cc=m.cc,
                  date=d.astimezone(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ') if d else None,
                  body=m.body)
    m.close()
print(json.dumps(out))
"#;

const MESSAGES: [(&str, Msg); 2] = [
    (
        "Mail/kelp report.msg",
        Msg {
            subject: "Quarterly kelp report",
            from: ("Ishmael", "ishmael@pequod.example"),
            to: ("Ahab", "ahab@pequod.example"),
            cc: ("Starbuck", "starbuck@pequod.example"),
            sent: 1_709_210_096,
            body: "The harvest doubled.\r\nNarwhal sightings: three.\r\n",
            ansi: false,
        },
    ),
    (
        "Mail/old/menu.msg",
        Msg {
            subject: "Café menu",
            from: ("Queequeg", "queequeg@pequod.example"),
            to: ("Stubb", "stubb@pequod.example"),
            cc: ("Flask", "flask@pequod.example"),
            sent: 946_684_800,
            body: "Chowder at noon, crème brûlée after.\r\n",
            ansi: true,
        },
    ),
];

#[test]
fn outlook_messages_are_found_by_subject_people_and_body_and_hostile_ones_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    let p = |rel: &str| tree.join(rel).display().to_string();
    for (rel, m) in &MESSAGES {
        std::fs::create_dir_all(tree.join(rel).parent().unwrap()).unwrap();
        write_msg(&tree.join(rel), m);
    }
    // The files are messages as extract_msg reads them.
    let out = Command::new("python3")
        .arg("-c")
        .arg(READ_BACK)
        .args(MESSAGES.iter().map(|(rel, _)| p(rel)))
        .output()
        .expect("python3 with extract_msg (tests/setup.sh installs it)");
    assert!(
        out.status.success(),
        "extract_msg: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (rel, m) in &MESSAGES {
        let b = &back[p(rel)];
        assert_eq!(b["subject"], m.subject, "{b}");
        assert!(b["sender"].as_str().unwrap().contains(m.from.1), "{b}");
        assert!(b["to"].as_str().unwrap().contains(m.to.1), "{b}");
        assert!(b["cc"].as_str().unwrap().contains(m.cc.1), "{b}");
        assert_eq!(b["body"].as_str().unwrap(), m.body, "{b}");
    }
    // Hostile: not a compound file; a compound file holding no message (a
    // Word 97 document's shape); a message cut in half.
    std::fs::create_dir_all(tree.join("bad")).unwrap();
    std::fs::write(tree.join("bad/plain.msg"), "just some text, no OLE\n").unwrap();
    let mut cf = cfb::create(tree.join("bad/word.msg")).unwrap();
    cf.create_stream("/WordDocument")
        .unwrap()
        .write_all(b"\xec\xa5 narwhal")
        .unwrap();
    cf.flush().unwrap();
    drop(cf);
    let whole = std::fs::read(tree.join(MESSAGES[0].0)).unwrap();
    std::fs::write(tree.join("bad/cut.msg"), &whole[..whole.len() / 2]).unwrap();

    let inst = crate::content::started_with_content(t.path(), &tree);
    let folder = crate::content::settled(&inst, &tree, 5);
    assert_eq!(folder["indexed"], 2, "{folder:#}");
    assert_eq!(folder["failed"]["parse"], 3, "{folder:#}");

    let kelp = p(MESSAGES[0].0);
    let menu = p(MESSAGES[1].0);
    let cases: Vec<(&str, Vec<&String>)> = vec![
        ("content:quarterly", vec![&kelp]),
        ("content:narwhal", vec![&kelp]),
        ("content:ishmael", vec![&kelp]),
        ("content:starbuck", vec![&kelp]),
        ("content:ahab@pequod.example", vec![&kelp]),
        ("content:cafe", vec![&menu]),
        ("content:brulee", vec![&menu]),
        ("content:queequeg", vec![&menu]),
        ("content:flask", vec![&menu]),
        ("content:pequod", vec![&kelp, &menu]),
    ];
    for (q, want) in &cases {
        let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
        assert_eq!(found(&inst, q), want, "`{q}`");
    }
    // Shown as an .eml is: its headers, then its body (the text keeps no
    // blank lines).
    for (rel, m) in &MESSAGES {
        let out = inst.fsctl(&["cat", &p(rel)]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let date = back[p(rel)]["date"].as_str().unwrap();
        let want = format!(
            "Subject: {}\nFrom: {} <{}>\nTo: {} <{}>\nCc: {} <{}>\nDate: {date}\n{}",
            m.subject,
            m.from.0,
            m.from.1,
            m.to.0,
            m.to.1,
            m.cc.0,
            m.cc.1,
            m.body.replace("\r\n", "\n")
        );
        assert_eq!(text.trim_end(), want.trim_end(), "{rel}");
    }
    for (rel, says) in [
        ("bad/plain.msg", "compound file"),
        ("bad/word.msg", "no subject"),
        ("bad/cut.msg", "Outlook message"),
    ] {
        let out = inst.fsctl(&["cat", &p(rel)]);
        assert!(!out.status.success(), "{rel}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{rel}: {err}");
    }
}
