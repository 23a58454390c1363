//! 7z archives (issue 32): members by name and the text members' text,
//! listed like the other archives ([`super::archive`]: one block per
//! member, `Path: inner/path` first), decoded in memory by `sevenz-rust2`
//! (LZMA, LZMA2, copy, delta and the BCJ filters; no AES, bzip2 or PPMd).
//! Nothing is ever extracted to disk.
//!
//! A 7z keeps its directory (names, sizes, how each block is compressed)
//! at its end, so a cut archive is refused before anything is decoded.
//! Members are packed in blocks, and in a solid block a member can be
//! decoded only after everything before it in that block. So:
//! - a block is decoded only when it holds a text member, and only up to
//!   its last one (the rest of the block is never decoded);
//! - the bytes that must be decoded (every member before the last text
//!   member of each such block, in full, and the text members as far as
//!   they are read) are summed from the sizes the directory declares and
//!   checked against [`Limits::max_unzipped_bytes`] before any block is
//!   decoded, and every byte that comes out is counted against it again
//!   (a member cannot give more than it declares: the crate bounds it);
//! - a decoder's dictionary is capped at [`DICTIONARY_LIMIT`];
//! - a block encrypted with a password is never decoded: its members are
//!   listed with `[not read: encrypted]`; an archive whose directory is
//!   encrypted too cannot even be listed, and is a parse failure saying so;
//! - a block compressed with a method not built in (PPMd, bzip2, ...), or
//!   damaged, lists its members with that reason.

use super::archive::{Listing, Reading, too_many, what_to_read};
use crate::{Failure, Limits};
use sevenz_rust2::{Archive, BlockDecoder, EncoderMethod, Error, Password};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read};

/// The largest dictionary (or header buffer) a decoder may allocate: 128
/// MiB, twice what `7z -mx9` uses, well inside the sandboxed child's 1 GiB.
pub const DICTIONARY_LIMIT: usize = 128 << 20;

/// True for a 7z signature.
pub fn is_7z(head: &[u8]) -> bool {
    head.starts_with(&[b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c])
}

pub(super) fn extract(file: File, limits: &Limits, out: &mut Listing<'_>) -> Result<(), Failure> {
    let mut src = BufReader::new(file);
    let password = Password::empty();
    let archive = Archive::read_with_memory_limit(&mut src, &password, DICTIONARY_LIMIT >> 10)
        .map_err(|e| match e {
            Error::MaxMemLimited { actaul_kb, .. } => too_much_memory(actaul_kb),
            e if is_encryption(&e) => Failure::Parse(
                "encrypted 7z: its member names are encrypted too, nothing can be listed".into(),
            ),
            e => Failure::Parse(format!("not a readable 7z archive: {e}")),
        })?;
    let files = &archive.files;
    if files.len() > limits.max_zip_members {
        return Err(too_many(files.len(), limits));
    }
    let block_of = |i: usize| {
        archive
            .stream_map
            .file_block_index
            .get(i)
            .copied()
            .flatten()
    };

    // What is read of each member; which blocks are decoded, and how far.
    let mut reading: Vec<Reading> = Vec::with_capacity(files.len());
    let mut last_text: HashMap<usize, usize> = HashMap::new();
    for (i, f) in files.iter().enumerate() {
        let read = if f.is_directory() {
            Reading::Name
        } else if f.has_stream() && archive.is_file_encrypted(i) {
            Reading::Skip("encrypted")
        } else {
            what_to_read(f.name())
        };
        if let (Reading::Text(_), Some(b)) = (read, block_of(i))
            && f.has_stream()
        {
            last_text.insert(b, i);
        }
        reading.push(read);
    }
    let mut declared = 0u64;
    for (&b, &last) in &last_text {
        let start = archive.stream_map.block_first_file_index[b];
        for (i, f) in files.iter().enumerate().take(last + 1).skip(start) {
            let size = f.size();
            declared = declared.saturating_add(if i == last {
                size.min(limits.max_text_file)
            } else {
                size
            });
        }
    }
    if declared > limits.max_unzipped_bytes {
        return Err(Failure::Bomb(format!(
            "members declare {declared} bytes to decode, limit {}",
            limits.max_unzipped_bytes
        )));
    }

    // Decode: each text member's first bytes, as many as could fill the
    // text cap, kept until the listing below.
    let room = (out.room() as u64).saturating_mul(2).saturating_add(8);
    let want = limits.max_text_file.min(room);
    let mut texts: HashMap<usize, Vec<u8>> = HashMap::new();
    let mut notes: HashMap<usize, String> = HashMap::new();
    let mut decoded = 0u64;
    let mut kept = 0u64;
    let mut blocks: Vec<(usize, usize)> = last_text.into_iter().collect();
    blocks.sort_unstable();
    for (b, last) in blocks {
        if kept >= room {
            break;
        }
        let start = archive.stream_map.block_first_file_index[b];
        let mut i = start;
        let mut over = false;
        let dec = BlockDecoder::new_with_memory_limit(
            1,
            DICTIONARY_LIMIT >> 10,
            b,
            &archive,
            &password,
            &mut src,
        );
        let end = start + dec.entry_count();
        let result = dec.for_each_entries(&mut |_entry, member: &mut dyn Read| {
            let idx = i;
            i += 1;
            if matches!(reading[idx], Reading::Text(_)) && kept < room {
                let mut bytes = Vec::new();
                member.take(want).read_to_end(&mut bytes)?;
                decoded += bytes.len() as u64;
                kept += bytes.len() as u64;
                texts.insert(idx, bytes);
            }
            if idx >= last {
                // The rest of the block is never decoded.
                return Ok(false);
            }
            // A member before a later text member: decoded through, counted.
            let left = limits.max_unzipped_bytes.saturating_sub(decoded);
            let n = io::copy(&mut member.take(left.saturating_add(1)), &mut io::sink())?;
            decoded += n;
            if n > left {
                over = true;
                return Err(io::Error::other("over the decompression budget").into());
            }
            Ok(true)
        });
        match result {
            Ok(_) => {}
            Err(_) if over => {
                return Err(Failure::Bomb(format!(
                    "more than {} bytes decoded",
                    limits.max_unzipped_bytes
                )));
            }
            Err(Error::MaxMemLimited { actaul_kb, .. }) => return Err(too_much_memory(actaul_kb)),
            Err(e) => {
                let why = match e {
                    Error::UnsupportedCompressionMethod(m) => format!("compressed with {m}"),
                    _ => "damaged".to_owned(),
                };
                for (idx, read) in reading.iter().enumerate().take(end).skip(start) {
                    if matches!(read, Reading::Text(_)) {
                        texts.remove(&idx);
                        notes.insert(idx, why.clone());
                    }
                }
            }
        }
    }

    // The listing, in the archive's order.
    let mut n = 0;
    for (idx, f) in files.iter().enumerate() {
        if f.is_directory() {
            continue;
        }
        if out.is_full() {
            break;
        }
        let kind = out.member(n, f.name(), reading[idx]);
        n += 1;
        if let Some(why) = notes.get(&idx) {
            out.note(why);
        } else if let (Some(kind), Some(bytes)) = (kind, texts.get(&idx)) {
            // Reading from memory cannot fail.
            let _ = out.read_text(&bytes[..], kind, limits);
        }
    }
    Ok(())
}

fn too_much_memory(kb: usize) -> Failure {
    Failure::Bomb(format!(
        "decoding needs {} MiB, limit {} MiB",
        kb >> 10,
        DICTIONARY_LIMIT >> 20
    ))
}

/// True for the error of a block or directory encrypted with a password
/// (the AES coder is not built in, so it reads as an unknown method).
fn is_encryption(e: &Error) -> bool {
    match e {
        Error::PasswordRequired | Error::MaybeBadPassword(_) => true,
        Error::UnsupportedCompressionMethod(m) => {
            m.contains("AES") || m.as_bytes() == EncoderMethod::ID_AES256_SHA256
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kind;
    use std::process::Command;

    /// Builds `name` with the `7z` CLI from `members` (name, text) in a
    /// temp folder, with extra switches; None when 7z is not installed.
    fn seven_z(members: &[(&str, &[u8])], switches: &[&str]) -> Option<Vec<u8>> {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        for (name, data) in members {
            let p = src.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, data).unwrap();
        }
        let out = dir.path().join("a.7z");
        let ok = Command::new("7z")
            .arg("a")
            .arg("-bd")
            .args(switches)
            .arg(&out)
            .arg(".")
            .current_dir(&src)
            .output()
            .ok()?;
        assert!(
            ok.status.success(),
            "{}",
            String::from_utf8_lossy(&ok.stderr)
        );
        Some(std::fs::read(out).unwrap())
    }

    fn read(bytes: &[u8], limits: &Limits) -> Result<String, Failure> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.7z");
        std::fs::write(&p, bytes).unwrap();
        crate::extract_file(&p, Kind::Archive, limits).map(|e| e.text)
    }

    #[test]
    fn a_solid_7z_lists_its_members_and_reads_the_text_ones() {
        let Some(a) = seven_z(
            &[
                ("notes/kelp.txt", b"kelp forest\n"),
                ("photo.jpg", b"\xff\xd8 not text"),
                ("z.md", b"# Sea urchin\n"),
            ],
            &["-ms=on"],
        ) else {
            eprintln!("skipped: no 7z CLI (tests/setup.sh installs p7zip-full)");
            return;
        };
        let text = read(&a, &Limits::default()).unwrap();
        assert!(text.contains("Path: notes/kelp.txt\nkelp forest"), "{text}");
        assert!(text.contains("Path: photo.jpg"), "{text}");
        assert!(!text.contains("not text"), "{text}");
        assert!(text.contains("Path: z.md\n# Sea urchin"), "{text}");
        // Behind 100 kB of other members, over a 50 kB budget: a bomb.
        let big = vec![b'x'; 100_000];
        let a = seven_z(&[("a.bin", &big), ("b.txt", b"late\n")], &["-ms=on"]).unwrap();
        let small = Limits {
            max_unzipped_bytes: 50_000,
            ..Limits::default()
        };
        let e = read(&a, &small).unwrap_err();
        assert!(matches!(e, Failure::Bomb(_)), "{e}");
        assert!(read(&a, &Limits::default()).unwrap().contains("late"));
        // A method not built in: listed with it.
        let a = seven_z(&[("p.txt", b"ppmd text\n")], &["-m0=PPMd"]).unwrap();
        let text = read(&a, &Limits::default()).unwrap();
        assert!(
            text.starts_with("Path: p.txt\n[not read: compressed with "),
            "{text}"
        );
        // Cut: the directory at its end is gone.
        let e = read(&a[..a.len() / 2], &Limits::default()).unwrap_err();
        assert!(matches!(e, Failure::Parse(_)), "{e}");
    }

    #[test]
    fn an_encrypted_7z_lists_its_names_or_says_it_cannot() {
        let Some(a) = seven_z(&[("secret.txt", b"platypus\n")], &["-phunter2", "-mhe=off"]) else {
            return;
        };
        let text = read(&a, &Limits::default()).unwrap();
        assert_eq!(text, "Path: secret.txt\n[not read: encrypted]");
        let a = seven_z(&[("secret.txt", b"platypus\n")], &["-phunter2", "-mhe=on"]).unwrap();
        let e = read(&a, &Limits::default()).unwrap_err();
        assert!(
            matches!(&e, Failure::Parse(m) if m.contains("encrypted")),
            "{e}"
        );
    }
}
