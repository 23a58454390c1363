//! Finder tags: macOS keeps a file's tags in the extended attribute
//! `com.apple.metadata:_kMDItemUserTags`, a binary property list
//! (`bplist00`) holding an array of strings, each a tag's name and, after a
//! newline, the number of its colour (`"Red\n6"`; no colour: the name
//! alone).
//!
//! A decoder of just what that attribute holds (the trailer, the offset
//! table, an array, ASCII and UTF-16 strings, and the integers that carry
//! long lengths), about a hundred lines with every length and offset
//! checked against the input, rather than the `plist` crate, which would
//! bring XML and serde support and three more crates for one array of
//! strings. It is platform-neutral, so it is tested here on Linux against
//! plists written by Python's `plistlib`; files are read with it only on
//! macOS ([`super::tags`]).

/// The extended attribute Finder writes.
pub const ATTRIBUTE: &str = "com.apple.metadata:_kMDItemUserTags";

/// Finder's colours by number (0: none).
pub const COLOURS: [&str; 8] = [
    "", "gray", "green", "purple", "blue", "yellow", "red", "orange",
];

/// At most this many tags are taken from one file.
pub const MAX_TAGS: usize = 256;

/// One Finder tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinderTag {
    pub name: String,
    /// Its colour's name, when it has one.
    pub colour: Option<&'static str>,
}

/// A big-endian unsigned integer of 1 to 8 bytes.
fn be(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() || bytes.len() > 8 {
        return None;
    }
    Some(bytes.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b)))
}

fn index(bytes: &[u8]) -> Option<usize> {
    usize::try_from(be(bytes)?).ok()
}

struct Plist<'a> {
    /// The objects (the trailer cut off).
    data: &'a [u8],
    offsets: Vec<usize>,
    ref_size: usize,
}

impl Plist<'_> {
    /// An object's marker byte and where its body starts.
    fn object(&self, i: usize) -> Option<(u8, usize)> {
        let at = *self.offsets.get(i)?;
        Some((*self.data.get(at)?, at + 1))
    }

    /// A count from a marker's low nibble, or from the integer object that
    /// follows when the nibble is 0xF; and where the body goes on.
    fn count(&self, nibble: u8, at: usize) -> Option<(usize, usize)> {
        if nibble != 0xF {
            return Some((usize::from(nibble), at));
        }
        let m = *self.data.get(at)?;
        if m >> 4 != 0x1 || m & 0xF > 3 {
            return None;
        }
        let n = 1usize << (m & 0xF);
        let body = at + 1;
        let v = index(self.data.get(body..body.checked_add(n)?)?)?;
        Some((v, body + n))
    }

    fn array(&self, i: usize) -> Option<Vec<usize>> {
        let (m, at) = self.object(i)?;
        if m >> 4 != 0xA {
            return None;
        }
        let (n, at) = self.count(m & 0xF, at)?;
        let bytes = self
            .data
            .get(at..at.checked_add(n.checked_mul(self.ref_size)?)?)?;
        bytes.chunks(self.ref_size).map(index).collect()
    }

    fn string(&self, i: usize) -> Option<String> {
        let (m, at) = self.object(i)?;
        let (n, at) = self.count(m & 0xF, at)?;
        match m >> 4 {
            // ASCII.
            0x5 => {
                let b = self.data.get(at..at.checked_add(n)?)?;
                Some(b.iter().map(|&c| char::from(c)).collect())
            }
            // UTF-16, big-endian; `n` counts code units.
            0x6 => {
                let b = self.data.get(at..at.checked_add(n.checked_mul(2)?)?)?;
                let units: Vec<u16> = b
                    .chunks_exact(2)
                    .map(|c| u16::from_be_bytes([c[0], c[1]]))
                    .collect();
                Some(String::from_utf16_lossy(&units))
            }
            _ => None,
        }
    }
}

/// The tags in the attribute's value, in order; `None` when it is not a
/// binary property list holding an array of strings.
pub fn decode(data: &[u8]) -> Option<Vec<FinderTag>> {
    if data.len() < 8 + 32 || !data.starts_with(b"bplist0") {
        return None;
    }
    let (objects, t) = data.split_at(data.len() - 32);
    let offset_size = usize::from(t[6]);
    let ref_size = usize::from(t[7]);
    let count = index(&t[8..16])?;
    let top = index(&t[16..24])?;
    let table = index(&t[24..32])?;
    if !(1..=8).contains(&offset_size) || !(1..=8).contains(&ref_size) || top >= count {
        return None;
    }
    let table_bytes = objects.get(table..table.checked_add(count.checked_mul(offset_size)?)?)?;
    let offsets = table_bytes
        .chunks(offset_size)
        .map(index)
        .collect::<Option<Vec<usize>>>()?;
    let p = Plist {
        data: objects,
        offsets,
        ref_size,
    };
    let mut tags = Vec::new();
    for r in p.array(top)?.into_iter().take(MAX_TAGS) {
        let s = p.string(r)?;
        let (name, colour) = match s.rsplit_once('\n') {
            Some((name, n)) => (
                name,
                n.trim()
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| COLOURS.get(i).copied())
                    .filter(|c| !c.is_empty()),
            ),
            None => (s.as_str(), None),
        };
        let name = name.trim();
        if !name.is_empty() {
            tags.push(FinderTag {
                name: name.to_owned(),
                colour,
            });
        }
    }
    Some(tags)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Python's plistlib writes for `value` (JSON) as a binary plist.
    fn plistlib(value: &str) -> Vec<u8> {
        let out = std::process::Command::new("python3")
            .args([
                "-c",
                "import json, plistlib, sys; sys.stdout.buffer.write(plistlib.dumps(json.loads(sys.argv[1]), fmt=plistlib.FMT_BINARY))",
                value,
            ])
            .output()
            .expect("python3 (tests/setup.sh installs it)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    fn tag(name: &str, colour: Option<&'static str>) -> FinderTag {
        FinderTag {
            name: name.into(),
            colour,
        }
    }

    #[test]
    fn decodes_what_plistlib_writes() {
        assert_eq!(
            decode(&plistlib(
                r#"["Red\n6", "Work", "Important\n0", "Blue\n4"]"#
            ))
            .unwrap(),
            [
                tag("Red", Some("red")),
                tag("Work", None),
                tag("Important", None),
                tag("Blue", Some("blue"))
            ]
        );
        // Not ASCII: UTF-16 strings.
        assert_eq!(
            decode(&plistlib(r#"["Café\n2", "日本語", "🎉 party"]"#)).unwrap(),
            [
                tag("Café", Some("green")),
                tag("日本語", None),
                tag("🎉 party", None)
            ]
        );
        assert_eq!(decode(&plistlib("[]")).unwrap(), []);
        // Long names and many tags: lengths past 15 follow as integers,
        // and over 255 objects the references take two bytes.
        let long = "a quite long tag name, longer than fifteen";
        let many: Vec<String> = (0..300).map(|i| format!("tag {i}\n{}", i % 8)).collect();
        let mut all = vec![long.to_owned()];
        all.extend(many);
        let json: Vec<String> = all
            .iter()
            .map(|t| format!("\"{}\"", t.replace('\n', "\\n")))
            .collect();
        let got = decode(&plistlib(&format!("[{}]", json.join(",")))).unwrap();
        assert_eq!(got.len(), MAX_TAGS);
        assert_eq!(got[0], tag(long, None));
        assert_eq!(got[8], tag("tag 7", Some("orange")));
        assert_eq!(got[2], tag("tag 1", Some("gray")));
    }

    #[test]
    fn anything_else_is_none_and_nothing_panics() {
        assert_eq!(decode(b""), None);
        assert_eq!(
            decode(b"not a plist at all, but long enough to have a trailer"),
            None
        );
        // A dictionary, a string, a number at the top: not tags.
        for v in [r#"{"a": "b"}"#, r#""Red""#, "7", r#"["a", 1]"#] {
            assert_eq!(decode(&plistlib(v)), None, "{v}");
        }
        // Every truncation and every single byte changed: an answer or
        // None, never a panic or a huge allocation.
        let good = plistlib(r#"["Red\n6", "Work", "Café\n2"]"#);
        for n in 0..good.len() {
            let _ = decode(&good[..n]);
        }
        for i in 0..good.len() {
            for b in [0u8, 0x0f, 0x7f, 0xff] {
                let mut bad = good.clone();
                bad[i] = b;
                let _ = decode(&bad);
            }
        }
    }
}
