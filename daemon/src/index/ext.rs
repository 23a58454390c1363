//! Extensions as map keys: a name's extension packed into integers, and a
//! fast hasher for such keys (the snapshot's kind classes and the map's
//! per-folder extension counts look one up per file).

/// The longest extension [`ext_key`] keeps whole.
pub(crate) const MAX_KEYED_EXT: usize = 12;

/// An extension packed into a map key: up to 8 bytes fit in the number
/// (names hold no NUL, so zero padding is unambiguous); longer ones, up to
/// [`MAX_KEYED_EXT`] (see [`extension`]), use the remaining bytes too.
#[inline]
pub(crate) fn ext_key(ext: &[u8]) -> (u64, u32) {
    let mut lo = [0u8; 8];
    let mut hi = [0u8; 4];
    let n = ext.len().min(8);
    lo[..n].copy_from_slice(&ext[..n]);
    if ext.len() > 8 {
        let m = (ext.len() - 8).min(4);
        hi[..m].copy_from_slice(&ext[8..8 + m]);
    }
    (u64::from_le_bytes(lo), u32::from_le_bytes(hi))
}

/// Fibonacci hashing of integer keys (not for untrusted keys: extensions
/// come from the user's own file names).
#[derive(Default)]
pub(crate) struct MulHasher(u64);

impl std::hash::Hasher for MulHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
}
