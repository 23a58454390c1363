//! Which ids have a slot in a side table, and which slot: a bitmap with the
//! count of set bits before each word, so that id i's slot is one popcount
//! away. A value that only some entries need (a folder's descendant range,
//! a name's original bytes) then costs 0.19 bytes an entry plus its own size
//! for the entries that have it, instead of its size for every entry.

/// The slot map over ids `0..len`. Slots are numbered in id order.
#[derive(Debug, Default)]
pub struct Slots {
    bits: Vec<u64>,
    /// `before[w]`: set bits in words `0..w`.
    before: Vec<u32>,
    len: usize,
    count: usize,
}

impl Slots {
    /// Ids covered (one past the largest).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Slots handed out.
    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.count
    }

    /// Covers one more id (the current `len`), with a slot when `slot`;
    /// returns that slot (the last).
    pub fn push(&mut self, slot: bool) -> Option<usize> {
        let (w, b) = (self.len / 64, self.len % 64);
        if b == 0 {
            self.bits.push(0);
            self.before.push(self.count as u32);
        }
        self.len += 1;
        if !slot {
            return None;
        }
        self.bits[w] |= 1 << b;
        self.count += 1;
        Some(self.count - 1)
    }

    /// Id i's slot, if it has one.
    #[inline]
    pub fn get(&self, i: usize) -> Option<usize> {
        if i >= self.len {
            return None;
        }
        let (w, b) = (i / 64, i % 64);
        let word = self.bits[w];
        if word >> b & 1 == 0 {
            return None;
        }
        Some(self.before[w] as usize + (word & ((1u64 << b) - 1)).count_ones() as usize)
    }

    /// Gives id i (below `len`, without a slot) a slot, and returns it: the
    /// caller inserts its value at that place in its table. Costs a pass
    /// over the words after i's.
    pub fn insert(&mut self, i: usize) -> usize {
        debug_assert!(i < self.len && self.get(i).is_none());
        let (w, b) = (i / 64, i % 64);
        self.bits[w] |= 1 << b;
        for n in &mut self.before[w + 1..] {
            *n += 1;
        }
        self.count += 1;
        self.get(i).expect("just set")
    }

    pub fn bytes(&self) -> usize {
        self.bits.capacity() * 8 + self.before.capacity() * 4
    }

    pub fn shrink_to_fit(&mut self) {
        self.bits.shrink_to_fit();
        self.before.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_id_order_through_pushes_and_inserts() {
        let mut s = Slots::default();
        // Ids 0..300 with a slot for every 7th: an independent list says
        // which slot each should have.
        let mut with: Vec<usize> = Vec::new();
        for i in 0..300 {
            let got = s.push(i % 7 == 0);
            if i % 7 == 0 {
                assert_eq!(got, Some(with.len()));
                with.push(i);
            } else {
                assert_eq!(got, None);
            }
        }
        let check = |s: &Slots, with: &[usize]| {
            for i in 0..s.len() + 70 {
                assert_eq!(s.get(i), with.iter().position(|&x| x == i), "id {i}");
            }
            assert_eq!(s.count(), with.len());
        };
        check(&s, &with);
        // Inserted ids, in and across words, the first and the last.
        for i in [1, 62, 64, 150, 299, 2] {
            let slot = s.insert(i);
            with.push(i);
            with.sort_unstable();
            assert_eq!(Some(slot), with.iter().position(|&x| x == i));
            check(&s, &with);
        }
        assert_eq!(s.len(), 300);
    }
}
