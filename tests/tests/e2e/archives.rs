//! Archives end to end (issue 32): zip, tar, tar.gz, tar.zst and 7z archives
//! the test builds with Python's `zipfile` and `tarfile`, the `zip` CLI
//! (a password-protected member), the `zstd` CLI and the `7z` CLI
//! (p7zip-full: solid, encrypted, a bomb), from member names and
//! text it chose. The oracle is that choice: `content:` finds each member
//! holding the word, shown as `archive/inner/path`; hostile archives (a zip
//! bomb inside a tar, a gzip bomb, `../` names, 100,000 members, cut
//! archives, an encrypted member) are counted as not read or listed with
//! the reason, with no memory failure and nothing written beside them.

use crate::content::run_python;
use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::media::found;
use crate::util::poll_until;

/// Builds the archives under `root` (argv[1]): `good/` (read) and
/// `hostile/` (refused or partly read). Writes nothing else.
const MAKE_ARCHIVES: &str = r#"
import io, os, subprocess, sys, tarfile, zipfile
root = sys.argv[1]
good, bad = root + '/good', root + '/hostile'
os.makedirs(good); os.makedirs(bad)
def tar_add(t, name, data):
    info = tarfile.TarInfo(name); info.size = len(data); info.mtime = 1700000000
    t.addfile(info, io.BytesIO(data))
with zipfile.ZipFile(good + '/notes.zip', 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('inner/todo.txt', 'buy milk and quinoa\n')
    z.writestr('inner/plans.md', '# Plans\n\nVisit the lighthouse on Sunday.\n')
    z.writestr('inner/page.html', '<html><body><p>Gannet colony</p><script>var xyzzyscript;</script></body></html>')
    z.writestr('photo.jpg', b'\xff\xd8\xff\xe0 flamingo \x00\x01')
    z.writestr('inner/', '')
def tarball(path, mode, members):
    with tarfile.open(path, mode) as t:
        for name, data in members:
            tar_add(t, name, data)
tarball(good + '/docs.tar', 'w', [('docs/guide.txt', b'The walrus guide.\n'), ('docs/sub dir/notes.txt', 'Caf\u00e9 with the walrus.\n'.encode())])
tarball(good + '/docs.tgz', 'w:gz', [('pelican.txt', b'A pelican ate a fish.\n')])
tarball(good + '/docs.tar.gz', 'w:gz', [('deep/a/b/heron.txt', b'The heron waits.\n')])
tarball(root + '/plain.tar', 'w', [('narwhal.txt', b'One narwhal tusk.\n')])
subprocess.run(['zstd', '-q', '--rm', root + '/plain.tar', '-o', good + '/docs.tar.zst'], check=True)
# A password-protected member beside a plain one, by Info-ZIP's zip.
os.makedirs(root + '/z'); open(root + '/z/secret.txt', 'w').write('the vault holds platypus\n')
open(root + '/z/open.txt', 'w').write('an open wombat\n')
subprocess.run(['zip', '-q', '-P', 'hunter2', good + '/locked.zip', 'secret.txt'], cwd=root + '/z', check=True)
subprocess.run(['zip', '-q', good + '/locked.zip', 'open.txt'], cwd=root + '/z', check=True)
for f in os.listdir(root + '/z'): os.remove(root + '/z/' + f)
os.rmdir(root + '/z')
# A zip bomb (one member of 300 MiB of zeros) inside a tar, beside a text member.
zb = io.BytesIO()
with zipfile.ZipFile(zb, 'w', zipfile.ZIP_DEFLATED) as z:
    with z.open('zeros.txt', 'w', force_zip64=True) as w:
        chunk = b'\0' * (1 << 20)
        for _ in range(300): w.write(chunk)
tarball(bad + '/bomb-inside.tar', 'w', [('bomb.zip', zb.getvalue()), ('otter.txt', b'A sea otter floats.\n')])
# A gzip bomb: a tar.gz whose one member is 300 MiB of zeros.
with tarfile.open(bad + '/bomb.tar.gz', 'w:gz') as t:
    info = tarfile.TarInfo('zeros.txt'); info.size = 300 << 20
    class Zeros(io.RawIOBase):
        def readable(self): return True
        def readinto(self, b):
            b[:] = bytes(len(b)); return len(b)
    t.addfile(info, io.BufferedReader(Zeros()))
# Names that leave the archive, beside a fair one.
tarball(bad + '/escape.tar', 'w', [('../../evil.txt', b'mongoose\n'), ('/etc/cron.txt', b'mongoose\n'), ('fair.txt', b'A marmot.\n')])
# 100,000 members, as a zip and as a tar.gz.
with zipfile.ZipFile(bad + '/many.zip', 'w', zipfile.ZIP_STORED) as z:
    for i in range(100000): z.writestr('m%d.txt' % i, '')
tarball(bad + '/many.tar.gz', 'w:gz', [('m%d.txt' % i, b'') for i in range(100000)])
# Cut archives.
raw = open(good + '/notes.zip', 'rb').read(); open(bad + '/cut.zip', 'wb').write(raw[:len(raw) // 2])
with tarfile.open(bad + '/big.tar.gz', 'w:gz') as t:
    tar_add(t, 'a.txt', os.urandom(200000).hex().encode())
    tar_add(t, 'b.txt', b'wolverine\n')
raw = open(bad + '/big.tar.gz', 'rb').read(); open(bad + '/cut.tar.gz', 'wb').write(raw[:len(raw) // 2])
os.remove(bad + '/big.tar.gz')
# 7z, by the 7z CLI: a solid archive; one whose contents are encrypted
# (names listed) and one whose names are too; a bomb (a text member behind
# 300 MiB of zeros in one solid block); a cut one.
def seven(path, files, *switches):
    subprocess.run(['7z', 'a', '-bd', '-bso0', '-mx1', *switches, path, *files], cwd=root + '/s', check=True)
def fresh(members):
    os.makedirs(root + '/s')
    for name, data in members.items():
        os.makedirs(os.path.dirname(root + '/s/' + name), exist_ok=True)
        open(root + '/s/' + name, 'wb').write(data)
def gone():
    subprocess.run(['rm', '-r', root + '/s'], check=True)
fresh({'log/ibis.txt': b'A scarlet ibis.\n', 'readme.md': b'# Quokka notes\n', 'pic.jpg': b'\xff\xd8 toucan \x00'})
seven(good + '/notes.7z', ['log', 'readme.md', 'pic.jpg'], '-ms=on')
seven(good + '/locked.7z', ['log/ibis.txt'], '-phunter2', '-mhe=off')
seven(bad + '/names-locked.7z', ['log/ibis.txt'], '-phunter2', '-mhe=on')
gone()
# (7z orders a solid block by name; -ms=2g keeps both in one block.)
fresh({'a-zeros.bin': b'', 'z-otter.txt': b'A river otter dives.\n'})
with open(root + '/s/a-zeros.bin', 'wb') as f:
    for _ in range(300): f.write(bytes(1 << 20))
seven(bad + '/bomb.7z', ['a-zeros.bin', 'z-otter.txt'], '-ms=2g')
gone()
raw = open(good + '/notes.7z', 'rb').read(); open(bad + '/cut.7z', 'wb').write(raw[:len(raw) - 40])
"#;

/// Every file under `dir`, by the test's own walk.
fn walk(dir: &Path) -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            all.extend(walk(&p));
        } else {
            all.insert(p.display().to_string());
        }
    }
    all
}

#[test]
fn archive_members_are_found_by_path_and_text_inside_their_archive_and_hostile_ones_are_refused_with_a_reason()
 {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    run_python(MAKE_ARCHIVES, &[&tree]);
    let files_before = walk(&tree);
    let inst = crate::content::started_with_content(t.path(), &tree);
    let folder = crate::content::settled(&inst, &tree, 18);
    // Read: notes.zip, docs.tar, docs.tgz, docs.tar.gz, docs.tar.zst,
    // locked.zip, bomb-inside.tar, escape.tar, notes.7z, locked.7z.
    // Refused: the gzip and 7z bombs and the two 100,000-member archives
    // (bomb), the cut ones and the 7z with encrypted names (parse).
    assert_eq!(folder["indexed"], 10, "{folder:#}");
    assert_eq!(folder["failed"]["bomb"], 4, "{folder:#}");
    assert_eq!(folder["failed"]["parse"], 4, "{folder:#}");
    assert!(folder["failed"].get("memory").is_none(), "{folder:#}");
    assert!(folder["failed"].get("timeout").is_none(), "{folder:#}");
    // Nothing was unpacked beside the archives.
    assert_eq!(walk(&tree), files_before);

    let p = |rel: &str| tree.join(rel).display().to_string();
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("content:milk", vec![p("good/notes.zip/inner/todo.txt")]),
        (
            "content:lighthouse",
            vec![p("good/notes.zip/inner/plans.md")],
        ),
        ("content:gannet", vec![p("good/notes.zip/inner/page.html")]),
        // A member's path words find it; a photo is found by name only.
        ("content:flamingo", vec![]),
        ("content:xyzzyscript", vec![]),
        ("content:todo", vec![p("good/notes.zip/inner/todo.txt")]),
        ("content:photo", vec![p("good/notes.zip/photo.jpg")]),
        (
            "content:walrus",
            vec![
                p("good/docs.tar/docs/guide.txt"),
                p("good/docs.tar/docs/sub dir/notes.txt"),
            ],
        ),
        (
            "content:cafe",
            vec![p("good/docs.tar/docs/sub dir/notes.txt")],
        ),
        ("content:pelican", vec![p("good/docs.tgz/pelican.txt")]),
        (
            "content:heron",
            vec![p("good/docs.tar.gz/deep/a/b/heron.txt")],
        ),
        ("content:narwhal", vec![p("good/docs.tar.zst/narwhal.txt")]),
        // The encrypted member is listed, never read; its neighbour is.
        ("content:platypus", vec![]),
        ("content:secret", vec![p("good/locked.zip/secret.txt")]),
        ("content:wombat", vec![p("good/locked.zip/open.txt")]),
        // The zip inside the tar is named, not opened; the tar is read.
        (
            "content:otter",
            vec![p("hostile/bomb-inside.tar/otter.txt")],
        ),
        ("content:bomb", vec![p("hostile/bomb-inside.tar/bomb.zip")]),
        // Names leaving the archive: neither shown nor read.
        ("content:mongoose", vec![]),
        ("content:evil", vec![]),
        ("content:marmot", vec![p("hostile/escape.tar/fair.txt")]),
        ("content:wolverine", vec![]),
        // 7z: text members by path and text, a photo by name only; the
        // encrypted one by name; the bomb's otter never.
        (
            "content:ibis",
            vec![
                p("good/notes.7z/log/ibis.txt"),
                p("good/locked.7z/log/ibis.txt"),
            ],
        ),
        ("content:quokka", vec![p("good/notes.7z/readme.md")]),
        ("content:pic", vec![p("good/notes.7z/pic.jpg")]),
        ("content:toucan", vec![]),
        ("content:scarlet", vec![p("good/notes.7z/log/ibis.txt")]),
        ("content:river", vec![]),
    ];
    for (q, want) in &cases {
        let want: BTreeSet<String> = want.iter().cloned().collect();
        assert_eq!(found(&inst, q), want, "`{q}`");
    }

    // Why a member was not read, in the archive's text.
    let text = |rel: &str| {
        let out = inst.fsctl(&["cat", &p(rel)]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let locked = text("good/locked.zip");
    assert!(
        locked.contains("Path: secret.txt\n[not read: encrypted]"),
        "{locked}"
    );
    let inside = text("hostile/bomb-inside.tar");
    assert!(
        inside.contains("Path: bomb.zip\n[not read: an archive inside an archive]"),
        "{inside}"
    );
    let locked7 = text("good/locked.7z");
    assert!(
        locked7.contains("Path: log/ibis.txt\n[not read: encrypted]")
            && !locked7.contains("scarlet"),
        "{locked7}"
    );
    let escape = text("hostile/escape.tar");
    assert!(
        escape.contains("Path: (member 1)\n[not read: its name leaves the archive]")
            && escape.contains("Path: (member 2)\n[not read: its name leaves the archive]")
            && !escape.contains("evil")
            && !escape.contains("mongoose"),
        "{escape}"
    );
    // Why an archive was not read, with its reason.
    for (rel, says) in [
        ("hostile/bomb.tar.gz", "bytes decompressed"),
        ("hostile/many.zip", "members"),
        ("hostile/many.tar.gz", "members"),
        ("hostile/cut.zip", "zip"),
        ("hostile/cut.tar.gz", "cut short"),
        ("hostile/bomb.7z", "bytes to decode"),
        ("hostile/cut.7z", "7z"),
        ("hostile/names-locked.7z", "encrypted"),
    ] {
        let out = inst.fsctl(&["cat", &p(rel)]);
        assert!(!out.status.success(), "{rel}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{rel}: {err}");
    }

    // --json: the member's path, and where it is inside.
    let out = inst.fsctl(&["--json", "search", "content:pelican"]);
    let lines: Vec<Value> = crate::util::json_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let hit = &lines[0];
    assert_eq!(hit["path"], p("good/docs.tgz/pelican.txt"), "{hit}");
    assert_eq!(hit["container"], p("good/docs.tgz"), "{hit}");
    assert_eq!(hit["inside"], "pelican.txt", "{hit}");
    assert!(
        hit["snippet"].as_str().unwrap().contains("**pelican**"),
        "{hit}"
    );

    // A changed archive is read again; a deleted one drops its members.
    run_python(
        r#"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1] + '/good/notes.zip', 'w') as z:
    z.writestr('inner/todo.txt', 'buy oats\n')
"#,
        &[&tree],
    );
    std::fs::remove_file(tree.join("good/docs.tar")).unwrap();
    let ok = poll_until(std::time::Duration::from_secs(60), || {
        found(&inst, "content:oats") == BTreeSet::from([p("good/notes.zip/inner/todo.txt")])
            && found(&inst, "content:walrus").is_empty()
    });
    assert!(ok, "the changed and deleted archives were not re-read");
    assert!(found(&inst, "content:quinoa").is_empty());
    assert!(found(&inst, "content:lighthouse").is_empty());
}
