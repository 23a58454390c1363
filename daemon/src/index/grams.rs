//! The trigram filter over the name arena: per block of [`GRAM_BLOCK`] ids,
//! a hashed set of the trigrams of its names, so that a term of 3+ bytes is
//! only searched for in the blocks that hold all of its trigrams.

use crate::index::fold::strip_accents_bytes;
use crate::index::snapshot::SEP;

/// Entries per block of the trigram filter (see [`Snapshot::grams`]).
pub(crate) const GRAM_BLOCK: usize = 64;
/// log2 of the bits per block in the trigram filter: 2,048 bits for 64
/// names (4 bytes an entry). At 1,024 a block's set was half full, and a
/// rare word (`zanzibar`) still passed 8% of the blocks; at 2,048 it is 30%
/// full, and 0.24% pass (`benches/gram-fill.py` on the 1M bench tree).
pub(crate) const GRAM_BITS_LOG2: u32 = 11;
/// 64-bit words per block's trigram set.
pub(crate) const GRAM_WORDS: usize = (1 << GRAM_BITS_LOG2) / 64;

/// The trigram filter: per block of [`GRAM_BLOCK`] ids, a hashed set of
/// the trigrams of its names (bit `gram_bit(a, b, c)` set when some name
/// in the block holds the bytes `abc`). Stored by word, `cols[w][b]` being
/// word w of block b's set, so that testing a term's first word against
/// every block reads one column in order; stored by block, the test was a
/// cache miss per block (a 256-byte stride), 0.2 ms of a search that
/// matches nothing at a million entries.
#[derive(Default)]
pub(crate) struct Grams {
    pub(crate) cols: Vec<Vec<u64>>,
    pub(crate) blocks: usize,
}

impl Grams {
    pub(crate) fn with_blocks(blocks: usize) -> Self {
        Grams {
            cols: vec![vec![0; blocks]; GRAM_WORDS],
            blocks,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.blocks
    }

    /// Adds the trigrams of `names` to block `b` (names each followed by
    /// [`SEP`], which no term holds, so trigrams across names are left
    /// out), and each name's last two bytes with the SEP after them, for
    /// [`Snapshot::mark_tail`]: `ai/` for an `ext:ai` that `.ai` alone
    /// would let through a third of the blocks. Names with accents add
    /// the trigrams of their bare form too ([`strip_accents_bytes`]), so
    /// that `accents:ignore` can filter by the bare term (`cafe` passes the
    /// block holding `café`); plain queries only see a few more bits set.
    pub(crate) fn add(&mut self, b: usize, names: &[u8]) {
        self.add_grams(b, names);
        if !names.is_ascii()
            && let std::borrow::Cow::Owned(bare) = strip_accents_bytes(names)
        {
            self.add_grams(b, &bare);
        }
    }

    fn add_grams(&mut self, b: usize, names: &[u8]) {
        if b >= self.blocks {
            if self.cols.is_empty() {
                self.cols = vec![Vec::new(); GRAM_WORDS];
            }
            for c in &mut self.cols {
                c.resize(b + 1, 0);
            }
            self.blocks = b + 1;
        }
        for w in names.windows(3) {
            if w[0] != SEP && w[1] != SEP {
                let bit = gram_bit(w[0], w[1], w[2]);
                self.cols[bit / 64][b] |= 1 << (bit % 64);
            }
        }
    }

    /// The blocks holding every trigram of `term` (3+ bytes, with no
    /// [`SEP`] but maybe one at its end), ascending.
    pub(crate) fn candidates(&self, term: &[u8]) -> Vec<u32> {
        if self.blocks == 0 {
            return Vec::new();
        }
        let mut bits: Vec<(usize, u64)> = Vec::new();
        for w in term.windows(3) {
            let bit = gram_bit(w[0], w[1], w[2]);
            match bits.iter_mut().find(|(word, _)| *word == bit / 64) {
                Some((_, m)) => *m |= 1 << (bit % 64),
                None => bits.push((bit / 64, 1 << (bit % 64))),
            }
        }
        // The words with most bits first: they pass fewest blocks.
        bits.sort_by_key(|&(_, m)| std::cmp::Reverse(m.count_ones()));
        if bits.is_empty() {
            return (0..self.blocks as u32).collect();
        }
        // One pass over every block tests the first (up to) three words
        // together, without a branch: a word with one bit passes about a
        // third of the blocks (a set is 30% full), three together about
        // 3%. Testing one word and then the next on what it passed wrote a
        // third of the blocks out and read them back for each word: 216 µs
        // of a one-term search that matches nothing at a million entries,
        // which calls this twice (`benches/README.md`, search: the daemon's
        // part); 90 µs now.
        let first = bits.len().min(3);
        let col = |k: usize| -> (&[u64], u64) {
            let (w, m) = bits[k.min(first - 1)];
            (&self.cols[w][..self.blocks], m)
        };
        let ((c0, m0), (c1, m1), (c2, m2)) = (col(0), col(1), col(2));
        let mut out = vec![0u32; self.blocks];
        let mut n = 0;
        for (b, ((&x0, &x1), &x2)) in c0.iter().zip(c1).zip(c2).enumerate() {
            out[n] = b as u32;
            n += usize::from((x0 & m0 == m0) & (x1 & m1 == m1) & (x2 & m2 == m2));
        }
        out.truncate(n);
        for &(w, m) in &bits[first..] {
            let col = &self.cols[w];
            out.retain(|&b| col[b as usize] & m == m);
        }
        out
    }

    pub(crate) fn bytes(&self) -> usize {
        self.cols.iter().map(|c| c.capacity() * 8).sum()
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        for c in &mut self.cols {
            c.shrink_to_fit();
        }
    }
}

/// The filter bit of the trigram `abc`.
#[inline]
pub(crate) fn gram_bit(a: u8, b: u8, c: u8) -> usize {
    let x = u32::from(a) | u32::from(b) << 8 | u32::from(c) << 16;
    (x.wrapping_mul(0x9E37_79B1) >> (32 - GRAM_BITS_LOG2)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocks a term passes are those whose set holds every one of
    /// its trigrams' bits, tested block by block and bit by bit here.
    #[test]
    fn candidates_are_the_blocks_holding_every_trigram() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut rand = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let words = [
            "tax",
            "report",
            "zanzibar",
            "qqxjnomatch",
            "img_1",
            "ab",
            "café",
        ];
        let mut grams = Grams::default();
        let mut blocks: Vec<Vec<u8>> = Vec::new();
        for b in 0..700 {
            let mut names = Vec::new();
            for _ in 0..(rand() % 6) {
                names.extend_from_slice(words[(rand() % words.len() as u64) as usize].as_bytes());
                names.extend((0..rand() % 5).map(|_| b'a' + (rand() % 26) as u8));
                names.push(SEP);
            }
            blocks.push(names.clone());
            grams.add(b, &names);
        }
        let naive = |term: &[u8]| -> Vec<u32> {
            (0..grams.blocks as u32)
                .filter(|&b| {
                    term.windows(3).all(|w| {
                        let bit = gram_bit(w[0], w[1], w[2]);
                        grams.cols[bit / 64][b as usize] & (1 << (bit % 64)) != 0
                    })
                })
                .collect()
        };
        for term in [
            &b"tax"[..],
            b"taxa",
            b"report",
            b"zanzibar",
            b"qqxjnomatch",
            b"img_1",
            b"caf",
            "café".as_bytes(),
            b"abcdefghijklmnopqrstuvwxyz",
            b"zzz",
        ] {
            let got = grams.candidates(term);
            assert_eq!(got, naive(term), "{}", String::from_utf8_lossy(term));
            // And from the names themselves: every block with a name that
            // holds the term passes.
            for (b, names) in blocks.iter().enumerate() {
                if names
                    .split(|&c| c == SEP)
                    .any(|n| n.windows(term.len()).any(|w| w == term))
                {
                    assert!(
                        got.contains(&(b as u32)),
                        "{} is in block {b}",
                        String::from_utf8_lossy(term)
                    );
                }
            }
        }
        assert!(!grams.candidates(b"zanzibar").is_empty());
    }
}
